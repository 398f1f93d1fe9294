/* A parker: a one-permit event, like Java's LockSupport.park/unpark, two threads.
 *
 *     smc-run --model tso examples/parker.c
 *     gcc -O2 -g -pthread -DFENCES examples/parker.c -o /tmp/parker_f && smc-run --model tso /tmp/parker_f
 *
 * unpark() makes the permit available; park() consumes it, blocking until there is one. The
 * slow path is a pthread mutex and condition variable; both operations also have a fast path on
 * plain flags, so that the common cases take no lock:
 *   park():   announce "I may sleep" (parked = 1), then look at the permit: if it is there, take
 *             it and return without locking. Otherwise lock, and wait on the condition variable
 *             until the permit shows up.
 *   unpark(): publish the permit (permit = 1), then look at parked: if nobody announced they
 *             may sleep, return without locking or signalling. Otherwise lock and signal.
 * The two fast paths form Dekker's pattern: each thread stores its own flag and then loads the
 * other's, relying on at least one of them seeing the other's store. Under SC that holds: either
 * park sees the permit, or unpark sees parked = 1 and signals under the mutex (the permit is
 * re-checked under the same mutex before waiting, so the signal cannot fall in between).
 *
 * Checked: a park never misses an unpark. One thread parks once, the other unparks once; a lost
 * wake-up leaves the parker waiting on the condition variable for ever, which the checker
 * reports as a deadlock. The parker also asserts that the permit has been consumed when park
 * returns, and that the message the unparker wrote before unparking is visible.
 *
 * Built plainly there are no fences. Under TSO (and PSO) unpark's "permit = 1" can still sit in
 * its store buffer when it reads parked: park stores parked = 1 and finds no permit; unpark
 * buffers permit = 1 and reads parked as 0 (or before park stored it), so it returns without
 * signalling; park locks, finds the permit still not in memory, and waits for a signal that
 * never comes. Under PSO the message can also arrive after the permit (an assertion failure).
 *
 * Built with -DFENCES there is an mfence in unpark between "permit = 1" and the load of parked.
 * park's fast path needs none: if its "parked = 1" is late and its first look at the permit is
 * stale, it takes the mutex - a full fence - and looks again, and by then the fenced permit is
 * in memory (the checker confirms that a fence there changes nothing). Under PSO the
 * unparker's message store and its permit store could also be reordered, and the mfence after
 * "permit = 1" comes too late for that, so an sfence before it keeps the message ahead of the
 * permit (without it, the parker's message assertion fails under PSO).
 * Expected: plain -> sc ok, tso error, pso error; -DFENCES -> ok under all three. */
#include <assert.h>
#include <pthread.h>

static volatile int permit; /* 1: an unpark has not been consumed yet */
static volatile int parked; /* 1: the parker may be about to sleep */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;

static volatile int message; /* handed from the unparker to the parker */

static void full_fence(void) {
#ifdef FENCES
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* mfence on x86-64, sync on POWER */
#endif
}

static void store_store_fence(void) {
#ifdef FENCES
#if defined(__x86_64__)
    __asm__ volatile("sfence" ::: "memory");
#else
    __asm__ volatile("lwsync" ::: "memory"); /* POWER's store-store order */
#endif
#endif
}

static void park(void) {
    parked = 1;
    /* no fence needed: a stale "no permit" here is re-checked after the mutex (a full fence) */
    if (permit) { /* fast path: the permit is already there */
        permit = 0;
        parked = 0;
        return;
    }
    pthread_mutex_lock(&lock);
    while (!permit)
        pthread_cond_wait(&wake, &lock);
    permit = 0;
    parked = 0;
    pthread_mutex_unlock(&lock);
}

static void unpark(void) {
    store_store_fence(); /* earlier stores (the message) must reach memory before the permit */
    permit = 1;
    full_fence(); /* the permit must be seen before parked is read */
    if (parked) { /* slow path: the parker may be sleeping, wake it */
        pthread_mutex_lock(&lock);
        pthread_cond_signal(&wake);
        pthread_mutex_unlock(&lock);
    }
}

static void *parker(void *arg) {
    (void)arg;
    park();
    assert(permit == 0);   /* we consumed the one permit */
    assert(message == 42); /* and see what was written before it was given */
    return 0;
}

static void *unparker(void *arg) {
    (void)arg;
    message = 42;
    unpark();
    return 0;
}

int main(void) {
    pthread_t p, u;
    pthread_create(&p, 0, parker, 0);
    pthread_create(&u, 0, unparker, 0);
    pthread_join(p, 0);
    pthread_join(u, 0);
    return 0;
}
