/* A Treiber stack whose pop compares only the top pointer. One thread pops a node and is
 * overtaken: the other pops two nodes, frees the first and pushes a new one, which malloc
 * hands back at the freed node's address, so the first thread's compare-exchange succeeds
 * with a stale next pointer (ABA) and the stack ends up holding a freed node. With
 * -DKEEP_NODES nothing is freed, no address comes back and the stack stays whole. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

struct node {
    struct node *next;
    int value;
};

static _Atomic(struct node *) top;

static void push(int value) {
    struct node *n = malloc(sizeof *n);
    n->value = value;
    struct node *t = atomic_load(&top);
    do
        n->next = t;
    while (!atomic_compare_exchange_weak(&top, &t, n));
}

static struct node *pop(void) {
    struct node *t = atomic_load(&top);
    while (t && !atomic_compare_exchange_weak(&top, &t, t->next))
        ;
    return t;
}

static void discard(struct node *n) {
#ifndef KEEP_NODES
    free(n);
#else
    (void)n;
#endif
}

static void *take_one(void *arg) {
    struct node *n = pop();
    if (n) {
        assert(n->value >= 1 && n->value <= 3);
        discard(n);
    }
    return arg;
}

static void *take_two_put_one(void *arg) {
    struct node *a = pop();
    struct node *b = pop();
    if (a) discard(a);
    push(3);
    if (b) discard(b);
    return arg;
}

int main(void) {
    push(2);
    push(1);
    pthread_t x, y;
    pthread_create(&x, NULL, take_one, NULL);
    pthread_create(&y, NULL, take_two_put_one, NULL);
    pthread_join(x, NULL);
    pthread_join(y, NULL);
    int left = 0;
    for (struct node *n = atomic_load(&top); n; n = n->next) {
        assert(n->value >= 1 && n->value <= 3);
        left++;
    }
    /* three pushes, three pops (one of them may find the stack empty) */
    assert(left <= 1);
    return 0;
}
