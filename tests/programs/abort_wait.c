/* main gives up (abort) unless both threads have already finished their work, as SV-COMP's
 * tasks wait with `if (!c) abort();`: the failure after the check needs both threads to run
 * before it, although main's abort ends the first executions first. */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int done, x;

static void *work(void *arg) {
    pthread_mutex_lock(&m);
    x++;
    done++;
    pthread_mutex_unlock(&m);
    return arg;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, work, 0);
    pthread_create(&b, 0, work, 0);
    pthread_mutex_lock(&m);
    int finished = done == 2;
    pthread_mutex_unlock(&m);
    if (!finished) abort();
    assert(x != 2);
    return 0;
}
