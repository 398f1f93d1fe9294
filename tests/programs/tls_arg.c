/* A thread reads a thread-local variable of main's through a pointer main hands it, and main
 * changes the variable right after: a thread that runs before the change sees the old value.
 * With -DGLOBAL the variable is a global instead: the checker must explore both alike. */
#include <assert.h>
#include <pthread.h>

static int seen;
#ifdef GLOBAL
static int box;
#else
static __thread int box;
#endif

static void *worker(void *p) {
    seen = *(volatile int *)p;
    return 0;
}

int main(void) {
    pthread_t t;
    *(volatile int *)&box = 1;
    pthread_create(&t, 0, worker, &box);
    *(volatile int *)&box = 2;
    pthread_join(t, 0);
    assert(seen == 2);
    return 0;
}
