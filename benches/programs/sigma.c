/* Release/acquire scaling family (after Tracer's, OOPSLA 2018): N threads; thread i reads y[i],
 * then publishes its number in every y[k] with k < i. So y[i] has N - i - 1 writers besides its
 * initial value, each read may see any of its N - i values, and no choice constrains another:
 * N! weak traces.
 *
 *     gcc -O2 -g -pthread -DN=6 benches/programs/sigma.c -o /tmp/s6 && smc-run --model ra /tmp/s6 */
#include <pthread.h>

#ifndef N
#define N 4
#endif

volatile int y[N];

static void *thread(void *arg) {
    long i = (long)arg;
    int seen = y[i];
    (void)seen;
    for (long k = 0; k < i; k++) y[k] = (int)i;
    return 0;
}

int main(void) {
    pthread_t t[N];
    for (long i = 0; i < N; i++) pthread_create(&t[i], 0, thread, (void *)i);
    for (int i = 0; i < N; i++) pthread_join(t[i], 0);
    return 0;
}
