/* Lamport's fast mutual exclusion algorithm (1987), two threads, each entering once.
 *
 *     smc-run --model tso examples/lamport.c
 *     gcc -O2 -g -pthread -DFENCES examples/lamport.c -o /tmp/lamport_f && smc-run --model tso /tmp/lamport_f
 *
 * The algorithm. Thread i (ids start at 1; 0 means "nobody") announces itself in b[i], then
 * writes its id to x and looks at y. If y is taken, someone is already on the way in: it backs
 * off until y is free and starts over. Otherwise it claims y and looks at x again. If x still
 * holds its own id, no one came after it and it enters at once (the fast path: a constant
 * number of accesses when there is no contention). If x changed, there is contention: it
 * withdraws its announcement, waits until every other thread has withdrawn too, and enters only
 * if y still holds its id (the last writer of y wins); otherwise it waits for y to be free and
 * starts over. On the way out it frees y and withdraws.
 *
 * Checked: mutual exclusion. The critical section is a locked increment of in_cs that must find
 * it zero; a locked instruction reads memory itself, so a second thread inside is always seen
 * (a plain in_cs++ could read the thread's own buffered value).
 *
 * Built plainly there are no fences. Under SC the algorithm is correct. Under TSO (and PSO) the
 * store "x = i" can still sit in the store buffer when the thread reads y, and "y = i" when it
 * reads x: thread 1 buffers x = 1 and y = 1, reads y = 0 from memory and x = 1 from its own
 * buffer; thread 2 does the same with 2; each sees the fast path free, and both enter.
 * Removing either one of the two fences below is enough to let this happen.
 *
 * Built with -DFENCES there is an mfence after "x = i" (before y is read) and after "y = i"
 * (before x is read): those are the two store->load orders the algorithm relies on, and an
 * mfence also drains the earlier store to b[i], so PSO needs nothing more.
 * Expected: plain -> sc ok, tso error, pso error; -DFENCES -> ok under all three. On POWER
 * (powerpc64le-linux-gnu-gcc, checked under power, its default model) the fences are syncs,
 * and -DFENCES adds an lwsync before the exit's stores: plain -> error, -DFENCES -> ok. */
#include <assert.h>
#include <pthread.h>

#define N 2 /* threads, with ids 1..N (N = 3 runs for more than ten minutes) */

static volatile int b[N + 1]; /* b[i]: thread i wants to enter */
static volatile int x, y;     /* y != 0: the gate is taken (by thread y) */
static int in_cs;             /* threads inside the critical section */

static void full_fence(void) {
#ifdef FENCES
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* mfence on x86-64, sync on POWER */
#endif
}

/* The critical section before the exit's stores: POWER's lwsync (x86-64 keeps stores in
 * order: nothing there) */
static void release_fence(void) {
#ifdef FENCES
    __atomic_thread_fence(__ATOMIC_RELEASE);
#endif
}

static void lock(int i) {
    for (;;) {
        b[i] = 1;
        x = i;
        full_fence(); /* x = i must be in memory before y is read */
        if (y != 0) {
            /* someone holds the gate: back off until it is free, then retry */
            b[i] = 0;
            while (y != 0) {
            }
            continue;
        }
        y = i;
        full_fence(); /* y = i must be in memory before x is read */
        if (x == i)
            return; /* fast path: nobody else came in meanwhile */
        /* contention: withdraw, wait for everyone else to withdraw */
        b[i] = 0;
        for (int j = 1; j <= N; j++) {
            while (b[j]) {
            }
        }
        if (y == i)
            return; /* we were the last to write y: we win */
        while (y != 0) {
        }
    }
}

static void unlock(int i) {
    y = 0;
    b[i] = 0;
}

static void *worker(void *arg) {
    int i = (int)(long)arg;
    lock(i);
    assert(__atomic_fetch_add(&in_cs, 1, __ATOMIC_SEQ_CST) == 0);
    __atomic_fetch_sub(&in_cs, 1, __ATOMIC_SEQ_CST);
    release_fence();
    unlock(i);
    return 0;
}

int main(void) {
    pthread_t t[N];
    for (long i = 0; i < N; i++)
        pthread_create(&t[i], 0, worker, (void *)(i + 1));
    for (int i = 0; i < N; i++)
        pthread_join(t[i], 0);
    return 0;
}
