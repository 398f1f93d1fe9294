/* A thread ends the whole process with exit(0) while main still waits for it. */
#include <pthread.h>
#include <stdlib.h>

volatile int flag;

static void *quitter(void *arg) {
    flag = 1;
    exit(0);
    return arg;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, quitter, 0);
    pthread_join(t, 0);
    return 1; /* never reached */
}
