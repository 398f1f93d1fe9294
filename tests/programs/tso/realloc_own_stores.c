/* Each thread grows an array with realloc, with an atomic load after every store: the store
 * is still in the thread's buffer (TSO, PSO) when the next realloc copies the block and frees
 * it. Correct under every model. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

static atomic_int flag;

static void *grow(void *arg) {
    (void)arg;
    int *v = NULL;
    size_t n = 0, cap = 0;
    for (int i = 0; i < 20; i++) {
        if (n == cap) {
            cap = cap ? 2 * cap : 1;
            v = realloc(v, cap * sizeof *v);
        }
        v[n++] = i;
        (void)atomic_load_explicit(&flag, memory_order_relaxed);
    }
    long s = 0;
    for (size_t i = 0; i < n; i++) s += v[i];
    free(v);
    return (void *)s;
}

int main(void) {
    pthread_t t;
    void *r;
    pthread_create(&t, 0, grow, 0);
    long a = (long)grow(0);
    pthread_join(t, &r);
    assert(a + (long)r == 380);
    return 0;
}
