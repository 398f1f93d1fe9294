/* main computes for a few seconds without a visible operation while a thread updates a
 * counter under a mutex: a long computation, not a hang. Correct. */
#include <assert.h>
#include <pthread.h>

#ifndef SPINS
#define SPINS 6000000000UL
#endif

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int counter;

static void *add(void *arg) {
    (void)arg;
    pthread_mutex_lock(&m);
    counter++;
    pthread_mutex_unlock(&m);
    return 0;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, add, 0);
    unsigned long local = 0;
    for (unsigned long i = 0; i < SPINS; i++) {
        local += i;
        __asm__ volatile("" : "+r"(local));
    }
    pthread_mutex_lock(&m);
    counter++;
    pthread_mutex_unlock(&m);
    pthread_join(t, 0);
    assert(counter == 2);
    return (int)(local & 0);
}
