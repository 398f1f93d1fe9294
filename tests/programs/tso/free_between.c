/* Store buffering across a free: the store into the block comes before the racy store, so
 * the free waits for the first alone and the second may still be buffered at the load after
 * it. The error is reachable under TSO and PSO, and the free is in the counterexample. */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

static int *volatile block;
static int x, y, r1, r2;

static void *other(void *arg) {
    (void)arg;
    y = 1;
    r2 = x;
    return 0;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, other, 0);
    block = malloc(sizeof *block);
    *block = 1;
    x = 1;
    free(block);
    r1 = y;
    pthread_join(t, 0);
    assert(!(r1 == 0 && r2 == 0));
    return 0;
}
