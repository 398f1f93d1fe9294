/* Each thread writes a number and a path into a fresh heap block, store by store, and hands
 * them to code that is not instrumented: strtol (the C library) and open (the kernel). Both
 * run while the stores may still be in the thread's buffer (TSO, PSO), and both must see them,
 * as store forwarding makes them on the processor. Correct under every model. */
#include <assert.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static void *parse(void *arg) {
    long n = (long)arg;
    char *digits = malloc(8);
    digits[0] = (char)('0' + n / 10);
    digits[1] = (char)('0' + n % 10);
    digits[2] = 0;
    char *path = malloc(8);
    path[0] = '/';
    path[1] = 0;
    long v = strtol(digits, NULL, 10);
    int fd = open(path, O_RDONLY | O_DIRECTORY);
    assert(v == n);
    assert(fd >= 0);
    close(fd);
    free(digits);
    free(path);
    return NULL;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, parse, (void *)42L);
    parse((void *)17L);
    pthread_join(t, NULL);
    return 0;
}
