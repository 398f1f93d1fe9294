/* Two threads add one to a counter: under a mutex, or, when the program's arguments are
 * exactly "racy" and "two words", each loads and then stores, and an update is lost. */
#include <assert.h>
#include <pthread.h>
#include <string.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int racy, counter;

static void *add(void *arg) {
    if (!racy) pthread_mutex_lock(&m);
    int v = counter;
    counter = v + 1;
    if (!racy) pthread_mutex_unlock(&m);
    return arg;
}

int main(int argc, char **argv) {
    racy = argc == 3 && !strcmp(argv[1], "racy") && !strcmp(argv[2], "two words");
    pthread_t t;
    pthread_create(&t, 0, add, 0);
    add(0);
    pthread_join(t, 0);
    assert(counter == 2);
    return 0;
}
