/* Registers 300 exit handlers in each of its 2 executions, more than a worker keeps itself:
 * all must run at exit, the last registered first; the first registered logs whether they
 * did to handlers.txt. */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#define HANDLERS 300

volatile int shared;
static long expected = HANDLERS - 1;
static int in_order = 1;

static void handler(int status, void *arg) {
    (void)status;
    long i = (long)arg;
    in_order &= i == expected--;
    if (i == 0) {
        int fd = open("handlers.txt", O_WRONLY | O_APPEND | O_CREAT, 0644);
        const char *line = in_order && expected == -1 ? "in order\n" : "out of order\n";
        int n = in_order && expected == -1 ? 9 : 13;
        if (fd < 0 || write(fd, line, n) != n) _exit(3);
        close(fd);
    }
}

static void *writer(void *arg) {
    shared = 1;
    return arg;
}

int main(void) {
    for (long i = 0; i < HANDLERS; i++) on_exit(handler, (void *)i);
    pthread_t t;
    pthread_create(&t, 0, writer, 0);
    int seen = shared;
    pthread_join(t, 0);
    return seen < 0;
}
