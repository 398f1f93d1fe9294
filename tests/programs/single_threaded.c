/* glibc's __libc_single_threaded: 1 until the process creates its first thread, 0 from then
 * on (libstdc++ and glibc read it to skip atomic instructions). Two threads each count once
 * with the flag's say, as libstdc++'s reference counts do. */
#include <assert.h>
#include <pthread.h>
#include <sys/single_threaded.h>

static int count;

static void add(void) {
    if (__libc_single_threaded)
        count++; /* no other thread: a plain increment */
    else
        __atomic_fetch_add(&count, 1, __ATOMIC_ACQ_REL);
}

static void *worker(void *arg) {
    add();
    return arg;
}

int main(void) {
    assert(__libc_single_threaded == 1);
    pthread_t t;
    pthread_create(&t, 0, worker, 0);
    assert(__libc_single_threaded == 0);
    add();
    pthread_join(t, 0);
    assert(count == 2);
    return 0;
}
