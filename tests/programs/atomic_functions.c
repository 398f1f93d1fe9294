/* SV-COMP's convention: a function named __VERIFIER_atomic_* runs atomically, here a plain
 * increment (and one nested in another atomic function); no update is lost. */
#include <assert.h>
#include <pthread.h>

static int x;

void __VERIFIER_atomic_add(int n) {
    int v = x;
    x = v + n;
}

void __VERIFIER_atomic_inc(void) {
    __VERIFIER_atomic_add(1); /* nested: still one section */
}

static void *inc(void *arg) {
    __VERIFIER_atomic_inc();
    return arg;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, inc, 0);
    pthread_create(&b, 0, inc, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    assert(x == 2);
    return 0;
}
