/* Atomic sections with nothing visible inside (SV-COMP's generated tasks have them): no
 * section at all, so the two threads, which touch disjoint globals, are independent. */
#include <pthread.h>
#include "smc_verifier.h"

static int a, b;

static void *one(void *arg) {
    __VERIFIER_atomic_begin();
    __VERIFIER_atomic_end();
    a = 1;
    return arg;
}

static void *two(void *arg) {
    __VERIFIER_atomic_begin();
    __VERIFIER_atomic_end();
    b = 1;
    return arg;
}

int main(void) {
    pthread_t t1, t2;
    pthread_create(&t1, 0, one, 0);
    pthread_create(&t2, 0, two, 0);
    pthread_join(t1, 0);
    pthread_join(t2, 0);
    if (a + b != 2) __VERIFIER_error();
    return 0;
}
