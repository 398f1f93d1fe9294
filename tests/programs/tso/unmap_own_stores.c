/* Each thread stores into a page of its own and unmaps it while the store may still be in its
 * buffer (tso, pso), then goes on with a visible load. Correct under every model: the system
 * call comes after the thread's stores on the processor. (The checker crashed on it: the
 * store's value was read for the report at the thread's next stop, the page gone.) */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>

static atomic_int flag;

static void *work(void *arg) {
    int *page = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert(page != MAP_FAILED);
    page[0] = 1;
    munmap(page, 4096);
    (void)atomic_load_explicit(&flag, memory_order_relaxed);
    return arg;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, work, 0);
    work(0);
    pthread_join(t, 0);
    return 0;
}
