/* Store buffering with a library call between each thread's store and load: the call is a
 * full fence on x86 exactly where glibc's code has one. A try-lock or try-wait that fails only
 * loads the word (SEP 1, 2: the SC-forbidden outcome is reachable under tso and pso); a spin
 * try-lock is a locked compare-exchange either way (SEP 3) and sched_yield enters the kernel
 * (SEP 4): no store stays buffered past them. A condition variable's signal with no waiter
 * only loads the waiter count (SEP 5). */
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>

#ifndef SEP
#define SEP 1
#endif

volatile int x, y;
int r1, r2;
pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER; /* main holds it throughout */
pthread_spinlock_t spin_held;
sem_t empty; /* its count stays 0 */
pthread_cond_t nobody = PTHREAD_COND_INITIALIZER; /* no thread waits on it */

static void between(void) {
#if SEP == 1
    if (pthread_mutex_trylock(&held) == 0) pthread_mutex_unlock(&held);
#elif SEP == 2
    if (sem_trywait(&empty) == 0) sem_post(&empty);
#elif SEP == 3
    if (pthread_spin_trylock(&spin_held) == 0) pthread_spin_unlock(&spin_held);
#elif SEP == 4
    sched_yield();
#else
    pthread_cond_signal(&nobody);
#endif
}

static void *first(void *arg) {
    x = 1;
    between();
    r1 = y;
    return arg;
}

static void *second(void *arg) {
    y = 1;
    between();
    r2 = x;
    return arg;
}

int main(void) {
    pthread_t a, b;
    sem_init(&empty, 0, 0);
    pthread_spin_init(&spin_held, 0);
    pthread_mutex_lock(&held);
    pthread_spin_lock(&spin_held);
    pthread_create(&a, 0, first, 0);
    pthread_create(&b, 0, second, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    pthread_spin_unlock(&spin_held);
    pthread_mutex_unlock(&held);
    assert(!(r1 == 0 && r2 == 0));
    return 0;
}
