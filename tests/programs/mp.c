/* Message passing: the reader reads the flag, then the data. Seeing the flag but not the data
 * is impossible under SC and TSO (stores reach memory in order), possible under PSO. */
#include <assert.h>
#include <pthread.h>

volatile int data, flag;
int r1, r2;

static void *writer(void *arg) {
    (void)arg;
    data = 42;
    flag = 1;
    return 0;
}

static void *reader(void *arg) {
    (void)arg;
    r1 = flag;
    r2 = data;
    return 0;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, writer, 0);
    pthread_create(&b, 0, reader, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    assert(!(r1 == 1 && r2 == 0));
    return 0;
}
