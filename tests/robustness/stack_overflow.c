/* A thread recurses without bound (touching only its own stack): the crash is reported although no handler can run on the
 * exhausted stack. */
#include <pthread.h>

static int down(int n) {
    volatile char frame[256];
    frame[0] = (char)n;
    return down(n + 1) + frame[0];
}

static void *t(void *arg) { return (void *)(long)down(0); }

int main(void) {
    pthread_t x;
    pthread_create(&x, 0, t, 0);
    pthread_join(x, 0);
    return 0;
}
