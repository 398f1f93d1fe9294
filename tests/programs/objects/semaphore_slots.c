/* Two slots of a pool, counted by a semaphore: three threads each take a slot, mark it
 * used, and give it back. A slot found used by another means the semaphore let too many
 * in: -DTHREE_SLOTS counts three for two slots. sem_trywait by main after the threads
 * finish finds the count they left. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>

#ifdef THREE_SLOTS
#define SLOTS 3
#else
#define SLOTS 2
#endif

static sem_t free_slots;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int in_use;

static void *user(void *arg) {
    sem_wait(&free_slots);
    pthread_mutex_lock(&m);
    in_use++;
    assert(in_use <= 2);
    pthread_mutex_unlock(&m);
    pthread_mutex_lock(&m);
    in_use--;
    pthread_mutex_unlock(&m);
    sem_post(&free_slots);
    return arg;
}

int main(void) {
    pthread_t t[3];
    sem_init(&free_slots, 0, SLOTS);
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], 0, user, 0);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], 0);
    int left = 0;
    while (sem_trywait(&free_slots) == 0)
        left++;
    assert(left == SLOTS && errno == EAGAIN);
    return 0;
}
