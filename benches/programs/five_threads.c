/* Five threads, each a load and two stores on four shared words: the source-DPOR engine ends
 * many executions blocked here under pso (the stores of a thread reach memory in either
 * order), the graph engine none.
 *
 *     gcc -O2 -g -pthread benches/programs/five_threads.c -o /tmp/five
 *     smc-run --model pso -j 1 /tmp/five                  # interleaving engine
 *     smc-run --model pso -j 1 --engine graph /tmp/five   # graph engine */
#include <pthread.h>

#define THREADS 5
#define WORDS 4

volatile int word[WORDS];
int seen[THREADS];

static void *thread(void *arg) {
    long i = (long)arg;
    seen[i] = word[(i + 2) % WORDS];
    word[i % WORDS] = (int)i + 1;
    word[(i + 1) % WORDS] = (int)i + 1;
    return 0;
}

int main(void) {
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++) pthread_create(&t[i], 0, thread, (void *)i);
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], 0);
    return 0;
}
