/* Two threads publish a value each, meet at a barrier, then read the other's: after the
 * barrier both values are there (the barrier orders memory as POSIX says). -DTHREE: a
 * barrier for three that only two reach, a deadlock. -DONE: a barrier of one, which orders
 * nothing, so a thread may read the other's value before it is written. */
#include <assert.h>
#include <pthread.h>

#if defined(THREE)
#define COUNT 3
#elif defined(ONE)
#define COUNT 1
#else
#define COUNT 2
#endif

static pthread_barrier_t barrier;
static int value[2], serial;

static void *phase(void *arg) {
    int me = (int)(long)arg;
    value[me] = me + 1;
    if (pthread_barrier_wait(&barrier) == PTHREAD_BARRIER_SERIAL_THREAD)
        serial++;
    assert(value[1 - me] == 2 - me);
    return 0;
}

int main(void) {
    pthread_t a, b;
    pthread_barrier_init(&barrier, 0, COUNT);
    pthread_create(&a, 0, phase, (void *)0L);
    pthread_create(&b, 0, phase, (void *)1L);
    pthread_join(a, 0);
    pthread_join(b, 0);
    assert(serial == 2 / COUNT);
    return 0;
}
