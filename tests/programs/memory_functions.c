/* The C library's memory and string functions against byte loops, on shared memory while a
 * second thread exists (so that the checker does them in pieces, each an event): every
 * alignment of source and destination, overlap both ways, strings ending anywhere in a word.
 * Exits 0 natively and must under the checker. */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define LEN 48
static char mem[LEN], two[LEN]; /* shared: each piece an event */
static void *idle(void *a) { return a; }

/* the reference: `ref` (main's stack) through volatile bytes, never a library call */
static void seed(volatile char *ref, int salt) {
    for (int i = 0; i < LEN; i++) ref[i] = mem[i] = (char)('a' + (i * 5 + salt) % 26);
}
static void same(volatile const char *ref) {
    for (int i = 0; i < LEN; i++) assert(mem[i] == ref[i]);
}
static void ref_move(volatile char *ref, size_t d, size_t s, size_t n) {
    char tmp[LEN];
    for (size_t i = 0; i < n; i++) tmp[i] = ref[s + i];
    for (size_t i = 0; i < n; i++) ref[d + i] = tmp[i];
}

int main(void) {
    volatile char ref[LEN];
    pthread_t t;
    pthread_create(&t, 0, idle, 0);
    for (size_t d = 0; d < 9; d += 2)
        for (size_t s = 0; s < 9; s += 3)
            for (int k = 0; k < 4; k++) {
                static const int lengths[] = {0, 1, 9, 17};
                size_t n = (size_t)lengths[k];
                /* memcpy and mempcpy (no overlap), memmove (overlap both ways) */
                seed(ref, d + s);
                assert(memcpy(mem + 24 + d, mem + s, n) == mem + 24 + d);
                ref_move(ref, 24 + d, s, n);
                same(ref);
                assert(mempcpy(mem + d, mem + 24 + s, n) == mem + d + n);
                ref_move(ref, d, 24 + s, n);
                same(ref);
                assert(memmove(mem + 8 + d, mem + 8 + s, n) == mem + 8 + d);
                ref_move(ref, 8 + d, 8 + s, n);
                same(ref);
                /* memset, bzero */
                memset(mem + d + s, 'z', n);
                for (size_t i = 0; i < n; i++) ref[d + s + i] = 'z';
                same(ref);
                bzero(mem + 24 + d, n);
                for (size_t i = 0; i < n; i++) ref[24 + d + i] = 0;
                same(ref);
                /* memcmp and bcmp: equal, or differing at the last byte */
                seed(ref, 0);
                memcpy(two, mem, LEN);
                assert(memcmp(mem + s, two + s, n) == 0 && bcmp(mem + d, two + d, n) == 0);
                if (n) {
                    two[s + n - 1]++;
                    assert(memcmp(mem + s, two + s, n) < 0 && bcmp(mem + s, two + s, n) != 0);
                    assert(memchr(mem + d, mem[d + n - 1], n) != NULL);
                }
                /* strings ending at d + s + n */
                mem[d + s + n] = 0;
                memcpy(two, mem, LEN);
                assert(strlen(mem + d) == (s + n) && strnlen(mem + d, 3) == (size_t)(s + n < 3 ? s + n : 3));
                assert(strchr(mem + d, 0) == mem + d + s + n && strrchr(mem + d, mem[d]) != NULL);
                assert(strcmp(mem + d, mem + d) == 0 && strncmp(mem + d, two + d, s + n) == 0);
                char *e = stpcpy(two + 1, mem + d);
                assert(e == two + 1 + s + n && strcmp(two + 1, mem + d) == 0);
                strncpy(two, mem + d, LEN - 1);
                for (size_t i = s + n; i < LEN - 1; i++) assert(two[i] == 0);
                two[0] = 0;
                strcat(two, mem + d);
                const char *volatile xyz = "xyz"; /* (no warning about the truncation) */
                strncat(two, xyz, 2);
                assert(strlen(two) == (size_t)(s + n + 2) && two[s + n] == 'x' && two[s + n + 2] == 0);
                char *dup = strdup(mem + d);
                assert(strcmp(dup, mem + d) == 0);
                free(dup);
            }
    pthread_join(t, 0);
    return 0;
}
