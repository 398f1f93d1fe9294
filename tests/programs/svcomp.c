/* SV-COMP conventions: an atomic section makes the check-then-act safe; assume prunes. */
#include <pthread.h>
#include "smc_verifier.h"

int x, taken;

static void *grab(void *arg) {
    (void)arg;
    __VERIFIER_atomic_begin();
    if (!taken) { /* checked and set without interruption */
        taken = 1;
        x++;
    }
    __VERIFIER_atomic_end();
    return 0;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, grab, 0);
    pthread_create(&b, 0, grab, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    __VERIFIER_assume(x >= 0);
    if (x != 1) __VERIFIER_error();
    return 0;
}
