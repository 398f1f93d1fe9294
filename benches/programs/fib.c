/* The fib benchmark of SV-COMP (pthread/fib_bench): two threads add each other's variable NUM
 * times. The largest value either can reach is the Fibonacci number F(2 NUM + 2); the check
 * that neither exceeds it holds ("true" version). With -DJOIN main checks after joining both
 * threads; without, it checks while they run.
 *
 *     gcc -O2 -g -pthread -DNUM=3 -DJOIN benches/programs/fib.c -o /tmp/fib && smc-run /tmp/fib */
#include <assert.h>
#include <pthread.h>

#ifndef NUM
#define NUM 3
#endif
/* -DBOUND=N: a bound below F(2 NUM + 2) makes the check fail in a few interleavings only */
#ifndef BOUND
#define BOUND fib(2 * NUM + 2)
#endif

volatile int i = 1, j = 1;

static void *t1(void *arg) {
    for (int k = 0; k < NUM; k++) i = i + j;
    return arg;
}

static void *t2(void *arg) {
    for (int k = 0; k < NUM; k++) j = j + i;
    return arg;
}

static int fib(int n) { return n <= 2 ? 1 : fib(n - 1) + fib(n - 2); }

int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, t1, 0);
    pthread_create(&b, 0, t2, 0);
#ifdef JOIN
    pthread_join(a, 0);
    pthread_join(b, 0);
#endif
    int bound = BOUND;
    int vi = i, vj = j;
    assert(vi <= bound && vj <= bound);
    return 0;
}
