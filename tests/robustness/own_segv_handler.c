/* Installs a SIGSEGV handler that would hide the crash; the crash is still reported. */
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

static int *volatile shared;

static void quietly(int sig) {
    (void)sig;
    _exit(0);
}

static void *reader(void *arg) {
    *shared = 1; /* null unless main published first */
    return arg;
}

int main(void) {
    static int cell;
    signal(SIGSEGV, quietly);
    pthread_t t;
    pthread_create(&t, 0, reader, 0);
    shared = &cell;
    pthread_join(t, 0);
    return 0;
}
