/* A thread that computes forever without touching shared memory. */
#include <pthread.h>

static void *spin(void *arg) {
    volatile long n = 0;
    for (;;) n++;
    return arg;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, spin, 0);
    pthread_join(t, 0);
    return 0;
}
