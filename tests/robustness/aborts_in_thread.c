/* abort() from a thread when it sees the other thread's flag. */
#include <pthread.h>
#include <stdlib.h>

volatile int flag;

static void *watcher(void *arg) {
    if (flag) abort();
    return arg;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, watcher, 0);
    flag = 1;
    pthread_join(t, 0);
    return 0;
}
