/* Dekker's mutual exclusion, two threads with spin loops.
 *
 *     smc-run --model tso examples/dekker.c
 *
 * Correct under SC. Under TSO and PSO a thread's flag store can wait in its buffer while it
 * reads the other thread's flag, so both enter; build with -DFENCES (an mfence after each flag
 * store) to make it correct under both. On POWER (powerpc64le-linux-gnu-gcc, checked under
 * power, its default model) -DFENCES is a sync after each flag store and an lwsync before the
 * exit's stores (without it, the exit's flag store can be seen before the critical section's
 * last write). */
#include <assert.h>
#include <pthread.h>

volatile int flag[2], turn;
int in_cs;

static void fence(void) {
#ifdef FENCES
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* mfence on x86-64, sync on POWER */
#endif
}

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
    fence();
    while (flag[other]) {
        if (turn != me) {
            flag[me] = 0;
            while (turn != me) {
            }
            flag[me] = 1;
            fence();
        }
    }
    assert(__atomic_fetch_add(&in_cs, 1, __ATOMIC_SEQ_CST) == 0);
    __atomic_fetch_sub(&in_cs, 1, __ATOMIC_SEQ_CST);
    release_fence();
    turn = other;
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
