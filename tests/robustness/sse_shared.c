/* 16-byte SSE stores and loads of a shared vector: a reader sees the whole old or the whole
 * new value, in 2 executions under sc. */
#include <assert.h>
#include <emmintrin.h>
#include <pthread.h>

__m128i shared __attribute__((aligned(16)));

static void *writer(void *arg) {
    _mm_store_si128(&shared, _mm_set1_epi32(-1));
    return arg;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, writer, 0);
    __m128i v = _mm_load_si128(&shared);
    pthread_join(t, 0);
    int mask = _mm_movemask_epi8(_mm_cmpeq_epi32(v, _mm_setzero_si128()));
    assert(mask == 0xffff || mask == 0);
    return 0;
}
