/* main takes a lock (or a semaphore's count) that a thread holds for a while by trying again
 * until it succeeds, as code that must not block does; the thread's update and main's are
 * then ordered. -DKIND: 0 a mutex, 1 a spin lock, 2 a read lock of a rwlock the thread writes,
 * 3 its write lock, 4 a semaphore the thread posts. With -DCOUNTED main gives up after one
 * failed try (an assertion): a loop whose state changes at every try is no await loop, and
 * the failure is reachable. */
#include <assert.h>
#include <pthread.h>
#include <semaphore.h>

#ifndef KIND
#define KIND 0
#endif

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_spinlock_t spin;
static pthread_rwlock_t rwlock = PTHREAD_RWLOCK_INITIALIZER;
static sem_t sem;
static int shared;

static void hold(void) {
#if KIND == 0
    pthread_mutex_lock(&mutex);
#elif KIND == 1
    pthread_spin_lock(&spin);
#elif KIND == 2 || KIND == 3
    pthread_rwlock_wrlock(&rwlock);
#endif
}

static void release(void) {
#if KIND == 0
    pthread_mutex_unlock(&mutex);
#elif KIND == 1
    pthread_spin_unlock(&spin);
#elif KIND == 2 || KIND == 3
    pthread_rwlock_unlock(&rwlock);
#else
    sem_post(&sem);
#endif
}

static int try_take(void) {
#if KIND == 0
    return pthread_mutex_trylock(&mutex) == 0;
#elif KIND == 1
    return pthread_spin_trylock(&spin) == 0;
#elif KIND == 2
    return pthread_rwlock_tryrdlock(&rwlock) == 0;
#elif KIND == 3
    return pthread_rwlock_trywrlock(&rwlock) == 0;
#else
    return sem_trywait(&sem) == 0;
#endif
}

static void *holder(void *arg) {
    hold();
    shared++;
    release();
    return arg;
}

int main(void) {
    pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
    sem_init(&sem, 0, 0);
    pthread_t t;
    pthread_create(&t, NULL, holder, NULL);
#ifdef COUNTED
    int tries = 0;
    while (!try_take()) assert(++tries < 2);
#else
    while (!try_take())
        ;
#endif
    shared++;
#if KIND != 4
    release();
#endif
    pthread_join(t, NULL);
    assert(shared == 2);
    return 0;
}
