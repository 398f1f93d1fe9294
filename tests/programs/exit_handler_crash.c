/* Registers an exit handler, which logs a line to handler.txt, in each of its 2 executions;
 * crashes in the one where main read the flag before the setter stored it. A process that
 * crashed runs no exit handler: one line in all. */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

volatile int flag;

static void logged(void) {
    int fd = open("handler.txt", O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd >= 0 && write(fd, "ran\n", 4) != 4) _exit(3);
    close(fd);
}

static void *setter(void *arg) {
    flag = 1;
    return arg;
}

int main(void) {
    atexit(logged);
    pthread_t t;
    pthread_create(&t, 0, setter, 0);
    int seen = flag;
    pthread_join(t, 0);
    if (!seen) *(volatile int *)0 = 1;
    return 0;
}
