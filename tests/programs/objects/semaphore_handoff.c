/* A binary semaphore used as a lock: the producer fills a record under it, the consumer
 * reads the record under it. The consumer may take the semaphore first and see the record
 * empty, which the assertion (a wrong belief in the order of the threads) rejects under
 * every model. */
#include <assert.h>
#include <pthread.h>
#include <semaphore.h>

static sem_t lock;
static int record, seen;

static void *producer(void *arg) {
    sem_wait(&lock);
    record = 42;
    sem_post(&lock);
    return arg;
}

static void *consumer(void *arg) {
    sem_wait(&lock);
    seen = record;
    sem_post(&lock);
    return arg;
}

int main(void) {
    pthread_t p, c;
    sem_init(&lock, 0, 1);
    pthread_create(&p, 0, producer, 0);
    pthread_create(&c, 0, consumer, 0);
    pthread_join(p, 0);
    pthread_join(c, 0);
    assert(seen == 42);
    return 0;
}
