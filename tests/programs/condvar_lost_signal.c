/* The waiter does not check a predicate: if the signal comes first it waits forever. */
#include <pthread.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;

static void *waiter(void *arg) {
    (void)arg;
    pthread_mutex_lock(&m);
    pthread_cond_wait(&c, &m);
    pthread_mutex_unlock(&m);
    return 0;
}

static void *signaller(void *arg) {
    (void)arg;
    pthread_mutex_lock(&m);
    pthread_cond_signal(&c);
    pthread_mutex_unlock(&m);
    return 0;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, waiter, 0);
    pthread_create(&b, 0, signaller, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    return 0;
}
