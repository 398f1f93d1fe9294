/* Drepper's futex mutex ("Futexes Are Tricky", mutex2); -DBUGGY takes the lock with 1 in the
 * contended path, so an unlock can skip the wake a sleeper needs. */
#include <assert.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

static atomic_int m;
static int counter;

static void wait_on(atomic_int *a, int v) { syscall(SYS_futex, a, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0); }
static void wake_one(atomic_int *a) { syscall(SYS_futex, a, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0); }

static void lock(void) {
    int c = 0;
    if (atomic_compare_exchange_strong(&m, &c, 1)) return;
#ifdef BUGGY
    if (c != 2) c = atomic_exchange(&m, 1);
    while (c != 0) { wait_on(&m, 1); c = atomic_exchange(&m, 1); }
#else
    if (c != 2) c = atomic_exchange(&m, 2);
    while (c != 0) { wait_on(&m, 2); c = atomic_exchange(&m, 2); }
#endif
}

static void unlock(void) {
    if (atomic_fetch_sub(&m, 1) != 1) {
        atomic_store(&m, 0);
        wake_one(&m);
    }
}

static void *worker(void *arg) {
    lock();
    counter++;
    unlock();
    return arg;
}

int main(void) {
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, worker, 0);
    for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
    assert(counter == 2);
    return 0;
}
