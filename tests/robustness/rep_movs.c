/* An inlined rep movsb that copies into a shared global: the runtime carries it out in pieces
 * (events), and main sees the copy after the join. */
#include <pthread.h>
#include <string.h>

char shared[64];

static void *copy(void *arg) {
    char local[64];
    memset(local, 7, sizeof local);
    void *d = shared, *s = local;
    unsigned long n = sizeof local;
    __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
    return arg;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, copy, 0);
    pthread_join(t, 0);
    return shared[0] == 7 ? 0 : 1;
}
