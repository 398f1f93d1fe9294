/* Thread-local counters are not shared: one execution, no error. */
#include <assert.h>
#include <pthread.h>

static __thread int mine;

static void *work(void *arg) {
    for (int i = 0; i < 3; i++) mine++;
    assert(mine == 3);
    return arg;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, work, 0);
    pthread_create(&b, 0, work, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    return 0;
}
