/* IRIW: two readers see two independent writes in opposite orders. Forbidden under SC, TSO and
 * PSO alike (stores become visible to all other threads at once). */
#include <assert.h>
#include <pthread.h>

volatile int x, y;
int r1, r2, r3, r4;

static void *wx(void *arg) { (void)arg; x = 1; return 0; }
static void *wy(void *arg) { (void)arg; y = 1; return 0; }
static void *rxy(void *arg) { (void)arg; r1 = x; r2 = y; return 0; }
static void *ryx(void *arg) { (void)arg; r3 = y; r4 = x; return 0; }

int main(void) {
    pthread_t t[4];
    pthread_create(&t[0], 0, wx, 0);
    pthread_create(&t[1], 0, wy, 0);
    pthread_create(&t[2], 0, rxy, 0);
    pthread_create(&t[3], 0, ryx, 0);
    for (int i = 0; i < 4; i++) pthread_join(t[i], 0);
    assert(!(r1 == 1 && r2 == 0 && r3 == 1 && r4 == 0));
    return 0;
}
