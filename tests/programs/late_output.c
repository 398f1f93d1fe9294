/* Prints only in its second execution (the one where main reads the setter's store), to stdout
 * and then, failing its assertion, to stderr. The worker's descriptor watch, on after the first
 * execution in the tests, also watches the output then (nothing was printed before it): the
 * report must still show what this execution printed. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

int x;

static void *setter(void *arg) {
    x = 1;
    return arg;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, setter, 0);
    int seen = x;
    if (seen) {
        printf("main saw the setter's store\n");
        fflush(stdout);
    }
    pthread_join(t, 0);
    assert(!seen);
    return 0;
}
