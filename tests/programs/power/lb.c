/* Load buffering: each thread reads one variable, then writes the other. POWER may let each
 * read see the other thread's later write (the writes do not depend on the reads); sc and tso
 * never do. Expected: error under power only. */
#include <assert.h>
#include <pthread.h>

volatile int x, y;
int r0, r1;

static void *t0(void *arg) {
    r0 = x;
    y = 1;
    return arg;
}

static void *t1(void *arg) {
    r1 = y;
    x = 1;
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
