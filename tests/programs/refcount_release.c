/* The same reference count done right: the thread whose atomic decrement takes it to zero
 * frees the object, once. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

struct object {
    atomic_int refs;
    int payload;
};

static struct object *shared;

static void *release(void *arg) {
    (void)arg;
    if (atomic_fetch_sub(&shared->refs, 1) == 1) free(shared);
    return NULL;
}

int main(void) {
    shared = malloc(sizeof *shared);
    atomic_init(&shared->refs, 2);
    shared->payload = 7;
    pthread_t a, b;
    pthread_create(&a, NULL, release, NULL);
    pthread_create(&b, NULL, release, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return 0;
}
