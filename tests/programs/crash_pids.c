/* Logs its process id to pids.txt at each execution, then crashes unless both setters ran
 * before main's reads: 4 executions (each read before or after its store), 3 of them crash.
 * A worker that outlives crashes logs one id; one process per execution logs four. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

volatile int a, b;

static void *set_a(void *arg) {
    a = 1;
    return arg;
}

static void *set_b(void *arg) {
    b = 1;
    return arg;
}

int main(void) {
    char line[32];
    int n = snprintf(line, sizeof line, "%d\n", (int)getpid());
    int fd = open("pids.txt", O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd < 0 || write(fd, line, n) != n) return 1;
    close(fd);
    pthread_t ta, tb;
    pthread_create(&ta, 0, set_a, 0);
    pthread_create(&tb, 0, set_b, 0);
    int seen_a = a, seen_b = b;
    pthread_join(ta, 0);
    pthread_join(tb, 0);
    if (!seen_a || !seen_b) *(volatile int *)0 = 1;
    return 0;
}
