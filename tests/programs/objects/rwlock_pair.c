/* A writer updates a pair under the write lock; readers check it under the read lock and
 * must never see it half written. -DREAD_LOCKED_WRITER: the writer takes the read lock, so
 * a reader may see the pair torn. */
#include <assert.h>
#include <pthread.h>

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static int first, second;

static void *writer(void *arg) {
#ifdef READ_LOCKED_WRITER
    pthread_rwlock_rdlock(&lock);
#else
    pthread_rwlock_wrlock(&lock);
#endif
    first = 1;
    second = 1;
    pthread_rwlock_unlock(&lock);
    return arg;
}

static void *reader(void *arg) {
    pthread_rwlock_rdlock(&lock);
    assert(first == second);
    pthread_rwlock_unlock(&lock);
    return arg;
}

int main(void) {
    pthread_t w, r1, r2;
    pthread_create(&r1, 0, reader, 0);
    pthread_create(&w, 0, writer, 0);
    pthread_create(&r2, 0, reader, 0);
    pthread_join(w, 0);
    pthread_join(r1, 0);
    pthread_join(r2, 0);
    return 0;
}
