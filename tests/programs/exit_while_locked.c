/* main returns while holding a mutex that a thread it created waits for (or is about to):
 * the thread is blocked for good when the process exits, which is no deadlock. With
 * -DSPIN the thread spins on a flag nobody sets instead. */
#include <pthread.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int go;
static int shared;

static void *worker(void *arg) {
#ifdef SPIN
    while (!go)
        ;
#endif
    pthread_mutex_lock(&lock);
    shared++;
    pthread_mutex_unlock(&lock);
    return arg;
}

int main(void) {
    pthread_t t;
    pthread_mutex_lock(&lock);
    pthread_create(&t, NULL, worker, NULL);
    shared = 1;
    return 0;
}
