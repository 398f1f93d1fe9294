/* Threads created and joined in rounds, as a program that hands out work in batches does: a
 * joined thread's slot serves the next round's thread. Each round, two workers add to a
 * count and meet main at a barrier set up for the round. Plain additions lose an update; with
 * -DLOCKED they take a mutex and the count is right. */
#include <assert.h>
#include <pthread.h>

#define ROUNDS 2
#define WORKERS 2

static pthread_barrier_t meet;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int count;
static int done[WORKERS];

static void *work(void *arg) {
    int id = (int)(long)arg;
#ifdef LOCKED
    pthread_mutex_lock(&lock);
    count++;
    pthread_mutex_unlock(&lock);
#else
    count++;
#endif
    done[id]++;
    pthread_barrier_wait(&meet);
    return NULL;
}

int main(void) {
    for (int round = 1; round <= ROUNDS; round++) {
        pthread_barrier_init(&meet, NULL, WORKERS + 1);
        pthread_t t[WORKERS];
        for (long i = 0; i < WORKERS; i++) pthread_create(&t[i], NULL, work, (void *)i);
        pthread_barrier_wait(&meet);
        /* the barrier orders each worker's round before main's next one */
        for (int i = 0; i < WORKERS; i++) assert(done[i] == round);
        for (int i = 0; i < WORKERS; i++) pthread_join(t[i], NULL);
        pthread_barrier_destroy(&meet);
    }
    assert(count == ROUNDS * WORKERS);
    return 0;
}
