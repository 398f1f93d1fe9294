/* A thread reads its argument through a pointer to main's local variable, which main changes
 * right after creating it: a thread that runs before the change sees the old value. With
 * -DGLOBAL the variable is a global instead: the checker must explore both alike. */
#include <assert.h>
#include <pthread.h>

static int seen;
#ifdef GLOBAL
static int arg;
#endif

static void *worker(void *p) {
    seen = *(volatile int *)p;
    return 0;
}

int main(void) {
    pthread_t t;
#ifndef GLOBAL
    int arg;
#endif
    *(volatile int *)&arg = 1;
    pthread_create(&t, 0, worker, &arg);
    *(volatile int *)&arg = 2;
    pthread_join(t, 0);
    assert(seen == 2);
    return 0;
}
