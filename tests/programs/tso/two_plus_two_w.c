/* 2+2W: each thread writes both locations in opposite orders. Ending with x == 1 and y == 1
 * needs both threads' stores to reach memory out of order: PSO only. */
#include <assert.h>
#include <pthread.h>

volatile int x, y;

static void *t1(void *arg) {
    (void)arg;
    x = 1;
    y = 2;
    return 0;
}

static void *t2(void *arg) {
    (void)arg;
    y = 1;
    x = 2;
    return 0;
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
