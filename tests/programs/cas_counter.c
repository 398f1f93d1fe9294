/* Increments with a lock cmpxchg retry loop: never lost. */
#include <assert.h>
#include <pthread.h>

int counter;

static void *inc(void *arg) {
    (void)arg;
    int old = __atomic_load_n(&counter, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&counter, &old, old + 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
    }
    return 0;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, inc, 0);
    pthread_create(&b, 0, inc, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    assert(counter == 2);
    return 0;
}
