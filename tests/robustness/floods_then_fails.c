/* Writes 3 MiB, more than the checker captures, then fails: the capture is cut, the failure
 * still reported. The memset of a global before any thread exists is an inlined rep stos,
 * which runs as it is then. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

volatile int flag;

static void *t(void *arg) {
    flag = 1;
    return arg;
}

int main(void) {
    static char line[1024];
    memset(line, 'y', sizeof line - 1);
    for (int i = 0; i < 3 * 1024; i++) fputs(line, stdout);
    pthread_t x;
    pthread_create(&x, 0, t, 0);
    pthread_join(x, 0);
    fprintf(stderr, "giving up\n");
    abort();
}
