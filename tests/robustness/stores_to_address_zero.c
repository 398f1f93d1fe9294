/* A store to a constant address, 0, in a position-independent program: the address is not
 * relative to where the program is loaded. Under tso the store is buffered; the crash must
 * still be reported at address 0. */
#include <pthread.h>

volatile int flag;

static void *setter(void *arg) {
    flag = 1;
    return arg;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, setter, 0);
    if (!flag) *(volatile int *)0 = 1;
    pthread_join(t, 0);
    return 0;
}
