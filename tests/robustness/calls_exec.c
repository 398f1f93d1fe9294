/* Replaces itself with another program once its thread is done. */
#include <pthread.h>
#include <unistd.h>

static void *work(void *arg) { return arg; }

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, work, 0);
    pthread_join(t, 0);
    execl("/bin/true", "true", (char *)0);
    return 1;
}
