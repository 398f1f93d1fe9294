/* Stores to a variable picked at random in each execution, before the stores the exploration
 * reorders: replaying an earlier execution's first events meets a different event, which the
 * checker must report instead of exploring on as if nothing had changed. */
#include <pthread.h>
#include <sys/random.h>

volatile int a[8], z;

static void *writer(void *arg) {
    unsigned char r = 0;
    if (getrandom(&r, 1, 0) != 1) r = 0;
    a[r & 7] = 1;
    z = 1;
    z = 2;
    z = 3;
    return arg;
}

static void *reader(void *arg) {
    int sum = 0;
    for (int i = 0; i < 4; i++) sum += z;
    return (void *)(long)sum;
}

int main(void) {
    pthread_t w, r;
    pthread_create(&w, 0, writer, 0);
    pthread_create(&r, 0, reader, 0);
    pthread_join(w, 0);
    pthread_join(r, 0);
    return 0;
}
