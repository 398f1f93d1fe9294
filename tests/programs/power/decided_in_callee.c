/* A thread reads a flag and lets a function it calls decide whether to publish (the
 * decision is a branch in the callee, on the value passed in a register); with -DVIA_STACK
 * the flag goes through a variable on the thread's own stack first. The other thread sets
 * the flag, then reads what was published. Run the publisher first: it sees the flag clear
 * and publishes, and the setter then sees that. Reachable under every model, sc included:
 * the assertion fails. (The write is kept by a revisit only with the read its existence
 * rests on, which no dependency the model orders by shows here.) */
#include <assert.h>
#include <pthread.h>

volatile int flag, published;
int seen_flag, seen_published;

__attribute__((noinline)) static int should_publish(int f) { return f == 0; }

static void *setter(void *arg) {
    flag = 1;
    seen_published = published;
    return arg;
}

static void *publisher(void *arg) {
#ifdef VIA_STACK
    volatile int mine = flag;
    seen_flag = mine;
    if (mine == 0) published = 1;
#else
    seen_flag = flag;
    if (should_publish(seen_flag)) published = 1;
#endif
    return arg;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, setter, 0);
    pthread_create(&b, 0, publisher, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    assert(!(seen_flag == 0 && seen_published == 1));
    return 0;
}
