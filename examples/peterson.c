/* Peterson's mutual exclusion, two threads with spin loops.
 *
 *     smc-run --model tso examples/peterson.c
 *
 * Correct under SC. Under TSO the entry stores can wait in the buffer while the other thread's
 * flag is read: build with -DTSO_FENCES (an mfence after them) for TSO. Under PSO the two entry
 * stores can also reach memory out of order (the turn before the flag): build with -DFENCES
 * (an sfence between them as well) for PSO. Entering the critical section twice is caught with
 * a locked increment, which sees memory (a plain in_cs++ would be hidden by forwarding). */
#if defined(FENCES) && !defined(TSO_FENCES)
#define TSO_FENCES
#endif
#include <assert.h>
#include <pthread.h>

volatile int flag[2], turn;
int in_cs;

static void *worker(void *arg) {
    int me = (int)(long)arg, other = 1 - me;
    flag[me] = 1;
#ifdef FENCES
    __asm__ volatile("sfence" ::: "memory");
#endif
    turn = other;
#ifdef TSO_FENCES
    __asm__ volatile("mfence" ::: "memory");
#endif
    while (flag[other] == 1 && turn == other) {
    }
    assert(__atomic_fetch_add(&in_cs, 1, __ATOMIC_SEQ_CST) == 0);
    __atomic_fetch_sub(&in_cs, 1, __ATOMIC_SEQ_CST);
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
