/* An exit handler registered during an execution runs when that execution exits. Two threads
 * store to one variable; the handler crashes (SIGABRT) when the second thread's store came last:
 * one of the two executions fails, and only because the handler ran. */
#include <pthread.h>
#include <stdlib.h>

volatile int x;

static void check_last_store(void) {
    if (x == 2) abort();
}

static void *writer(void *arg) {
    x = (int)(long)arg;
    return NULL;
}

int main(void) {
    atexit(check_last_store);
    pthread_t a, b;
    pthread_create(&a, NULL, writer, (void *)1);
    pthread_create(&b, NULL, writer, (void *)2);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return 0;
}
