/* main may spin forever on a local while the worker may fail its assertion: a hang does not
 * stop the worker, and with --keep-going both are reported. */
#include <assert.h>
#include <pthread.h>

static int flag, data;

static void *worker(void *arg) {
    data = 1;
    assert(flag == 0); /* fails when main set the flag first */
    return arg;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, worker, 0);
    if (data == 0) /* the worker has not written yet: spin forever, touching no memory */
        for (;;) __asm__ volatile("");
    flag = 1;
    pthread_join(t, 0);
    return 0;
}
