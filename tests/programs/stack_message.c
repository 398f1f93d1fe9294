/* main puts a message on its own stack, hands its address to a producer and spins until the
 * message is ready. Correct under sc and tso; under pso the producer's two stores may reach
 * memory in the other order. With -DGLOBAL the message is a global instead: the checker must
 * explore both alike. */
#include <assert.h>
#include <pthread.h>

struct msg {
    int data;
    int ready;
};
#ifdef GLOBAL
static struct msg m;
#endif

static void *producer(void *p) {
    volatile struct msg *m = p;
    m->data = 42;
    m->ready = 1;
    return 0;
}

int main(void) {
    pthread_t t;
#ifndef GLOBAL
    struct msg m;
#endif
    volatile struct msg *v = &m;
    v->data = 0;
    v->ready = 0;
    pthread_create(&t, 0, producer, &m);
    while (!v->ready)
        ;
    assert(v->data == 42);
    pthread_join(t, 0);
    return 0;
}
