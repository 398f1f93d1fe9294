/* A thread sleeps in the kernel without touching shared memory: a hang under --exec-timeout. */
#include <pthread.h>
#include <unistd.h>

volatile int flag;

static void *sleeper(void *arg) {
    for (;;) sleep(1000);
    return arg;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, sleeper, 0);
    flag = 1;
    pthread_join(t, 0);
    return 0;
}
