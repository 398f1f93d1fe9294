/* Stores to a variable picked by the time-stamp counter in each execution (rdtsc: a source
 * the checker does not control, unlike the clock functions and getrandom), before the stores
 * the exploration reorders: replaying an earlier execution's first events meets a different
 * event, which the checker must report instead of exploring on as if nothing had changed. */
#include <pthread.h>
#include <x86intrin.h>

volatile int a[8], z;

static void *writer(void *arg) {
    unsigned r = (unsigned)(__rdtsc() >> 4);
    a[r & 7] = 1;
    z = 1;
    z = 2;
    z = 3;
    return arg;
}

static void *reader(void *arg) {
    int sum = 0;
    for (int i = 0; i < 4; i++) sum += z;
    return (void *)(long)sum;
}

int main(void) {
    pthread_t w, r;
    pthread_create(&w, 0, writer, 0);
    pthread_create(&r, 0, reader, 0);
    pthread_join(w, 0);
    pthread_join(r, 0);
    return 0;
}
