/* Maps a page at one fixed address in each of its 2 executions: the address must be free and
 * the page fresh each time, as in a process of its own. */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <sys/mman.h>

#define HINT ((void *)0x600000000000ul)

volatile int shared;

static void *writer(void *arg) {
    shared = 1;
    return arg;
}

int main(void) {
    char *page = mmap(HINT, 4096, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    assert(page == HINT);
    assert(page[0] == 0);
    page[0] = 1;
    pthread_t t;
    pthread_create(&t, 0, writer, 0);
    int seen = shared;
    pthread_join(t, 0);
    return seen < 0;
}
