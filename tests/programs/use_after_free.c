/* One thread unlinks a record and frees it while another may still read it through the
 * pointer it loaded before: the read after the free finds what the allocator wrote there. */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

struct record {
    long value;
    long spare;
};

static struct record *volatile current;

static void *retire(void *arg) {
    struct record *r = current;
    current = NULL;
    free(r);
    return arg;
}

static void *use(void *arg) {
    struct record *r = current;
    if (r) {
        long v = r->value;
        assert(v == 42);
    }
    return arg;
}

int main(void) {
    struct record *r = malloc(sizeof *r);
    r->value = 42;
    current = r;
    pthread_t a, b;
    pthread_create(&a, NULL, retire, NULL);
    pthread_create(&b, NULL, use, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return 0;
}
