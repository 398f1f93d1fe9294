/* Two threads push nodes they allocate onto a lock-free stack (Treiber's), and free a scratch
 * block between pushes, as ordinary code does: every block comes from malloc while the other
 * thread allocates and frees too. Main pops and frees them all; with -DLOST a push forgets to
 * retry, and a node is lost when the other thread pushed in between. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

struct node {
    long value;
    struct node *next;
};

static _Atomic(struct node *) top;

static void *pusher(void *arg) {
    for (long i = 0; i < 2; i++) {
        struct node *n = malloc(sizeof *n);
        n->value = (long)arg * 10 + i;
        n->next = atomic_load(&top);
#ifdef LOST
        atomic_compare_exchange_strong(&top, &n->next, n);
#else
        while (!atomic_compare_exchange_weak(&top, &n->next, n)) {
        }
#endif
        free(malloc(32));
    }
    return 0;
}

int main(void) {
    pthread_t t[2];
    for (long i = 0; i < 2; i++) pthread_create(&t[i], 0, pusher, (void *)(i + 1));
    for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
    int count = 0;
    for (struct node *n = atomic_load(&top); n;) {
        struct node *next = n->next;
        free(n);
        n = next;
        count++;
    }
    assert(count == 4);
    return 0;
}
