/* Changes the working directory in each of its 2 executions: each must start in the one the
 * program was started in (where cwd_marker is), as a process of its own would. */
#include <assert.h>
#include <pthread.h>
#include <unistd.h>

volatile int shared;

static void *writer(void *arg) {
    shared = 1;
    return arg;
}

int main(void) {
    assert(access("cwd_marker", F_OK) == 0);
    assert(chdir("/") == 0);
    pthread_t t;
    pthread_create(&t, 0, writer, 0);
    int seen = shared;
    pthread_join(t, 0);
    return seen < 0;
}
