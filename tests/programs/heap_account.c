#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

/* A balance in a heap block, updated by two threads without a lock. */
struct account { int id; int balance; };

static void *withdraw(void *arg) {
    struct account *a = arg;
    int b = a->balance;
    a->balance = b - 10;
    return 0;
}

int main(void) {
    struct account *a = malloc(sizeof *a);
    a->id = 1;
    a->balance = 100;
    pthread_t t, u;
    pthread_create(&t, 0, withdraw, a);
    pthread_create(&u, 0, withdraw, a);
    pthread_join(t, 0);
    pthread_join(u, 0);
    assert(a->balance == 80);
    free(a);
    return 0;
}
