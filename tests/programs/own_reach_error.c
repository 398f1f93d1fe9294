/* SV-COMP's convention with a reach_error the program defines itself, empty: reaching it is
 * the error, although it does nothing (the checker hooks the function). */
#include <pthread.h>
#include <stdlib.h>

void reach_error() {}

int x;

static void *set(void *arg) {
    x = 1;
    return arg;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, set, 0);
    if (x == 1) {
        reach_error();
        abort();
    }
    pthread_join(t, 0);
    return 0;
}
