/* Two threads each push a nondeterministic value that an assumption keeps below 3 onto a
 * shared stack; a third pops what is there. The error needs both pushes to draw 2 and the pop
 * to come before both (--nondet-values 3 or more; with 2, no 2 is drawn). */
#include <assert.h>
#include <pthread.h>
#include "smc_verifier.h"

static int stack[2], top, popped = -1;

static void *push(void *arg) {
    unsigned v = __VERIFIER_nondet_uint();
    __VERIFIER_assume(v < 3);
    int at = top;
    stack[at] = (int)v;
    top = at + 1;
    return arg;
}

static void *pop(void *arg) {
    if (top > 0)
        popped = stack[top - 1];
    return arg;
}

int main(void) {
    pthread_t a, b, c;
    pthread_create(&a, 0, push, 0);
    pthread_create(&b, 0, push, 0);
    pthread_create(&c, 0, pop, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    pthread_join(c, 0);
    if (popped == -1 && top == 2)
        assert(stack[0] + stack[1] != 4);
    return 0;
}
