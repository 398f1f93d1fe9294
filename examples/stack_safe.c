/* A bounded array stack shared by three threads, every operation under one pthread mutex.
 *
 *     smc-run --model tso examples/stack_safe.c
 *
 * Each thread pushes its own value and then pops one value (not necessarily its own). Checked:
 * no pop finds the stack empty (every thread pushed before it popped, so there is always at
 * least one element), the stack never overflows, and at the end the popped values are exactly
 * the pushed ones, each once: nothing is lost and nothing is duplicated, and the stack is empty.
 *
 * The mutex serialises the operations, and its lock and unlock drain the store buffers, so the
 * program is correct under sc, tso and pso. See stack_unsafe.c for the same stack without it. */
#include <assert.h>
#include <pthread.h>

#define THREADS 3
#define CAPACITY THREADS
#define EMPTY (-1)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int items[CAPACITY];
static int top; /* number of elements on the stack */
static int popped[THREADS];

static void push(int v) {
    pthread_mutex_lock(&lock);
    assert(top < CAPACITY);
    items[top] = v;
    top = top + 1;
    pthread_mutex_unlock(&lock);
}

static int pop(void) {
    int v = EMPTY;
    pthread_mutex_lock(&lock);
    if (top > 0) {
        top = top - 1;
        v = items[top];
    }
    pthread_mutex_unlock(&lock);
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
