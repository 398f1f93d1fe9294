/* Calls on pthread objects the checker keeps but does not model (-DCALL=n picks one): each
 * stops the check with an error naming it. With CALL=0, a barrier destroyed after use, which
 * is modelled: no error. */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <time.h>

static pthread_barrier_t barrier;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static sem_t sem;

static void *worker(void *arg) {
    pthread_barrier_wait(&barrier);
    return arg;
}

int main(void) {
    struct timespec later;
    clock_gettime(CLOCK_REALTIME, &later);
    later.tv_sec += 10;
    sem_init(&sem, 0, 1);
    pthread_barrier_init(&barrier, NULL, 2);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_barrier_wait(&barrier);
    int value = 0;
    switch (CALL) {
    case 1: pthread_mutex_timedlock(&lock, &later); break;
    case 2: sem_timedwait(&sem, &later); break;
    case 3: sem_getvalue(&sem, &value); break;
    case 4: pthread_cancel(t); break;
    case 5: pthread_timedjoin_np(t, NULL, &later); break;
    }
    pthread_join(t, NULL);
    return pthread_barrier_destroy(&barrier) + value;
}
