/* An increment that reads a store made after it was first explored, and a load before it that
 * then reads the increment: seen = 32 with x = 2 at the end takes the order late, adder,
 * reader, storer (sequential consistency has it). The graph engine reaches that graph only
 * by the revisited increment's write revisiting the load in turn. */
#include <assert.h>
#include <pthread.h>

int x;
int seen;

static void *storer(void *arg) {
    __atomic_store_n(&x, 2, __ATOMIC_RELAXED);
    return arg;
}

static void *reader(void *arg) {
    seen = __atomic_load_n(&x, __ATOMIC_RELAXED);
    return arg;
}

static void *adder(void *arg) {
    __atomic_fetch_add(&x, 1, __ATOMIC_SEQ_CST);
    return arg;
}

static void *late(void *arg) {
    __atomic_store_n(&x, 31, __ATOMIC_RELAXED);
    return arg;
}

int main(void) {
    pthread_t t[4];
    pthread_create(&t[0], 0, storer, 0);
    pthread_create(&t[1], 0, reader, 0);
    pthread_create(&t[2], 0, adder, 0);
    pthread_create(&t[3], 0, late, 0);
    for (int i = 0; i < 4; i++) pthread_join(t[i], 0);
    assert(!(seen == 32 && x == 2));
    return 0;
}
