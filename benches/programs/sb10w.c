/* RSMC's SB+10W (CAV 2016): two threads enter as in Dekker's algorithm (set my flag, read the
 * other's) and whoever finds the other's flag clear stores 10 values to one location. With
 * -DSYNCS a `sync` between the flag's store and the load: at most one thread enters, 3
 * executions under power. Without: both may enter, and every interleaving of their 10 stores
 * in coherence order is an execution (184,759 under power). */
#include <pthread.h>

#ifndef STORES
#define STORES 10
#endif

volatile int flag0, flag1, x;

static void fence(void) {
#ifdef SYNCS
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

static void *t0(void *arg) {
    flag0 = 1;
    fence();
    if (flag1 == 0)
        for (int i = 1; i <= STORES; i++)
            x = i;
    return arg;
}

static void *t1(void *arg) {
    flag1 = 1;
    fence();
    if (flag0 == 0)
        for (int i = 1; i <= STORES; i++)
            x = 100 + i;
    return arg;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, t0, 0);
    pthread_create(&b, 0, t1, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    return 0;
}
