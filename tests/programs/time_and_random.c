/* Stores whose addresses come from random bytes and the clock: every execution must get the
 * same bytes and read the same times along the same schedule, or the second execution (the
 * read of x reversed with the worker's write) could not replay the first one's prefix. */
#include <assert.h>
#include <pthread.h>
#include <sys/random.h>
#include <time.h>

int x, a[2][8];

static void *worker(void *arg) {
    (void)arg;
    x = 1;
    return 0;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, worker, 0);
    unsigned char r[8];
    assert(getrandom(r, sizeof r, 0) == sizeof r);
    for (int i = 0; i < 8; i++) a[r[i] & 1][i] = 1;
    struct timespec before, now;
    clock_gettime(CLOCK_MONOTONIC, &before);
    for (int i = 0; i < 8; i++) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        a[(now.tv_nsec / 1000) & 1][i] += 1;
    }
    assert(now.tv_sec > before.tv_sec || now.tv_nsec > before.tv_nsec);
    int seen = x;
    pthread_join(t, 0);
    assert(seen == 0 || seen == 1);
    return 0;
}
