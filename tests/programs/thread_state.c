/* What is each thread's own: __thread variables (with their initial values in every new
 * thread), errno, pthread_self() and thread-specific data. The threads store to and load from
 * one shared variable, so the checker switches between them in the middle of their checks. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>

__thread int tls_value = 7;
__thread char tls_zero[64];
static pthread_key_t key;
static pthread_t main_self;
volatile int shared;

static void *worker(void *arg) {
    long id = (long)arg;
    assert(tls_value == 7);
    assert(tls_zero[0] == 0 && tls_zero[63] == 0);
    assert(pthread_getspecific(key) == NULL);
    assert(!pthread_equal(pthread_self(), main_self));
    tls_value = (int)id;
    tls_zero[0] = (char)id;
    errno = (int)id;
    pthread_setspecific(key, arg);
    shared = (int)id; /* another thread may run here */
    int seen = shared;
    (void)seen;
    assert(tls_value == id);
    assert(tls_zero[0] == id);
    assert(errno == id);
    assert(pthread_getspecific(key) == arg);
    return (void *)(id * 10);
}

int main(void) {
    pthread_t t[2];
    main_self = pthread_self();
    pthread_key_create(&key, NULL);
    pthread_setspecific(key, &key);
    tls_value = 100;
    for (long i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, (void *)(i + 1));
    shared = 3;
    for (long i = 0; i < 2; i++) {
        void *r;
        pthread_join(t[i], &r);
        assert(r == (void *)((i + 1) * 10));
    }
    assert(tls_value == 100);
    assert(pthread_getspecific(key) == &key);
    assert(pthread_equal(pthread_self(), main_self));
    return 0;
}
