/* Figure 5 of the TACAS'15 paper: a load that can be satisfied from the thread's own buffer.
 * Three Shasha-Snir traces: the load reads 1 (own store) with x ending 1 or 2... */
#include <pthread.h>

volatile int x;
int r;

static void *p(void *arg) {
    (void)arg;
    x = 1;
    r = x;
    return 0;
}

static void *q(void *arg) {
    (void)arg;
    x = 2;
    return 0;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, p, 0);
    pthread_create(&b, 0, q, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    return 0;
}
