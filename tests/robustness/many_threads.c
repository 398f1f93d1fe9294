/* 100 threads, each writing its own slot: one execution. */
#include <assert.h>
#include <pthread.h>

#define N 100
int slot[N];

static void *work(void *arg) {
    slot[(long)arg] = (int)(long)arg + 1;
    return 0;
}

int main(void) {
    pthread_t t[N];
    for (long i = 0; i < N; i++) pthread_create(&t[i], 0, work, (void *)i);
    for (int i = 0; i < N; i++) pthread_join(t[i], 0);
    for (int i = 0; i < N; i++) assert(slot[i] == i + 1);
    return 0;
}
