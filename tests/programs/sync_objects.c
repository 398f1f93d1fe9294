/* Barrier, semaphore, rwlock, spin lock and trylock used correctly together. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>

static pthread_barrier_t barrier;
static sem_t sem;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t spin;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int phase1[2], shared, spun, tried;

static void *worker(void *arg) {
    int me = (int)(long)arg;
    phase1[me] = 1;
    pthread_barrier_wait(&barrier);
    assert(phase1[0] && phase1[1]); /* everybody passed phase 1 */
    sem_wait(&sem);
    pthread_rwlock_wrlock(&rw);
    shared++;
    pthread_rwlock_unlock(&rw);
    pthread_rwlock_rdlock(&rw);
    assert(shared >= 1);
    pthread_rwlock_unlock(&rw);
    sem_post(&sem);
    pthread_spin_lock(&spin);
    spun++;
    pthread_spin_unlock(&spin);
    if (pthread_mutex_trylock(&m) == 0) {
        tried++;
        pthread_mutex_unlock(&m);
    }
    return 0;
}

int main(void) {
    pthread_t a, b;
    pthread_barrier_init(&barrier, 0, 2);
    sem_init(&sem, 0, 1);
    pthread_spin_init(&spin, 0);
    pthread_create(&a, 0, worker, (void *)0L);
    pthread_create(&b, 0, worker, (void *)1L);
    pthread_join(a, 0);
    pthread_join(b, 0);
    assert(shared == 2 && spun == 2 && tried >= 1);
    return 0;
}
