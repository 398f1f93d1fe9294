/* main leaves with pthread_exit while a detached thread still runs; the process ends when it
 * does. */
#include <pthread.h>

volatile int flag;

static void *t(void *arg) {
    flag = 1;
    return arg;
}

int main(void) {
    pthread_t x;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_create(&x, &attr, t, 0);
    flag = 2;
    pthread_exit(0);
}
