/* A test-and-set spin lock, written the usual ways: THREADS threads each take it ROUNDS times
 * to increment a plain counter. A failed attempt writes back the value it found (1 over 1), so
 * spinning leaves memory as it was.
 *   -DFLAG   atomic_flag_test_and_set / atomic_flag_clear (seq_cst: the clear is an xchg)
 *   default  atomic_exchange (acquire) / a release store (a plain mov on x86: no store
 *            fence, so under pso the counter's store may reach memory after the unlock)
 *   -DRACY   the last thread increments without the lock */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>

#ifndef THREADS
#define THREADS 2
#endif
#ifndef ROUNDS
#define ROUNDS 1
#endif

#ifdef FLAG
static atomic_flag lock = ATOMIC_FLAG_INIT;
static void acquire(void) { while (atomic_flag_test_and_set(&lock)) { } }
static void release(void) { atomic_flag_clear(&lock); }
#else
static atomic_int lock;
static void acquire(void) { while (atomic_exchange_explicit(&lock, 1, memory_order_acquire)) { } }
static void release(void) { atomic_store_explicit(&lock, 0, memory_order_release); }
#endif

static int counter;

static void *worker(void *arg) {
    int locked = 1;
#ifdef RACY
    locked = (long)arg != THREADS - 1;
#endif
    for (int i = 0; i < ROUNDS; i++) {
        if (locked) acquire();
        int seen = counter;
        counter = seen + 1;
        if (locked) release();
    }
    return 0;
}

int main(void) {
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++) pthread_create(&t[i], 0, worker, (void *)i);
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], 0);
    assert(counter == THREADS * ROUNDS);
    return 0;
}
