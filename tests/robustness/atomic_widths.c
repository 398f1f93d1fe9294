/* Atomic increments of 1, 2, 4, 8 and 16 bytes (cmpxchg16b) from two threads: never lost. */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>

uint8_t a8;
uint16_t a16;
uint32_t a32;
uint64_t a64;
__int128 a128 __attribute__((aligned(16)));

static void *inc(void *arg) {
    __atomic_fetch_add(&a8, 1, __ATOMIC_SEQ_CST);
    __atomic_fetch_add(&a16, 1, __ATOMIC_SEQ_CST);
    __atomic_fetch_add(&a32, 1, __ATOMIC_SEQ_CST);
    __atomic_fetch_add(&a64, 1, __ATOMIC_SEQ_CST);
    /* 16 bytes: lock cmpxchg16b (compilers call libatomic for it otherwise) */
    uint64_t lo = 0, hi = 0;
    for (;;) {
        uint64_t nlo = lo + 1, nhi = hi + (nlo == 0);
        unsigned char ok;
        __asm__ volatile("lock cmpxchg16b %1\n\tsete %0"
                         : "=q"(ok), "+m"(a128), "+a"(lo), "+d"(hi)
                         : "b"(nlo), "c"(nhi)
                         : "memory", "cc");
        if (ok) break;
    }
    return arg;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, inc, 0);
    pthread_create(&b, 0, inc, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    assert(a8 == 2 && a16 == 2 && a32 == 2 && a64 == 2 && a128 == 2);
    return 0;
}
