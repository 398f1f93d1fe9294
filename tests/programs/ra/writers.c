/* N writers and one reader (Tracer, OOPSLA 2018): each writer stores its number into one shared
 * variable, the reader reads it once. Under release/acquire the weak traces are only which
 * value the reader saw: N + 1 (under SC every order of the writes counts too). */
#include <pthread.h>

#ifndef N
#define N 3
#endif

volatile int x;

static void *writer(void *arg) {
    x = (int)(long)arg;
    return 0;
}

static void *reader(void *arg) {
    int seen = x;
    (void)seen;
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
