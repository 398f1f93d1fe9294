/* Starts a process while a thread runs: the checker cannot follow it. */
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

static void *work(void *arg) { return arg; }

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, work, 0);
    pid_t p = fork();
    if (p == 0) _exit(0);
    waitpid(p, 0, 0);
    pthread_join(t, 0);
    return 0;
}
