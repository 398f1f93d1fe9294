/* A 64-bit word that one thread writes whole and another reads as two 32-bit halves, as code
 * that packs two counters into one word does. x86 writes the word atomically, so a reader that
 * sees the new low half and then reads the high half sees the new one too: the assertion holds.
 * Under the graph engine the word is in pieces, each atomic but not the whole: rather than
 * explore behaviours x86 does not have, the check is refused. */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>

static volatile union {
    uint64_t whole;
    uint32_t half[2];
} word;

static void *writer(void *arg) {
    word.whole = 0x0000000100000001ull;
    word.whole = 0x0000000200000002ull;
    return arg;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, writer, 0);
    uint32_t lo = word.half[0];
    uint32_t hi = word.half[1];
    assert(lo <= hi);
    pthread_join(t, 0);
    return 0;
}
