/* A load wider than the store before it: its low half comes from the thread's own buffer, its
 * high half from memory. The own store is always seen; the other thread's store may or may not. */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>

static volatile union {
    uint64_t whole;
    uint32_t half[2];
} u;
static uint64_t seen;

static void *low_then_whole(void *arg) {
    (void)arg;
    u.half[0] = 1;
    seen = u.whole;
    return 0;
}

static void *high(void *arg) {
    (void)arg;
    u.half[1] = 2;
    return 0;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, low_then_whole, 0);
    pthread_create(&b, 0, high, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    assert((seen & 0xffffffff) == 1);
    assert(seen == 1 || seen == ((uint64_t)2 << 32 | 1));
    return 0;
}
