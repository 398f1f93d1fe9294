/* Store buffering with a full fence between each store and load: forbidden everywhere. */
#include <assert.h>
#include <pthread.h>

volatile int x, y;
int r1, r2;

static void *t1(void *arg) {
    (void)arg;
    x = 1;
    __asm__ volatile("mfence" ::: "memory");
    r1 = y;
    return 0;
}

static void *t2(void *arg) {
    (void)arg;
    y = 1;
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* gcc: lock or [rsp], 0; clang: mfence */
    r2 = x;
    return 0;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, t1, 0);
    pthread_create(&b, 0, t2, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    assert(!(r1 == 0 && r2 == 0));
    return 0;
}
