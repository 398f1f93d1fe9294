/* main returns without joining: the thread may or may not have run its store. */
#include <pthread.h>

volatile int flag;

static void *t(void *arg) {
    flag = 1;
    return arg;
}

int main(void) {
    pthread_t x;
    pthread_create(&x, 0, t, 0);
    return 0;
}
