/* A wait for a flag with a deadline in seconds (time()): here nobody sets the flag (with
 * SETTER a thread does), so the wait ends by its deadline. Its rounds differ only in the
 * clock, which registers need not show (time() changes once a second): the loop is not an
 * await loop, and no hang. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

atomic_int flag;
int timed_out;

static void *waiter(void *arg) {
    time_t deadline = time(NULL) + 2;
    while (!atomic_load_explicit(&flag, memory_order_acquire)) {
        if (time(NULL) > deadline) {
            timed_out = 1;
            break;
        }
    }
    return arg;
}

static void *setter(void *arg) {
    atomic_store_explicit(&flag, 1, memory_order_release);
    return arg;
}

int main(void) {
    pthread_t w, s;
    pthread_create(&w, 0, waiter, 0);
#ifdef SETTER
    pthread_create(&s, 0, setter, 0);
    pthread_join(s, 0);
#else
    (void)setter;
    (void)s;
#endif
    pthread_join(w, 0);
#ifndef SETTER
    assert(timed_out);
#endif
    return 0;
}
