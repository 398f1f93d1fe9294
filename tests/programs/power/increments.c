/* Two threads each read a flag, set it, and, if they saw it clear, take a ticket with an
 * atomic increment (lwarx/stwcx. on POWER). Both may see it clear, and either may then take
 * the second ticket; built with SECOND_IS_0, main asserts that thread 0 never does, which
 * every model here refutes. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>

static volatile int flag;
static atomic_int tickets;
static int ticket[2] = {-1, -1};

static void *take(void *arg) {
    long id = (long)arg;
    int seen = flag;
    flag = 1;
    if (seen == 0) ticket[id] = atomic_fetch_add(&tickets, 1);
    return 0;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, take, (void *)0);
    pthread_create(&b, 0, take, (void *)1);
    pthread_join(a, 0);
    pthread_join(b, 0);
#ifdef SECOND_IS_0
    assert(ticket[0] != 1);
#else
    assert(ticket[0] != 1 || ticket[1] == 0);
#endif
    return 0;
}
