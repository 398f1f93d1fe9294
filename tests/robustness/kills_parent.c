/* Kills its parent process (the checker's fork server) in the middle of an execution. */
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

volatile int flag;

static void *t(void *arg) {
    flag = 1;
    kill(getppid(), SIGKILL);
    return arg;
}

int main(void) {
    pthread_t x;
    pthread_create(&x, 0, t, 0);
    pthread_join(x, 0);
    return flag - 1;
}
