/* A record published with memcpy while main copies it out: main can see half of each. With
 * -DWORD_LOOP the copies are loops of 8-byte words, which the checker must explore alike. */
#include <assert.h>
#include <pthread.h>
#include <string.h>

struct rec { long a, b; };
static struct rec shared = {1, 1}, update = {2, 2};
static volatile size_t len = sizeof(struct rec); /* not a constant: memcpy is called, not inlined */

#ifdef WORD_LOOP
static void *copy(void *d, const void *s, size_t n) {
    volatile long *to = d;
    const volatile long *from = s;
    for (size_t i = 0; i < n / 8; i++) to[i] = from[i];
    return d;
}
#define memcpy copy
#endif

static void *writer(void *arg) {
    memcpy(&shared, &update, len);
    return arg;
}

int main(void) {
    pthread_t t;
    struct rec r;
    pthread_create(&t, 0, writer, 0);
    memcpy(&r, &shared, len);
    pthread_join(t, 0);
    assert(r.a == r.b);
    return 0;
}
