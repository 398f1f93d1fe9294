/* Each thread's thread-specific value has a destructor that counts with a plain increment:
 * the two threads' destructors run at once, and an update can be lost. With -DATOMIC the
 * count is an atomic addition: none is lost. */
#include <assert.h>
#include <pthread.h>

static pthread_key_t key;
static int destroyed;

static void destroy(void *value) {
    (void)value;
#ifdef ATOMIC
    __atomic_fetch_add(&destroyed, 1, __ATOMIC_SEQ_CST);
#else
    int seen = *(volatile int *)&destroyed;
    *(volatile int *)&destroyed = seen + 1;
#endif
}

static void *worker(void *arg) {
    pthread_setspecific(key, arg);
    return NULL;
}

int main(void) {
    pthread_key_create(&key, destroy);
    pthread_t a, b;
    pthread_create(&a, NULL, worker, (void *)1);
    pthread_create(&b, NULL, worker, (void *)2);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    assert(destroyed == 2);
    return 0;
}
