/* Loads ./plugin.so (tests/programs/plugin.c) in each of its 2 executions and calls into it:
 * as in a process of its own, the library is loaded afresh and its data starts at 40. */
#include <assert.h>
#include <dlfcn.h>
#include <pthread.h>

volatile int shared;

static void *writer(void *arg) {
    shared = 1;
    return arg;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, writer, 0);
    int seen = shared;
    void *lib = dlopen("./plugin.so", RTLD_NOW);
    assert(lib);
    int (*add)(int) = (int (*)(int))dlsym(lib, "plugin_add");
    assert(add && add(seen + 1) == 41 + seen);
    pthread_join(t, 0);
    return 0;
}
