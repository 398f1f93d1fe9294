/* Two tellers move money between accounts without a lock. Run:
 *     smc-run examples/bank.c
 * The checker finds the interleaving in which a transfer is lost. */
#include <assert.h>
#include <pthread.h>

static volatile int alice = 100, bob = 100;

static void *deposit_to_bob(void *arg) {
    (void)arg;
    int a = alice, b = bob;
    alice = a - 10;
    bob = b + 10;
    return 0;
}

static void *deposit_to_alice(void *arg) {
    (void)arg;
    int a = alice, b = bob;
    alice = a + 20;
    bob = b - 20;
    return 0;
}

int main(void) {
    pthread_t t1, t2;
    pthread_create(&t1, 0, deposit_to_bob, 0);
    pthread_create(&t2, 0, deposit_to_alice, 0);
    pthread_join(t1, 0);
    pthread_join(t2, 0);
    assert(alice + bob == 200); /* money is neither created nor destroyed */
    return 0;
}
