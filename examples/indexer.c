/* The "indexer" benchmark idea: threads insert keys into one shared open-addressing hash table.
 *
 *     smc-run --model tso examples/indexer.c
 *     gcc -O2 -g -pthread -DTHREADS=13 examples/indexer.c -o /tmp/indexer && smc-run /tmp/indexer
 *
 * THREADS threads (default 8; the classic benchmark uses 13) each insert ITEMS distinct non-zero
 * keys into a table of SIZE slots, 0 meaning empty. A thread claims a slot with one
 * compare-and-swap from 0 to its key; if another key got there first it probes the next slot
 * (linear probing). Thread t's k-th key is 1 + 13 t + 21 k, so all keys differ. Home slots
 * rarely coincide: up to 5 threads never; from then on each extra thread t brings one collision,
 * its last key against the first key of thread t - 5, and the two race for that slot. The
 * collisions are independent, so the checker explores 2^(THREADS-5) executions from 6 threads
 * on: 8 for the default (well under a second), 256 for 13 threads (about 9 s).
 *
 * Checked: no insertion runs out of slots, and afterwards every key is in the table exactly
 * once and nothing else is: no insertion was lost or overwritten. The CAS is a lock-prefixed
 * instruction, a full fence, so the program is correct under sc, tso and pso alike. */
#include <assert.h>
#include <pthread.h>

#ifndef THREADS
#define THREADS 8
#endif
#define ITEMS 4
#define SIZE 128

_Static_assert(THREADS >= 1 && THREADS <= 21, "keys stay distinct only for up to 21 threads");

static int table[SIZE];

static int key_of(int thread, int k) { return 1 + 13 * thread + 21 * k; }

static unsigned slot_of(int key) { return ((unsigned)key * 37u) % SIZE; }

static void insert(int key) {
    unsigned slot = slot_of(key);
    for (int probes = 0; probes < SIZE; probes++) {
        int expected = 0;
        if (__atomic_compare_exchange_n(&table[slot], &expected, key, 0, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST))
            return;
        slot = (slot + 1) % SIZE; /* taken: try the next one */
    }
    assert(!"hash table full");
}

static void *indexer(void *arg) {
    int me = (int)(long)arg;
    for (int k = 0; k < ITEMS; k++) insert(key_of(me, k));
    return 0;
}

int main(void) {
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++) pthread_create(&t[i], 0, indexer, (void *)i);
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], 0);
    int seen[THREADS][ITEMS] = {{0}};
    int used = 0;
    for (int s = 0; s < SIZE; s++) { /* one pass over the table: which key sits where */
        int key = table[s];
        if (key == 0) continue;
        used++;
        int owner = -1, item = -1;
        for (int i = 0; i < THREADS; i++)
            for (int k = 0; k < ITEMS; k++)
                if (key_of(i, k) == key) owner = i, item = k;
        assert(owner >= 0);           /* no key that nobody inserted */
        assert(!seen[owner][item]);   /* nothing stored twice */
        seen[owner][item] = 1;
    }
    assert(used == THREADS * ITEMS); /* so every key is there: nothing lost or overwritten */
    return 0;
}
