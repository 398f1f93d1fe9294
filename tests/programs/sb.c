/* Store buffering: under SC at least one thread sees the other's store (three traces); under
 * TSO and PSO both loads can overtake the stores before them, unless built with -DFENCES (a full
 * fence between each store and load: an mfence in one thread, gcc's `lock or [rsp], 0` or
 * clang's mfence for the C11 fence in the other). */
#include <assert.h>
#include <pthread.h>

volatile int x, y;
int r1, r2;

static void *t1(void *arg) {
    (void)arg;
    x = 1;
#ifdef FENCES
    __asm__ volatile("mfence" ::: "memory");
#endif
    r1 = y;
    return 0;
}

static void *t2(void *arg) {
    (void)arg;
    y = 1;
#ifdef FENCES
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
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
