/* Peterson's mutual exclusion with spin loops: correct under SC. */
#include <assert.h>
#include <pthread.h>

volatile int flag[2], turn, in_cs;

static void *worker(void *arg) {
    int me = (int)(long)arg, other = 1 - me;
    flag[me] = 1;
    turn = other;
    while (flag[other] == 1 && turn == other) {
    }
    in_cs++;
    assert(in_cs == 1);
    in_cs--;
    flag[me] = 0;
    return 0;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, worker, (void *)0L);
    pthread_create(&b, 0, worker, (void *)1L);
    pthread_join(a, 0);
    pthread_join(b, 0);
    return 0;
}
