/* A read that must see the last of three writes to y, two of them by threads that nothing
 * orders: `reader` reads y = 3 while `writer` read the increment of x. Sequential consistency
 * allows it (adder, then writer, then reader), so release/acquire does too: 8 weak traces, the
 * assertion fails in one. */
#include <assert.h>
#include <pthread.h>

volatile int x, y;
int seen_y, seen_x;

static void *reader(void *arg) {
    seen_y = y;
    return arg;
}

static void *adder(void *arg) {
    y = 1;
    __atomic_fetch_add(&x, 1, __ATOMIC_SEQ_CST);
    return arg;
}

static void *writer(void *arg) {
    y = 2;
    seen_x = x;
    y = 3;
    return arg;
}

int main(void) {
    pthread_t t[3];
    pthread_create(&t[0], 0, reader, 0);
    pthread_create(&t[1], 0, adder, 0);
    pthread_create(&t[2], 0, writer, 0);
    for (int i = 0; i < 3; i++) pthread_join(t[i], 0);
    assert(!(seen_y == 3 && seen_x == 1));
    return 0;
}
