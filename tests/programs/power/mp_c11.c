/* Message passing written with C11 atomics, as a POWER user writes it: a release store of the
 * flag after the data, an acquire load of it before the data (gcc: lwsync before the store;
 * the load compared with itself, a branch and isync after it). At -O0 every value goes
 * through a stack slot addressed by the frame pointer, r31, between the load and the branch
 * on it and between the branch and the data's load. Correct under power; with -DRELAXED both
 * sides are relaxed and the reader may see the flag before the data. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>

#ifdef RELAXED
#define PUBLISH memory_order_relaxed
#define OBSERVE memory_order_relaxed
#else
#define PUBLISH memory_order_release
#define OBSERVE memory_order_acquire
#endif

static int data;
static atomic_int flag;

static void *producer(void *arg) {
    data = 42;
    atomic_store_explicit(&flag, 1, PUBLISH);
    return arg;
}

static void *consumer(void *arg) {
    if (atomic_load_explicit(&flag, OBSERVE)) {
        int seen = data;
        assert(seen == 42);
    }
    return arg;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, producer, NULL);
    pthread_create(&b, NULL, consumer, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return 0;
}
