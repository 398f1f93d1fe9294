/* Two threads each count to K in a word only they write (a loop of K visible loads and
 * stores), then race on a flag; main checks the counts after joining them. Each execution
 * has about 4K events: the graph engine's work per event must not grow with the graph (it
 * grew with its square and more: minutes at K = 200).
 *
 *     gcc -O2 -g -pthread tests/programs/ra/long_loops.c -o /tmp/ll && smc-run --model ra /tmp/ll */
#include <assert.h>
#include <pthread.h>

#ifndef K
#define K 5000
#endif

volatile long count[2];
volatile int last;

static void *counter(void *arg) {
    long i = (long)arg;
    for (long k = 0; k < K; k++) count[i]++;
    last = (int)i + 1;
    return 0;
}

int main(void) {
    pthread_t t[2];
    for (long i = 0; i < 2; i++) pthread_create(&t[i], 0, counter, (void *)i);
    for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
    assert(count[0] == K && count[1] == K);
    assert(last != 0);
    return 0;
}
