/* A one-slot handoff with a condition variable, waited for in a loop: correct. */
#include <assert.h>
#include <pthread.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int ready, value;

static void *producer(void *arg) {
    (void)arg;
    pthread_mutex_lock(&m);
    value = 42;
    ready = 1;
    pthread_cond_signal(&c);
    pthread_mutex_unlock(&m);
    return 0;
}

static void *consumer(void *arg) {
    (void)arg;
    pthread_mutex_lock(&m);
    while (!ready) pthread_cond_wait(&c, &m);
    assert(value == 42);
    pthread_mutex_unlock(&m);
    return 0;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, consumer, 0);
    pthread_create(&b, 0, producer, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    return 0;
}
