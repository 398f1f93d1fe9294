/* Peterson's mutual exclusion with spin loops. Correct under SC; under TSO the entry store can
 * wait in the buffer while the other thread's flag is read, unless FULL_FENCE; under PSO the
 * two entry stores can also reach memory out of order, unless STORE_FENCE too. Entering the
 * critical section twice is caught with a locked increment, which sees memory. */
#include <assert.h>
#include <pthread.h>

volatile int flag[2], turn;
int in_cs;

static void *worker(void *arg) {
    int me = (int)(long)arg, other = 1 - me;
    flag[me] = 1;
#ifdef STORE_FENCE
    __asm__ volatile("sfence" ::: "memory");
#endif
    turn = other;
#ifdef FULL_FENCE
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
