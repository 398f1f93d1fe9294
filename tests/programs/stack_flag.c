/* main hands a record on its stack to a worker and spins on the record's atomic flag until
 * the worker has filled it in (a release store after the data). At -O0 the flag is loaded
 * through a pointer the loop keeps on main's stack. Correct under sc and tso; under pso the
 * worker's two stores may reach memory in the other order. With -DGLOBAL the record is a
 * global instead. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>

struct msg {
    int data;
    atomic_int ready;
};
#ifdef GLOBAL
static struct msg m;
#endif

static void *worker(void *p) {
    struct msg *w = p;
    w->data = 5;
    atomic_store_explicit(&w->ready, 1, memory_order_release);
    return 0;
}

int main(void) {
#ifndef GLOBAL
    struct msg m = {0, 0};
#endif
    pthread_t t;
    pthread_create(&t, 0, worker, &m);
    while (!atomic_load_explicit(&m.ready, memory_order_acquire))
        ;
    assert(m.data == 5);
    pthread_join(t, 0);
    return 0;
}
