/* Thread-specific data destructors run when a thread ends: each of the 2 threads sets its
 * value for a key with a destructor, which logs the value to dtors.txt. 2 executions (the two
 * stores to `shared`): 4 lines, "key 1" and "key 2" twice. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_key_t key;
volatile int shared;

static void logged(void *value) {
    char line[32];
    int n = snprintf(line, sizeof line, "key %ld\n", (long)value);
    int fd = open("dtors.txt", O_WRONLY | O_APPEND | O_CREAT, 0644);
    if (fd < 0 || write(fd, line, n) != n) _exit(3);
    close(fd);
}

static void *worker(void *arg) {
    pthread_setspecific(key, arg);
    shared = (int)(long)arg;
    return NULL;
}

int main(void) {
    pthread_key_create(&key, logged);
    pthread_t a, b;
    pthread_create(&a, NULL, worker, (void *)1);
    pthread_create(&b, NULL, worker, (void *)2);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return 0;
}
