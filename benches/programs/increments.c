/* Long executions of locked increments: each of T threads adds 1 to its own counter N times
 * (one execution; every update reads the latest write of a word only its thread touches),
 * then main adds the counters up. The work per event of an engine that checks each update.
 *
 *     gcc -O2 -g -pthread -DN=3000 benches/programs/increments.c -o /tmp/inc && smc-run --model ra /tmp/inc */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>

#ifndef N
#define N 1000
#endif
#ifndef T
#define T 2
#endif

static atomic_long count[T];

static void *thread(void *arg) {
    atomic_long *mine = arg;
    for (int i = 0; i < N; i++) atomic_fetch_add(mine, 1);
    return 0;
}

int main(void) {
    pthread_t t[T];
    for (int i = 0; i < T; i++) pthread_create(&t[i], 0, thread, &count[i]);
    long sum = 0;
    for (int i = 0; i < T; i++) {
        pthread_join(t[i], 0);
        sum += atomic_load(&count[i]);
    }
    assert(sum == (long)N * T);
    return 0;
}
