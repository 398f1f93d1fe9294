/* SV-COMP's fib_bench with NUM=2: main checks while the two threads run and returns without
 * joining them. Its exit comes after the threads' events, so it explores as many executions
 * as the same program joining them after the check (-DJOIN_AFTER). With -DAT_EXIT main first
 * registers an exit handler, which may touch what the threads use: the exit then keeps its
 * place among their events. With -DSTUCK a third thread waits forever on a condition variable
 * that nobody signals: not a deadlock, since the exit ends the process. */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

#define NUM 2
volatile int i = 1, j = 1;

static void *t1(void *arg) {
    for (int k = 0; k < NUM; k++) i = i + j;
    return arg;
}

static void *t2(void *arg) {
    for (int k = 0; k < NUM; k++) j = j + i;
    return arg;
}

#ifdef STUCK
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static void *stuck(void *arg) {
    pthread_mutex_lock(&m);
    for (;;) pthread_cond_wait(&c, &m);
    return arg;
}
#endif

#ifdef AT_EXIT
static void bye(void) { i = 0; }
#endif

int main(void) {
    pthread_t a, b;
#ifdef AT_EXIT
    atexit(bye);
#endif
#ifdef STUCK
    pthread_t s;
    pthread_create(&s, 0, stuck, 0);
#endif
    pthread_create(&a, 0, t1, 0);
    pthread_create(&b, 0, t2, 0);
    int vi = i, vj = j;
    assert(vi <= 8 && vj <= 8); /* F(2 NUM + 2) */
#ifdef JOIN_AFTER
    pthread_join(a, 0);
    pthread_join(b, 0);
#endif
    return 0;
}
