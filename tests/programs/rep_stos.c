/* A string instruction with 32-bit addresses (addr32 rep stosb) on memory another thread
 * shares: not modelled, a clear error. On main's own stack, before the thread, it runs. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>

static char *low; /* below 4 GiB, where a 32-bit address reaches */

static void fill32(void *d, unsigned long n) {
    __asm__ volatile("addr32 rep stosb" : "+D"(d), "+c"(n) : "a"(0) : "memory");
}

static void *t(void *a) {
    fill32(low, 64);
    return a;
}

int main(void) {
    low = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
    if (low == MAP_FAILED || (uintptr_t)low >> 32) return 3;
    fill32(low, 64);
    pthread_t x;
    pthread_create(&x, 0, t, 0);
    pthread_join(x, 0);
    return low[0];
}
