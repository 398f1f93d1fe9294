/* Two writers of N stores each to one variable, and a reader of two loads (Tracer, OOPSLA 2018,
 * the family whose coherence orders are redundant): 3N^2 + 3N + 1 weak traces under
 * release/acquire, whatever the N^2... interleavings of the stores. */
#include <pthread.h>

#ifndef N
#define N 2
#endif

volatile int x;

static void *writer(void *arg) {
    for (int i = 1; i <= N; i++) x = (int)(long)arg * 100 + i;
    return 0;
}

static void *reader(void *arg) {
    int a = x, b = x;
    (void)a;
    (void)b;
    return arg;
}

int main(void) {
    pthread_t w1, w2, r;
    pthread_create(&w1, 0, writer, (void *)1);
    pthread_create(&w2, 0, writer, (void *)2);
    pthread_create(&r, 0, reader, 0);
    pthread_join(w1, 0);
    pthread_join(w2, 0);
    pthread_join(r, 0);
    return 0;
}
