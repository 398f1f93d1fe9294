/* A record whose fields one thread writes and another reads back to front, through a pointer:
 * at -O2 each access is a 3- or 4-byte instruction right after another, none long enough for
 * a jump of its own. Under sc and tso the reader that sees the last field written sees the
 * others; under pso the stores may reach memory out of order. */
#include <assert.h>
#include <pthread.h>

struct record {
    long id;
    volatile long a, b, c; /* (volatile: one access each, not one wide store) */
};

static struct record shared = {.id = 6};

static void *writer(void *p) {
    struct record *r = p;
    long v = r->id + 1;
    r->a = v;
    r->b = v;
    r->c = v;
    return 0;
}

static void *reader(void *p) {
    struct record *r = p;
    long c = r->c, b = r->b, a = r->a;
    if (c != 0) assert(a == c && b == c);
    return 0;
}

int main(void) {
    pthread_t w, rd;
    pthread_create(&w, 0, writer, &shared);
    pthread_create(&rd, 0, reader, &shared);
    pthread_join(w, 0);
    pthread_join(rd, 0);
    return 0;
}
