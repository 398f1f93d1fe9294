/* Installs a SIGUSR1 handler, blocks SIGUSR2 and sets an alarm in each of its 2 executions:
 * each must start with SIGUSR1's disposition and the mask as at main and no alarm pending, as
 * a process of its own would. */
#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

volatile int shared;

static void on_usr1(int sig) { (void)sig; }

static void *writer(void *arg) {
    shared = 1;
    return arg;
}

int main(void) {
    struct sigaction old;
    assert(sigaction(SIGUSR1, NULL, &old) == 0 && old.sa_handler == SIG_DFL);
    signal(SIGUSR1, on_usr1);
    sigset_t mask;
    assert(pthread_sigmask(SIG_BLOCK, NULL, &mask) == 0 && !sigismember(&mask, SIGUSR2));
    sigemptyset(&mask);
    sigaddset(&mask, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &mask, NULL);
    assert(alarm(100) == 0);
    pthread_t t;
    pthread_create(&t, 0, writer, 0);
    int seen = shared;
    pthread_join(t, 0);
    return seen < 0;
}
