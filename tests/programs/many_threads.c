/* 300 threads created and joined one after another, each adding to a counter: never more than
 * two alive at once, so the checker's limit of 256 threads does not apply. -DALIVE keeps them
 * all alive until the end: past the limit the execution is cut (verdict bounded). */
#include <assert.h>
#include <pthread.h>

#define N 300

static int counter;

static void *add(void *arg) {
    counter++;
    return arg;
}

int main(void) {
#ifdef ALIVE
    static pthread_t all[N];
    for (int i = 0; i < N; i++) assert(pthread_create(&all[i], 0, add, 0) == 0);
    for (int i = 0; i < N; i++) pthread_join(all[i], 0);
#else
    for (int i = 0; i < N; i++) {
        pthread_t t;
        assert(pthread_create(&t, 0, add, 0) == 0);
        pthread_join(t, 0);
    }
    assert(counter == N);
#endif
    return 0;
}
