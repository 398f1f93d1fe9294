/* Runs a shell command from a thread. */
#include <pthread.h>
#include <stdlib.h>

static void *work(void *arg) {
    (void)system("true");
    return arg;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, work, 0);
    pthread_join(t, 0);
    return 0;
}
