/* 2+2W: each thread writes both locations, in opposite orders. Without fences POWER may keep
 * both threads' first store last in coherence order: x ends 1 and y ends 1, which no
 * interleaving gives. The counterexample shows the coherence order of x and y. */
#include <assert.h>
#include <pthread.h>

volatile int x, y;

static void *t1(void *arg) {
    x = 1;
    y = 2;
    return arg;
}

static void *t2(void *arg) {
    y = 1;
    x = 2;
    return arg;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, t1, 0);
    pthread_create(&b, 0, t2, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    assert(!(x == 1 && y == 1));
    return 0;
}
