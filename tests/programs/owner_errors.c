/* What glibc's locks answer their owner's misuse, while another thread uses them too: an
 * error-checking mutex relocked (EDEADLK), tried (EBUSY) or unlocked by a thread that does not
 * hold it (EPERM), a condition variable waited on with it unheld (EPERM), a recursive mutex
 * unlocked by another thread (EPERM), a rwlock's writer locking it again (EDEADLK, a try:
 * EBUSY), a thread joining itself (EDEADLK). Each answer is asserted; run natively, the
 * program exits 0. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>

static pthread_mutex_t checked, counted;
static pthread_rwlock_t rwlock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int in_mutex, in_rwlock;

static void *other(void *arg) {
    assert(pthread_mutex_unlock(&checked) == EPERM);
    pthread_mutex_lock(&checked);
    in_mutex++;
    pthread_mutex_unlock(&checked);
    assert(pthread_mutex_unlock(&counted) == EPERM);
    pthread_rwlock_wrlock(&rwlock);
    in_rwlock++;
    pthread_rwlock_unlock(&rwlock);
    return arg;
}

static void init(pthread_mutex_t *m, int type) {
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, type);
    pthread_mutex_init(m, &attr);
}

int main(void) {
    init(&checked, PTHREAD_MUTEX_ERRORCHECK);
    init(&counted, PTHREAD_MUTEX_RECURSIVE);
    assert(pthread_cond_wait(&cond, &checked) == EPERM);
    pthread_mutex_lock(&counted);
    pthread_t t;
    pthread_create(&t, 0, other, 0);
    assert(pthread_mutex_lock(&checked) == 0);
    assert(pthread_mutex_lock(&checked) == EDEADLK);
    assert(pthread_mutex_trylock(&checked) == EBUSY);
    in_mutex++;
    assert(pthread_mutex_unlock(&checked) == 0);
    assert(pthread_mutex_unlock(&checked) == EPERM);
    assert(pthread_rwlock_wrlock(&rwlock) == 0);
    assert(pthread_rwlock_wrlock(&rwlock) == EDEADLK);
    assert(pthread_rwlock_rdlock(&rwlock) == EDEADLK);
    assert(pthread_rwlock_trywrlock(&rwlock) == EBUSY);
    in_rwlock++;
    pthread_rwlock_unlock(&rwlock);
    assert(pthread_join(pthread_self(), 0) == EDEADLK);
    assert(pthread_mutex_unlock(&counted) == 0);
    pthread_join(t, 0);
    assert(in_mutex == 2 && in_rwlock == 2);
    return 0;
}
