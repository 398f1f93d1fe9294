/* Integer division by a shared value that another thread may not have set yet. */
#include <pthread.h>

volatile int divisor;
volatile int result;

static void *setter(void *arg) {
    divisor = 4;
    return arg;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, setter, 0);
    result = 100 / divisor;
    pthread_join(t, 0);
    return 0;
}
