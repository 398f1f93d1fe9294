/* Arms alarm() and waits for it: SIGALRM ends the process, which is a crash. */
#include <pthread.h>
#include <unistd.h>

volatile int flag;

static void *t(void *arg) {
    flag = 1;
    return arg;
}

int main(void) {
    pthread_t x;
    pthread_create(&x, 0, t, 0);
    pthread_join(x, 0);
    alarm(1);
    pause();
    return 0;
}
