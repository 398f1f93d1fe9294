/* Write-to-read causality with dependencies: t2 passes on what it read of x through a data
 * dependency, t3 reads x again through an address dependency on what it read of y. Each
 * thread's accesses stay in program order, yet t3 may miss x = 1: on POWER a store reaches
 * threads one by one (not multi-copy atomic). */
#include <assert.h>
#include <pthread.h>

volatile int x, y;
int r1, r2, r3;

static void *t1(void *arg) {
    x = 1;
    return arg;
}

static void *t2(void *arg) {
    r1 = x;
    y = r1;
    return arg;
}

static void *t3(void *arg) {
    r2 = y;
    long zero;
    __asm__("xor %0,%1,%1" : "=r"(zero) : "r"((long)r2)); /* 0, computed from r2 */
    r3 = *(volatile int *)((char *)&x + zero);
    return arg;
}

int main(void) {
    pthread_t a, b, c;
    pthread_create(&a, 0, t1, 0);
    pthread_create(&b, 0, t2, 0);
    pthread_create(&c, 0, t3, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    pthread_join(c, 0);
    assert(!(r1 == 1 && r2 == 1 && r3 == 0));
    return 0;
}
