/* Two atomic increments of z (load-reserve/store-conditional loops), the last thread's after
 * one of x; a reader of z in between, which then stores to z. Under power the last thread's
 * increment may come first, and both the first thread's load-reserve and the reader read it:
 * a graph the exploration makes while that store-conditional fails in the running execution
 * (another pair took its source), so the write has not run when the reader, replayed, reads
 * it — its bytes must be known all the same (they were not: the reader got 0, and the state
 * where it saw 1 was never reached). No error under any model. */
#include <pthread.h>

extern void __smc_observe(unsigned, unsigned long long) __attribute__((weak));

volatile int x, z;
int seen[3][3];

static void *t0(void *arg) {
    seen[0][0] = __atomic_fetch_add(&z, 1, __ATOMIC_RELAXED);
    return arg;
}

static void *t1(void *arg) {
    seen[1][2] = z;
    z = 2;
    return arg;
}

static void *t2(void *arg) {
    seen[2][0] = __atomic_fetch_add(&x, 1, __ATOMIC_RELAXED);
    seen[2][1] = __atomic_fetch_add(&z, 1, __ATOMIC_RELAXED);
    return arg;
}

int main(void) {
    pthread_t t[3];
    void *(*f[])(void *) = {t0, t1, t2};
    for (int i = 0; i < 3; i++) pthread_create(&t[i], 0, f[i], 0);
    for (int i = 0; i < 3; i++) pthread_join(t[i], 0);
    for (int i = 0; i < 9; i++)
        if (__smc_observe) __smc_observe(i, seen[i / 3][i % 3]);
    if (__smc_observe) __smc_observe(9, x);
    if (__smc_observe) __smc_observe(11, z);
    return 0;
}
