/* Prints what it sees before failing: the counterexample shows the output of that execution. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

volatile int counter;

static void *inc(void *arg) {
    counter++;
    return arg;
}

int main(void) {
    setvbuf(stdout, 0, _IONBF, 0);
    printf("starting\n");
    pthread_t a, b;
    pthread_create(&a, 0, inc, 0);
    pthread_create(&b, 0, inc, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    printf("counter is %d\n", counter);
    assert(counter == 2);
    return 0;
}
