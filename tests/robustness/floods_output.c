/* Each thread writes 4 MiB to stdout and stderr; nothing races. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static void *talk(void *arg) {
    char line[4096]; /* on the thread's stack: not shared */
    memset(line, 'x', sizeof line - 1);
    line[sizeof line - 1] = 0;
    for (int i = 0; i < 1024; i++) {
        fputs(line, stdout);
        fputs(line, stderr);
    }
    return arg;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, talk, 0);
    pthread_create(&b, 0, talk, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    return 0;
}
