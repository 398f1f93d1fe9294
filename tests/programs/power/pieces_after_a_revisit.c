/* Two atomic increments of z (load-reserve/store-conditional loops) and two plain stores to z;
 * each thread records what it read in seen[], and the compiler stores two of the last thread's
 * entries with one 8-byte store, which main reads as two 4-byte ones (an access in pieces).
 * Under power a revisit keeps the last `z = 2` and refills the places before it: after the
 * 8-byte store the replay must go on with that kept store (it did not, and the execution ended
 * in a deadlock no thread was in). No error under any model. */
#include <pthread.h>

extern void __smc_observe(unsigned, unsigned long long) __attribute__((weak));

volatile int y, z;
int seen[3][3];

static void *t0(void *arg) {
    seen[0][0] = y;
    return arg;
}

static void *t1(void *arg) {
    seen[1][0] = y;
    seen[1][1] = __atomic_fetch_add(&z, 1, __ATOMIC_RELAXED);
    return arg;
}

static void *t2(void *arg) {
    int c = __atomic_fetch_add(&z, 1, __ATOMIC_RELAXED);
    z = 2;
    z = 2;
    seen[2][0] = 0;
    seen[2][1] = 0;
    seen[2][2] = c;
    return arg;
}

int main(void) {
    pthread_t t[3];
    void *(*f[])(void *) = {t0, t1, t2};
    for (int i = 0; i < 3; i++) pthread_create(&t[i], 0, f[i], 0);
    for (int i = 0; i < 3; i++) pthread_join(t[i], 0);
    for (int i = 0; i < 9; i++)
        if (__smc_observe) __smc_observe(i, seen[i / 3][i % 3]);
    if (__smc_observe) __smc_observe(9, z);
    return 0;
}
