/* Dekker's mutual exclusion. Correct under SC; under TSO and PSO the flag store can wait in the
 * buffer while the other flag is read, unless FULL_FENCE. */
#include <assert.h>
#include <pthread.h>

volatile int flag[2], turn;
int in_cs;

static void fence(void) {
#ifdef FULL_FENCE
    __asm__ volatile("mfence" ::: "memory");
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
