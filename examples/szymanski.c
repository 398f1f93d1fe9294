/* Szymanski's mutual exclusion algorithm (1988), two threads, each entering once.
 *
 *     smc-run --model tso examples/szymanski.c
 *     gcc -O2 -g -pthread -DFENCES examples/szymanski.c -o /tmp/szymanski_f && smc-run --model tso /tmp/szymanski_f
 *
 * The algorithm. Each thread has one shared flag, which only it writes, holding its stage:
 *   0  outside;
 *   1  wants to enter: waits until no one is in the waiting room (no flag is 3 or 4);
 *   3  in the waiting room with the door open: if someone else still wants to enter (flag 1),
 *   2  it waits, door open, until someone has closed the door (some flag is 4);
 *   4  door closed: waits until every thread with a smaller id is outside the waiting room
 *      (flag 0 or 1), then enters the critical section.
 * On the way out a thread waits until every thread with a larger id has left the door states
 * (flag not 2 or 3), then sets its flag back to 0.
 *
 * Checked: mutual exclusion. The critical section is a locked increment of in_cs that must find
 * it zero; a locked instruction reads memory itself, so a second thread inside is always seen
 * (a plain in_cs++ could read the thread's own buffered value).
 *
 * Built plainly there are no fences. Under SC the algorithm is correct. Under TSO (and PSO) a
 * thread reads the other's flag while its own last flag store is still in its buffer: both
 * threads store flag = 1, both read the other's flag as 0 from memory and store 3, both see 0
 * again (no one wants to enter) and store 4, and then thread 1 still reads flag[0] as 0 while
 * thread 0's 4 waits in its buffer: both are in the critical section.
 *
 * Built with -DFENCES there is an mfence after the stage-1 store (before the waiting room is
 * checked) and after the stage-3 store (before the other flag is compared with 1); without
 * either one, the checker finds two threads in the critical section. The later stores (2 and 4)
 * need no fence with two threads: once the fenced 3 is in memory, a stale read of the flag shows
 * 3 instead of 2 or 4, which only makes the other thread wait longer. A thread stores to one
 * location only (its flag), so PSO has no store->store reordering to add and needs no more than
 * TSO. (Without fences, some executions also end with a thread waiting for ever in stage 2 for
 * a 4 it never sees, which the checker reports as a hang.)
 * Expected: plain -> sc ok, tso error, pso error; -DFENCES -> ok under all three.
 * On POWER (powerpc64le-linux-gnu-gcc, checked under power, its default model) the fences are
 * syncs, and -DFENCES adds an lwsync before the exit protocol: plain -> error, -DFENCES -> ok. */
#include <assert.h>
#include <pthread.h>

static volatile int flag[2]; /* flag[i]: the stage of thread i, as above */
static int in_cs;            /* threads inside the critical section */

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

static void *worker(void *arg) {
    int me = (int)(long)arg, other = 1 - me;
    int f;

    flag[me] = 1;
    full_fence(); /* "I want to enter" must be seen before the waiting room is checked */
    while (flag[other] >= 3) { /* wait for the waiting room to be empty */
    }
    flag[me] = 3;
    full_fence(); /* "I am in the waiting room" must be seen before flag[other] is read */
    if (flag[other] == 1) { /* someone else wants in: wait for the door to close */
        flag[me] = 2;
        while (flag[other] != 4) {
        }
    }
    flag[me] = 4;
    if (me == 1) {
        while (flag[0] >= 2) { /* threads with smaller ids go first */
        }
    }

    assert(__atomic_fetch_add(&in_cs, 1, __ATOMIC_SEQ_CST) == 0);
    __atomic_fetch_sub(&in_cs, 1, __ATOMIC_SEQ_CST);
    release_fence();

    if (me == 0) {
        do { /* let threads with larger ids leave the door states first */
            f = flag[1];
        } while (f == 2 || f == 3);
    }
    flag[me] = 0;
    return 0;
}

int main(void) {
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        pthread_create(&t[i], 0, worker, (void *)i);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], 0);
    return 0;
}
