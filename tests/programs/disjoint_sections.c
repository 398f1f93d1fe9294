/* Atomic sections are ordered only where they touch the same memory: one() and two() update
 * different globals, so their sections are independent (one execution); three() reads what
 * one() writes, so those two sections are ordered both ways. Built with -DOVERLAP, two()
 * touches a as well. */
#include <pthread.h>
#include "smc_verifier.h"

static int a, b, seen;

static void *one(void *arg) {
    __VERIFIER_atomic_begin();
    a = a + 1;
    a = a + 1;
    __VERIFIER_atomic_end();
    return arg;
}

static void *two(void *arg) {
    __VERIFIER_atomic_begin();
#ifdef OVERLAP
    a = a + 1;
#endif
    b = b + 1;
    b = b + 1;
    __VERIFIER_atomic_end();
    return arg;
}

#ifdef READER
static void *three(void *arg) {
    __VERIFIER_atomic_begin();
    seen = a;
    __VERIFIER_atomic_end();
    /* never half an update */
    if (seen == 1) __VERIFIER_error();
    return arg;
}
#endif

int main(void) {
    pthread_t t1, t2, t3;
    pthread_create(&t1, 0, one, 0);
    pthread_create(&t2, 0, two, 0);
#ifdef READER
    pthread_create(&t3, 0, three, 0);
#endif
    pthread_join(t1, 0);
    pthread_join(t2, 0);
#ifdef READER
    pthread_join(t3, 0);
#endif
#ifdef OVERLAP
    if (a + b != 5) __VERIFIER_error();
#else
    if (a + b != 4) __VERIFIER_error();
#endif
    return 0;
}
