/* A spin lock on lock cmpxchg, released with a plain store: mutual exclusion holds under
 * TSO and PSO (locked instructions drain the buffer; the release store reaches memory after
 * the critical section's stores... under PSO only because the counter is read back under it). */
#include <assert.h>
#include <pthread.h>

static int lock;
static volatile int counter;

static void acquire(void) {
    int expected = 0;
    while (!__atomic_compare_exchange_n(&lock, &expected, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) expected = 0;
}

static void release(void) { __atomic_store_n(&lock, 0, __ATOMIC_SEQ_CST); }

static void *worker(void *arg) {
    (void)arg;
    acquire();
    counter = counter + 1;
    release();
    return 0;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, worker, 0);
    pthread_create(&b, 0, worker, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    assert(counter == 2);
    return 0;
}
