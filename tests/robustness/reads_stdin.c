/* Reads standard input, which must be at its end (never the user's terminal), then races. */
#include <assert.h>
#include <pthread.h>
#include <unistd.h>

volatile int counter;

static void *inc(void *arg) {
    counter++;
    return arg;
}

int main(void) {
    char c;
    if (read(0, &c, 1) != 0) return 3;
    pthread_t a, b;
    pthread_create(&a, 0, inc, 0);
    pthread_create(&b, 0, inc, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    assert(counter == 2);
    return 0;
}
