/* How many times main reads a flag depends on where its last argument and a thread-local lie
 * (the initial stack, the TLS): those are the same in every process of a check, so that the
 * checker's replay of an error a worker found meets the same reads. The flag's store may come
 * first, and the assertion fails. */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>

static volatile int flag;
static __thread int own;

static void *set(void *unused) {
    flag = 1;
    return unused;
}

int main(int argc, char **argv) {
    pthread_t t;
    pthread_create(&t, 0, set, 0);
    uintptr_t layout = (uintptr_t)argv[argc - 1] + ((uintptr_t)&own >> 4);
    for (uintptr_t i = 0; i < (layout & 15); i++) (void)flag;
    assert(flag == 0);
    pthread_join(t, 0);
    return 0;
}
