/* A one-slot queue between two producers and two consumers, guarded by one mutex and one
 * condition variable. With pthread_cond_signal (-DSIGNAL) a put may wake the other producer
 * instead of a consumer: every thread then waits, a deadlock. With pthread_cond_broadcast,
 * as here by default, everyone rechecks and the queue drains. */
#include <assert.h>
#include <pthread.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int full, slot, taken_sum;

#ifdef SIGNAL
#define NOTIFY pthread_cond_signal
#else
#define NOTIFY pthread_cond_broadcast
#endif

static void *producer(void *arg) {
    pthread_mutex_lock(&m);
    while (full)
        pthread_cond_wait(&changed, &m);
    slot = (int)(long)arg;
    full = 1;
    NOTIFY(&changed);
    pthread_mutex_unlock(&m);
    return 0;
}

static void *consumer(void *arg) {
    pthread_mutex_lock(&m);
    while (!full)
        pthread_cond_wait(&changed, &m);
    taken_sum += slot;
    full = 0;
    NOTIFY(&changed);
    pthread_mutex_unlock(&m);
    return arg;
}

int main(void) {
    pthread_t t[4];
    pthread_create(&t[0], 0, consumer, 0);
    pthread_create(&t[1], 0, consumer, 0);
    pthread_create(&t[2], 0, producer, (void *)1L);
    pthread_create(&t[3], 0, producer, (void *)2L);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], 0);
    assert(taken_sum == 3);
    return 0;
}
