/* Double-checked locking: a singleton object created lazily by whichever thread asks first.
 *
 *     smc-run --model pso examples/dcl_singleton.c
 *     gcc -O2 -g -pthread -DFENCES examples/dcl_singleton.c -o /tmp/dcl_f && smc-run --model pso /tmp/dcl_f
 *
 * get_instance() first reads the shared pointer without the lock (the fast path, taken by every
 * call once the object exists). If it is null, it takes the mutex, looks again (another thread
 * may have created the object meanwhile), and if the pointer is still null allocates the
 * object, fills in its fields and only then publishes it by storing the pointer. Three threads
 * call get_instance() concurrently.
 *
 * Checked: every caller gets the published object and finds its fields initialised, and main
 * finds that exactly one object was created (assertions).
 *
 * Built plainly there are no fences. Under SC it is correct. Under TSO it is too: the creator's
 * stores reach memory in program order, so a thread that sees the pointer also sees the fields
 * written before it, and a reader's loads are not reordered with each other. Under PSO the
 * stores to the fields and to the pointer are to different locations and may reach memory in
 * either order: the pointer can be published while the fields still wait in the creator's
 * buffers (the mutex is released only afterwards), and a thread on the fast path gets a
 * half-built object.
 *
 * Built with -DFENCES there is an sfence between initialising the fields and publishing the
 * pointer, keeping the field stores ahead of the pointer store, which is all PSO needs; TSO
 * needs nothing. Expected: plain -> sc ok, tso ok, pso error; -DFENCES -> ok under all three. */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

#define NTHREADS 3

struct config {
    volatile int version;
    volatile int limit;
};

static struct config *volatile instance; /* the singleton, null until created */
static pthread_mutex_t create_lock = PTHREAD_MUTEX_INITIALIZER;
static int created; /* objects created; written only under create_lock */

static void store_store_fence(void) {
#ifdef FENCES
#if defined(__x86_64__)
    __asm__ volatile("sfence" ::: "memory");
#else
    __asm__ volatile("lwsync" ::: "memory"); /* POWER's store-store order */
#endif
#endif
}

static struct config *get_instance(void) {
    struct config *p = instance; /* fast path: no lock */
    if (p == 0) {
        pthread_mutex_lock(&create_lock);
        p = instance; /* second check, under the lock */
        if (p == 0) {
            p = malloc(sizeof *p);
            assert(p != 0);
            p->version = 1;
            p->limit = 100;
            store_store_fence(); /* the fields must reach memory before the pointer */
            instance = p;
            created++;
        }
        pthread_mutex_unlock(&create_lock);
    }
    return p;
}

static void *user(void *arg) {
    struct config *c = get_instance();
    assert(c == instance);
    assert(c->version == 1);
    assert(c->limit == 100);
    (void)arg;
    return 0;
}

int main(void) {
    pthread_t t[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        pthread_create(&t[i], 0, user, 0);
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(t[i], 0);
    assert(created == 1);
    return 0;
}
