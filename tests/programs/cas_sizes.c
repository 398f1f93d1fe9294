/* Two threads increment counters of 1, 2, 4 and 8 bytes with compare-exchange loops; the
 * counters end at 2 each. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

static _Atomic uint8_t c1;
static _Atomic uint16_t c2;
static _Atomic uint32_t c4;
static _Atomic uint64_t c8;

static void *inc(void *arg) {
    uint8_t a = atomic_load(&c1);
    while (!atomic_compare_exchange_weak(&c1, &a, (uint8_t)(a + 1))) {
    }
    uint16_t b = atomic_load(&c2);
    while (!atomic_compare_exchange_weak(&c2, &b, (uint16_t)(b + 1))) {
    }
    uint32_t c = atomic_load(&c4);
    while (!atomic_compare_exchange_weak(&c4, &c, c + 1)) {
    }
    uint64_t d = atomic_load(&c8);
    while (!atomic_compare_exchange_weak(&c8, &d, d + 1)) {
    }
    return arg;
}

int main(void) {
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, inc, 0);
    for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
    assert(c1 == 2 && c2 == 2 && c4 == 2 && c8 == 2);
    return 0;
}
