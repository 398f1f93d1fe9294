/* A buffer filled with `rep stosb` while main copies it out with `rep movsb`, as compilers and
 * Rust's std emit them for memset and memcpy: main can see it half filled. */
#include <assert.h>
#include <pthread.h>

static char shared[16] __attribute__((aligned(8)));

static void fill(void *d, int c, unsigned long n) {
    __asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
}
static void copy(void *d, const void *s, unsigned long n) {
    __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}

static void *writer(void *arg) {
    fill(shared, 1, sizeof shared);
    return arg;
}

int main(void) {
    pthread_t t;
    char r[16];
    pthread_create(&t, 0, writer, 0);
    copy(r, shared, sizeof r);
    pthread_join(t, 0);
    assert(r[0] == r[15]);
    return 0;
}
