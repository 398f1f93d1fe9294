/* A thread fails its assertion while the others may still run (x = 1 before its load): with
 * --keep-going, each execution that ends in the assertion counts, as each that ends well.
 * The executions that end well are those where the load reads 0: one per order of the two
 * stores to y where coherence is explored (sc, tso, pso), one under ra. */
#include <assert.h>
#include <pthread.h>

static volatile int x, y;

static void *set_x(void *arg) {
    x = 1;
    return arg;
}

static void *check_x(void *arg) {
    y = 1;
    int seen = x;
    assert(seen == 0);
    return arg;
}

static void *set_y(void *arg) {
    y = 2;
    return arg;
}

int main(void) {
    pthread_t a, b, c;
    pthread_create(&a, NULL, set_x, NULL);
    pthread_create(&b, NULL, check_x, NULL);
    pthread_create(&c, NULL, set_y, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    pthread_join(c, NULL);
    return 0;
}
