/* __VERIFIER_nondet_* values are choices the checker explores, in main and in a thread: the
 * error needs x = -1, b = 1 and seen = 2, values outside the default domain {0, 1}. */
#include <pthread.h>
#include "smc_verifier.h"

static unsigned seen;

static void *pick(void *arg) {
    seen = __VERIFIER_nondet_uint();
    return arg;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, pick, 0);
    int x = __VERIFIER_nondet_int();
    _Bool b = __VERIFIER_nondet_bool();
    pthread_join(t, 0);
    if (x == -1 && b && seen == 2) __VERIFIER_error();
    return 0;
}
