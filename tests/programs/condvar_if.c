/* A consumer that waits for `ready` under `if` instead of `while`: a spurious wake-up (POSIX
 * allows them) lets it past before the producer sets the flag. -DWHILE: the correct loop. */
#include <assert.h>
#include <pthread.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int ready;

static void *consumer(void *arg) {
    pthread_mutex_lock(&m);
#ifdef WHILE
    while (!ready)
#else
    if (!ready)
#endif
        pthread_cond_wait(&c, &m);
    assert(ready);
    pthread_mutex_unlock(&m);
    return arg;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, consumer, 0);
    pthread_mutex_lock(&m);
    ready = 1;
    pthread_cond_signal(&c);
    pthread_mutex_unlock(&m);
    pthread_join(t, 0);
    return 0;
}
