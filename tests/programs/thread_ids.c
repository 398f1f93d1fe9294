/* Each thread has a thread id of its own (gettid() and syscall(SYS_gettid) agree), and main's
 * is the process id, as with real threads. 2 executions (the two stores to `shared`). */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

static pid_t ids[3][2];
volatile int shared;

static void record(long i) {
    ids[i][0] = gettid();
    ids[i][1] = (pid_t)syscall(SYS_gettid);
}

static void *worker(void *arg) {
    record((long)arg);
    shared = (int)(long)arg;
    return NULL;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, worker, (void *)1);
    pthread_create(&b, NULL, worker, (void *)2);
    record(0);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    for (int i = 0; i < 3; i++) assert(ids[i][0] == ids[i][1]);
    assert(ids[0][0] == getpid());
    assert(ids[1][0] != ids[0][0] && ids[2][0] != ids[0][0] && ids[1][0] != ids[2][0]);
    return 0;
}
