/* A spin lock written with C11 atomics (a weak compare-exchange with acquire in a loop, a
 * release store to unlock) keeps two threads' increments apart: correct under power. gcc puts
 * the compare-exchange's isync on one of two ways to the loop's exit branch (-O2), or in a
 * function of its own that returns before the increment (-O0). With -DPUBLISHED the reader
 * takes a count published with release and reads that many items (message passing through an
 * index, its acquire load's value kept on the stack at -O0). */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>

#ifndef PUBLISHED
static atomic_int taken;
static int counter;

static void lock(void) {
    int expected;
    do
        expected = 0;
    while (!atomic_compare_exchange_weak_explicit(&taken, &expected, 1, memory_order_acquire,
                                                  memory_order_relaxed));
}

static void unlock(void) { atomic_store_explicit(&taken, 0, memory_order_release); }

static void *work(void *arg) {
    lock();
    counter++;
    unlock();
    return arg;
}

int main(void) {
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, work, NULL);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    assert(counter == 2);
    return 0;
}
#else
static int items[3];
static atomic_int count;

static void *producer(void *arg) {
    for (int i = 0; i < 3; i++) {
        items[i] = i + 10;
        atomic_store_explicit(&count, i + 1, memory_order_release);
    }
    return arg;
}

static void *consumer(void *arg) {
    int n = atomic_load_explicit(&count, memory_order_acquire);
    for (int i = 0; i < n; i++) assert(items[i] == i + 10);
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
#endif
