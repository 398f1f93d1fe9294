/* Installs its own SIGTRAP handler (the checker's traps must keep working) and has a lost
 * update. */
#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

volatile int counter;

static void ignore(int sig) { (void)sig; }

static void *inc(void *arg) {
    counter++;
    return arg;
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = ignore;
    sigaction(SIGTRAP, &sa, 0);
    signal(SIGTRAP, ignore);
    pthread_t a, b;
    pthread_create(&a, 0, inc, 0);
    pthread_create(&b, 0, inc, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    assert(counter == 2);
    return 0;
}
