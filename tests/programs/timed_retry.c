/* A consumer waits for a flag with a timed wait in a retry loop (each time-out counted); the
 * producer sets the flag under the mutex but fills in the value it announces only after
 * unlocking: the consumer may read it unset. Found only in executions where the producer runs
 * between the consumer's time-outs. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int ready, value, timeouts;

static void *producer(void *arg) {
    (void)arg;
    pthread_mutex_lock(&m);
    ready = 1;
    pthread_cond_signal(&c);
    pthread_mutex_unlock(&m);
    value = 42; /* too late: should be set before `ready` */
    return 0;
}

static void *consumer(void *arg) {
    (void)arg;
    pthread_mutex_lock(&m);
    while (!ready) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        if (pthread_cond_timedwait(&c, &m, &ts) == ETIMEDOUT)
            timeouts++;
    }
    pthread_mutex_unlock(&m);
    assert(value == 42);
    return 0;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&b, 0, consumer, 0);
    pthread_create(&a, 0, producer, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    return 0;
}
