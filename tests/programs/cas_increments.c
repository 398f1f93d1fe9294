/* Two threads increment a shared counter N times each with a compare-exchange loop, the way
 * lock-free code does: load, then compare-exchange until no other increment came between. The
 * counter ends at 2N. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>

#ifndef N
#define N 2
#endif

static atomic_long counter;

static void *increment(void *arg) {
    for (int i = 0; i < N; i++) {
        long seen = atomic_load(&counter);
        while (!atomic_compare_exchange_weak(&counter, &seen, seen + 1)) {
        }
    }
    return arg;
}

int main(void) {
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, increment, 0);
    for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
    assert(atomic_load(&counter) == 2 * N);
    return 0;
}
