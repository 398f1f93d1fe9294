/* Blocks every signal in every thread, then races: the checker's traps must still work. */
#include <assert.h>
#include <pthread.h>
#include <signal.h>

volatile int counter;

static void *inc(void *arg) {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, 0);
    counter++;
    return arg;
}

int main(void) {
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, 0);
    pthread_t a, b;
    pthread_create(&a, 0, inc, 0);
    pthread_create(&b, 0, inc, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    assert(counter == 2);
    return 0;
}
