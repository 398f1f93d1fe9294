/* raise(SIGKILL) in one order of two threads: a crash nobody can catch, still reported. */
#include <pthread.h>
#include <signal.h>

volatile int flag;

static void *t(void *arg) {
    if (flag) raise(SIGKILL);
    return arg;
}

int main(void) {
    pthread_t x;
    pthread_create(&x, 0, t, 0);
    flag = 1;
    pthread_join(x, 0);
    return 0;
}
