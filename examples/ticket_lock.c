/* A ticket spin lock built on lock xadd: mutual exclusion holds and the spin loops end.
 *     smc-run examples/ticket_lock.c */
#include <assert.h>
#include <pthread.h>

static unsigned next_ticket, now_serving;
static volatile int inside;

static void lock(void) {
    unsigned me = __atomic_fetch_add(&next_ticket, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&now_serving, __ATOMIC_ACQUIRE) != me) {
    }
}

static void unlock(void) { __atomic_fetch_add(&now_serving, 1, __ATOMIC_RELEASE); }

static void *worker(void *arg) {
    (void)arg;
    lock();
    inside++;
    assert(inside == 1);
    inside--;
    unlock();
    return 0;
}

int main(void) {
    pthread_t t[3];
    for (int i = 0; i < 3; i++) pthread_create(&t[i], 0, worker, 0);
    for (int i = 0; i < 3; i++) pthread_join(t[i], 0);
    return 0;
}
