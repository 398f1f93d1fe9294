/* Points every descriptor at /dev/null, then races. */
#include <assert.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

volatile int counter;

static void *inc(void *arg) {
    counter++;
    return arg;
}

int main(void) {
    int null = open("/dev/null", O_RDWR);
    for (int fd = 0; fd < 1024; fd++)
        if (fd != null) dup2(null, fd);
    pthread_t a, b;
    pthread_create(&a, 0, inc, 0);
    pthread_create(&b, 0, inc, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    assert(counter == 2);
    return 0;
}
