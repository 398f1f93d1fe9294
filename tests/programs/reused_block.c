/* A thread frees a block main filled and allocates one of the same size again, as calloc and
 * as realloc: the allocator may hand the freed block back, and what it holds then is what
 * calloc and realloc promise, whatever main stored there before. */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define WORDS 6

static long *shared;

static void *renew(void *arg) {
    long *old = shared;
    free(old);
    long *zeroed = calloc(WORDS, sizeof *zeroed);
    for (int i = 0; i < WORDS; i++) assert(zeroed[i] == 0);
    long *copy = malloc(WORDS * sizeof *copy);
    for (int i = 0; i < WORDS; i++) copy[i] = 100 + i;
    free(zeroed);
    copy = realloc(copy, WORDS * sizeof *copy);
    for (int i = 0; i < WORDS; i++) assert(copy[i] == 100 + i);
    free(copy);
    return arg;
}

int main(void) {
    shared = malloc(WORDS * sizeof *shared);
    for (int i = 0; i < WORDS; i++) shared[i] = 7;
    pthread_t t;
    pthread_create(&t, NULL, renew, NULL);
    pthread_join(t, NULL);
    return 0;
}
