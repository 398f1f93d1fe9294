/* Scaling family: N writers and one reader. Each writer stores its number into one shared
 * variable; the reader reads it twice. The two reads each see one of N+1 values and the writes
 * are ordered every way, so executions grow with N.
 *
 *     gcc -O2 -g -pthread -DN=4 benches/programs/writers.c -o /tmp/w4 && smc-run --model sc /tmp/w4 */
#include <pthread.h>

#ifndef N
#define N 3
#endif

volatile int x;
int seen[2];

static void *writer(void *arg) {
    x = (int)(long)arg;
    return 0;
}

static void *reader(void *arg) {
    seen[0] = x;
    seen[1] = x;
    return arg;
}

int main(void) {
    pthread_t w[N], r;
    pthread_create(&r, 0, reader, 0);
    for (long i = 0; i < N; i++) pthread_create(&w[i], 0, writer, (void *)(i + 1));
    for (int i = 0; i < N; i++) pthread_join(w[i], 0);
    pthread_join(r, 0);
    return 0;
}
