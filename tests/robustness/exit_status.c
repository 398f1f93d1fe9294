/* Exits with status 3 after its threads end: an error of kind "exit" unless
 * --allow-exit-status. */
#include <pthread.h>

static void *work(void *arg) { return arg; }

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, work, 0);
    pthread_join(t, 0);
    return 3;
}
