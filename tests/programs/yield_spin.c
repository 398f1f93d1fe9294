/* A flag awaited with sched_yield in the loop: terminates, no error. */
#include <assert.h>
#include <pthread.h>
#include <sched.h>

volatile int flag, data;

static void *setter(void *arg) {
    (void)arg;
    data = 1;
    flag = 1;
    return 0;
}

static void *waiter(void *arg) {
    (void)arg;
    while (!flag) sched_yield();
    assert(data == 1);
    return 0;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, waiter, 0);
    pthread_create(&b, 0, setter, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    return 0;
}
