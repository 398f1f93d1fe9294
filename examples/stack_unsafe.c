/* The bounded array stack of stack_safe.c with the mutex left out: a check-then-act race.
 *
 *     smc-run --model tso examples/stack_unsafe.c
 *
 * Each of two threads pushes its own value and then pops one value. push reads the top index,
 * writes the slot and stores the new index; pop reads the index, takes the element below it and
 * stores the smaller index. Nothing makes these steps atomic, so two threads can read the same
 * index: two pushes then fill the same slot (one element is lost), or two pops return the same
 * element (it is duplicated). Checked, as in stack_safe.c: no pop finds the stack empty, the
 * stack never overflows, and the popped values are exactly the pushed ones, each once.
 *
 * The race needs no store buffering, so an assertion fails under sc, tso and pso. Two threads
 * are enough to show it; stack_safe.c uses three, which the lock keeps cheap, but without the
 * lock three threads give tens of thousands of executions. */
#include <assert.h>
#include <pthread.h>

#define THREADS 2
#define CAPACITY THREADS
#define EMPTY (-1)

static volatile int items[CAPACITY];
static volatile int top; /* number of elements on the stack */
static int popped[THREADS];

static void push(int v) {
    int t = top;
    assert(t < CAPACITY);
    items[t] = v;
    top = t + 1;
}

static int pop(void) {
    int t = top;
    if (t == 0) return EMPTY;
    int v = items[t - 1];
    top = t - 1;
    return v;
}

static void *worker(void *arg) {
    int id = (int)(long)arg;
    push(100 + id);
    int v = pop();
    assert(v != EMPTY);
    popped[id] = v;
    return 0;
}

int main(void) {
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++) pthread_create(&t[i], 0, worker, (void *)i);
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], 0);
    assert(top == 0);
    for (int want = 0; want < THREADS; want++) { /* each pushed value popped exactly once */
        int seen = 0;
        for (int i = 0; i < THREADS; i++) seen += popped[i] == 100 + want;
        assert(seen == 1);
    }
    return 0;
}
