/* A reference count decremented with a plain read-modify-write and read again to decide who
 * frees: both threads can read zero before either frees, and the second free aborts. */
#include <pthread.h>
#include <stdlib.h>

struct object {
    volatile int refs;
    int payload;
};

static struct object *shared;

static void *release(void *arg) {
    (void)arg;
    shared->refs = shared->refs - 1;
    if (shared->refs == 0) free(shared);
    return NULL;
}

int main(void) {
    shared = malloc(sizeof *shared);
    shared->refs = 2;
    shared->payload = 7;
    pthread_t a, b;
    pthread_create(&a, NULL, release, NULL);
    pthread_create(&b, NULL, release, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return 0;
}
