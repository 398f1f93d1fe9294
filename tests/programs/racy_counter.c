/* Two unsynchronised increments: an update can be lost. */
#include <assert.h>
#include <pthread.h>

volatile int counter;

static void *inc(void *arg) {
    (void)arg;
    counter++;
    return 0;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, inc, 0);
    pthread_create(&b, 0, inc, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    assert(counter == 2);
    return 0;
}
