/* Message passing: the reader that sees the flag also sees the data (SC). */
#include <assert.h>
#include <pthread.h>

volatile int data, flag;

static void *writer(void *arg) {
    (void)arg;
    data = 42;
    flag = 1;
    return 0;
}

static void *reader(void *arg) {
    (void)arg;
    if (flag == 1) assert(data == 42);
    return 0;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, writer, 0);
    pthread_create(&b, 0, reader, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    return 0;
}
