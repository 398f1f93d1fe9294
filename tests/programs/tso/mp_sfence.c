/* Message passing with an sfence between the data and the flag: under pso the two stores may
 * otherwise reach memory out of order (NO_FENCE); the store fence keeps them in order. */
#include <assert.h>
#include <pthread.h>

volatile int data, flag;

static void *writer(void *arg) {
    data = 1;
#ifndef NO_FENCE
    __asm__ volatile("sfence" ::: "memory");
#endif
    flag = 1;
    return arg;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, writer, 0);
    if (flag) assert(data == 1);
    pthread_join(t, 0);
    return 0;
}
