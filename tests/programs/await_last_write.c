/* main waits for x to become 2 while two threads write 1 and 2. Nothing orders the two
 * writes: where 2 comes first, x ends at 1 and main spins for good (a hang under every model,
 * release/acquire too). With -DORDERED one thread writes 1 then 2: x ends at 2, and main gets
 * there. */
#include <pthread.h>
#include <stdatomic.h>

static atomic_int x;

static void *one(void *arg) {
    atomic_store_explicit(&x, 1, memory_order_release);
#ifdef ORDERED
    atomic_store_explicit(&x, 2, memory_order_release);
#endif
    return arg;
}

#ifndef ORDERED
static void *two(void *arg) {
    atomic_store_explicit(&x, 2, memory_order_release);
    return arg;
}
#endif

int main(void) {
    pthread_t a;
    pthread_create(&a, NULL, one, NULL);
#ifndef ORDERED
    pthread_t b;
    pthread_create(&b, NULL, two, NULL);
#endif
    while (atomic_load_explicit(&x, memory_order_acquire) != 2)
        ;
    pthread_join(a, NULL);
#ifndef ORDERED
    pthread_join(b, NULL);
#endif
    return 0;
}
