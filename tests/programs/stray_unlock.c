/* A thread unlocks a lock it does not hold, then takes it while main is inside. -DKIND: 0 a
 * normal mutex, 1 a spin lock: glibc lets the stray unlock release main's lock, so both are
 * inside at once and the assertion fails (where the unlock comes after main's lock); 4 a
 * rwlock main write-locks (undefined in glibc, released by the checker's model). 2 an
 * error-checking mutex, 3 a recursive one: the stray unlock fails with EPERM and leaves the
 * lock as it was, so mutual exclusion holds. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>

#ifndef KIND
#define KIND 0
#endif

#if KIND == 1
static pthread_spinlock_t lock;
#define LOCK() pthread_spin_lock(&lock)
#define UNLOCK() pthread_spin_unlock(&lock)
#elif KIND == 4
static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
#define LOCK() pthread_rwlock_wrlock(&lock)
#define UNLOCK() pthread_rwlock_unlock(&lock)
#else
static pthread_mutex_t lock;
#define LOCK() pthread_mutex_lock(&lock)
#define UNLOCK() pthread_mutex_unlock(&lock)
#endif

static volatile int inside;

static void *stray(void *arg) {
    int r = UNLOCK();
    assert(r == 0 || r == EPERM);
    LOCK();
    assert(inside == 0);
    UNLOCK();
    return arg;
}

int main(void) {
#if KIND == 1
    pthread_spin_init(&lock, PTHREAD_PROCESS_PRIVATE);
#elif KIND == 4
#else
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, KIND == 2   ? PTHREAD_MUTEX_ERRORCHECK
                                     : KIND == 3 ? PTHREAD_MUTEX_RECURSIVE
                                                 : PTHREAD_MUTEX_NORMAL);
    pthread_mutex_init(&lock, &attr);
#endif
    pthread_t t;
    pthread_create(&t, 0, stray, 0);
    LOCK();
    inside = 1;
    inside = 0;
    UNLOCK();
    pthread_join(t, 0);
    return 0;
}
