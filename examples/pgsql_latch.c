/* A PostgreSQL-style latch: two processes hand one unit of work back and forth.
 *
 *     smc-run --model pso examples/pgsql_latch.c
 *     gcc -O2 -g -pthread -DFENCES examples/pgsql_latch.c -o /tmp/latch && smc-run --model pso /tmp/latch
 *
 * Each side owns a latch (a "wake up" flag another side may set) and a work flag. To hand the
 * work over, a side publishes the other side's work flag and then sets the other side's latch.
 * The owner of a latch waits for it, resets it, and only then looks for work; if it finds none,
 * the wake-up was spurious and it goes back to waiting. Each side takes the work ROUNDS times.
 *
 * Checked: every hand-over is seen (no lost wake-up: otherwise both sides wait on their latches
 * for ever, which the checker reports as a hang), and main's assertion that both sides did all
 * their rounds.
 *
 * Built plainly there are no fences. Under SC it is correct. Under TSO it is too: a side's
 * stores reach memory in program order, so by the time the other side sees its latch set it
 * also sees the work flag published before it, and the owner's latch reset reaches memory
 * before anything that lets the other side set that latch again. Under PSO the stores
 * "work[other] = 1" and "latch[other] = 1" go to different locations and may reach memory in
 * either order: the other side wakes up, resets its latch, finds no work, and waits again; the
 * work flag arrives afterwards but nobody will set the latch any more. The wake-up is lost.
 * (PSO also lets a side's latch reset reach memory after its "latch[other] = 1", so that the
 * reset can wipe out the next wake-up the other side sends back.)
 *
 * Built with -DFENCES, an sfence before setting the other side's latch keeps every earlier store
 * (the latch reset and both work flags) ahead of it, which is all PSO needs; TSO needs nothing
 * more. Expected: plain -> sc ok, tso ok, pso error; -DFENCES -> ok under all three. */
#include <assert.h>
#include <pthread.h>

#define ROUNDS 2

static volatile int latch[2]; /* latch[i]: side i has been woken up */
static volatile int work[2];  /* work[i]: side i has work to do */
static int done[2];           /* rounds completed by each side (private to it) */

static void store_store_fence(void) {
#ifdef FENCES
#if defined(__x86_64__)
    __asm__ volatile("sfence" ::: "memory");
#else
    __asm__ volatile("lwsync" ::: "memory"); /* POWER's store-store order */
#endif
#endif
}

static void set_latch(int who) {
    store_store_fence();
    latch[who] = 1;
}

static void *side(void *arg) {
    int me = (int)(long)arg, other = 1 - me;
    while (done[me] < ROUNDS) {
        while (!latch[me]) {
            /* wait until someone sets our latch */
        }
        latch[me] = 0; /* reset, then look for work */
        if (work[me]) {
            work[me] = 0;
            done[me]++;
            work[other] = 1; /* publish work for the other side... */
            set_latch(other); /* ...and wake it up */
        }
    }
    return 0;
}

int main(void) {
    pthread_t t[2];
    work[0] = 1; /* side 0 starts with the work */
    latch[0] = 1;
    pthread_create(&t[0], 0, side, (void *)0L);
    pthread_create(&t[1], 0, side, (void *)1L);
    pthread_join(t[0], 0);
    pthread_join(t[1], 0);
    assert(done[0] == ROUNDS && done[1] == ROUNDS);
    return 0;
}
