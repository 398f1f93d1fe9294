/* Peterson's mutual exclusion, two threads with spin loops.
 *
 *     smc-run --model tso examples/peterson.c
 *
 * Correct under SC. Under TSO the entry stores can wait in the buffer while the other thread's
 * flag is read: build with -DTSO_FENCES (an mfence after them) for TSO. Under PSO the two entry
 * stores can also reach memory out of order (the turn before the flag): build with -DFENCES
 * (an sfence between them as well) for PSO. Entering the critical section twice is caught with
 * a locked increment, which sees memory (a plain in_cs++ would be hidden by forwarding).
 * On POWER (powerpc64le-linux-gnu-gcc, checked under power, its default model) -DFENCES puts a
 * sync between the entry stores, one after them and an lwsync before the exit's store: without
 * any of them, two threads get in. */
#if defined(FENCES) && !defined(TSO_FENCES)
#define TSO_FENCES
#endif
#include <assert.h>
#include <pthread.h>

volatile int flag[2], turn;
int in_cs;

/* The critical section before the exit's stores: POWER's lwsync (x86-64 keeps stores in
 * order: nothing there) */
static void release_fence(void) {
#ifdef FENCES
    __atomic_thread_fence(__ATOMIC_RELEASE);
#endif
}

static void *worker(void *arg) {
    int me = (int)(long)arg, other = 1 - me;
    flag[me] = 1;
#ifdef FENCES
#if defined(__x86_64__)
    __asm__ volatile("sfence" ::: "memory");
#else
    /* not POWER's lwsync: with it the other thread's turn store can still come between this
     * flag store and this thread's read of the other's flag (herd's R+lwsync+sync) */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
#endif
    turn = other;
#ifdef TSO_FENCES
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* mfence on x86-64, sync on POWER */
#endif
    while (flag[other] == 1 && turn == other) {
    }
    assert(__atomic_fetch_add(&in_cs, 1, __ATOMIC_SEQ_CST) == 0);
    __atomic_fetch_sub(&in_cs, 1, __ATOMIC_SEQ_CST);
    release_fence();
    flag[me] = 0;
    return 0;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, worker, (void *)0L);
    pthread_create(&b, 0, worker, (void *)1L);
    pthread_join(a, 0);
    pthread_join(b, 0);
    return 0;
}
