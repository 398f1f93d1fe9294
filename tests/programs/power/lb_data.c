/* Load buffering where each write's value is computed from what its thread read (a data
 * dependency, which POWER respects, although the value is always 1): neither read can see the
 * other thread's write. Expected: no error under power.
 * With -DOWN_MEMORY the first thread's load instruction runs once more, on a variable of its
 * own stack (no event), before the write, whose value then comes from that: no dependency on
 * the shared read, and POWER lets both reads see 1 (an error). */
#include <assert.h>
#include <pthread.h>

volatile int x, y;
int r0, r1;
#ifdef OWN_MEMORY
volatile int rounds = 2;
#else
volatile int rounds = 1;
#endif

/* 1, computed from v (herd's false dependency: xor, then add) */
static inline int one_from(int v) {
    int r;
    __asm__("xor %0,%1,%1\n\taddi %0,%0,1" : "=&r"(r) : "r"(v));
    return r;
}

/* *from[0], ..., *from[n - 1] by one load instruction (a loop the compiler cannot peel): the
 * last value, and the first in *first */
static inline int load_each(volatile int *const *from, int n, int *first) {
    int v, f = 0;
    long i = 0, t, p;
    __asm__ volatile("1:\n\t"
                     "sldi %3,%2,3\n\t"
                     "ldx %4,%5,%3\n\t"
                     "lwz %0,0(%4)\n\t"
                     "cmpdi %2,0\n\t"
                     "bne 2f\n\t"
                     "mr %1,%0\n"
                     "2:\n\t"
                     "addi %2,%2,1\n\t"
                     "cmpd %2,%6\n\t"
                     "blt 1b"
                     : "=&r"(v), "+&r"(f), "+&r"(i), "=&r"(t), "=&b"(p)
                     : "r"(from), "r"((long)n)
                     : "cr0", "memory");
    *first = f;
    return v;
}

static void *t0(void *arg) {
    volatile int mine = 1;
    volatile int *const from[2] = {&x, &mine};
    int first;
    int v = load_each(from, rounds, &first);
    r0 = first;
    y = one_from(v);
    return arg;
}

static void *t1(void *arg) {
    r1 = y;
    x = one_from(r1);
    return arg;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, t0, 0);
    pthread_create(&b, 0, t1, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    assert(!(r0 == 1 && r1 == 1));
    return 0;
}
