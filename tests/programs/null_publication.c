/* The reader dereferences the shared pointer before the writer has published it. */
#include <pthread.h>
#include <stdlib.h>

struct item {
    int value;
};
struct item *volatile shared;

static void *publisher(void *arg) {
    (void)arg;
    struct item *it = malloc(sizeof *it);
    it->value = 7;
    shared = it;
    return 0;
}

static void *consumer(void *arg) {
    (void)arg;
    return (void *)(long)shared->value;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, publisher, 0);
    pthread_create(&b, 0, consumer, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    return 0;
}
