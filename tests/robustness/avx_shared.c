/* 32-byte AVX stores and loads of a shared vector (built with -mavx2): 2 executions under sc, and
 * the torn value a reader would see if the halves were split is never reported. */
#include <assert.h>
#include <immintrin.h>
#include <pthread.h>

__m256i shared __attribute__((aligned(32)));

static void *writer(void *arg) {
    _mm256_store_si256(&shared, _mm256_set1_epi32(-1));
    return arg;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, writer, 0);
    __m256i v = _mm256_load_si256(&shared);
    pthread_join(t, 0);
    int mask = _mm256_movemask_epi8(_mm256_cmpeq_epi32(v, _mm256_setzero_si256()));
    assert(mask == -1 || mask == 0);
    return 0;
}
