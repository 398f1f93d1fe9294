/* Memory the runtime accesses for the program: the C library's memory and string functions,
 * interposed, and (through the pieces below) the string instructions of the program's own code
 * (targets/ARCH/string_insn.h).
 *
 * Library code is not instrumented, so a `memcpy` onto shared memory would be invisible. Called
 * by the program in an execution, these functions do their work in pieces instead: each piece
 * at most 8 bytes within one aligned 8-byte word (what x86 makes atomic; a copy is not atomic
 * on real hardware and is not one event here), a visible load or store where the memory may be
 * shared (smc_access), else done as it is. A copy goes up the addresses, a load then a store per
 * piece (memmove down when its destination lies above an overlapping source); a function that
 * reads strings reads each word from where it starts to the word's end, as the library's own
 * word-at-a-time code does. Other orders of the pieces that an optimised library may use are
 * not explored (README, Limitations). Calls from the runtime itself, from the engine (the host
 * of the worker) and outside executions go straight to the C library. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rt.h"

/* Pieces are short loops over at most 8 bytes: never let the compiler turn one into a call of
 * the functions this file defines. */
#pragma GCC optimize("no-tree-loop-distribute-patterns")

static inline uint64_t min2(uint64_t a, uint64_t b) { return a < b ? a : b; }
/* bytes from `a` to the end of its 8-byte word, and from the start of its word to `a` */
static inline uint64_t room_up(uint64_t a) { return 8 - (a & 7); }
static inline uint64_t room_down(uint64_t a) { return (a & 7) ? (a & 7) : 8; }
#define U(p) ((uint64_t)(uintptr_t)(p))

/* ---- pieces ---- */

void smc_load_pieces(uint64_t a, uint64_t len, void *buf, uint64_t pc, uint32_t site) {
    for (uint64_t i = 0, c; i < len; i += c) {
        c = min2(room_up(a + i), len - i);
        smc_access(0, a + i, c, (uint8_t *)buf + i, pc, site);
    }
}

void smc_store_pieces(uint64_t a, uint64_t len, const void *buf, uint64_t pc, uint32_t site) {
    for (uint64_t i = 0, c; i < len; i += c) {
        c = min2(room_up(a + i), len - i);
        smc_access(1, a + i, c, (uint8_t *)(uintptr_t)buf + i, pc, site);
    }
}

/* A copy of `len` bytes from `s` to `d`. Going up onto an overlapping destination above the
 * source, a piece is at most d - s bytes long, so that it reads what the copy wrote there
 * before, as a byte-by-byte copy would (and the mirror image going down). */
void smc_copy_pieces(uint64_t d, uint64_t s, uint64_t len, int down, uint64_t pc, uint32_t site) {
    int ahead_up = !down && d > s && d - s < len, ahead_down = down && s > d && s - d < len;
    if (!smc_range_watched(d, len) && !smc_range_watched(s, len)) {
        /* (going up onto an overlapping destination above, byte by byte as the pieces do) */
        if (ahead_up)
            for (uint64_t i = 0; i < len; i++) ((uint8_t *)(uintptr_t)d)[i] = ((uint8_t *)(uintptr_t)s)[i];
        else
            REAL_FN(memmove)((void *)(uintptr_t)d, (void *)(uintptr_t)s, len);
        return;
    }
    uint64_t cap = ahead_up ? min2(8, d - s) : ahead_down ? min2(8, s - d) : 8;
    uint8_t tmp[8];
    for (uint64_t done = 0, c; done < len; done += c) {
        uint64_t from, to;
        if (!down) {
            from = s + done;
            to = d + done;
            c = min2(min2(room_up(from), room_up(to)), min2(len - done, cap));
        } else {
            uint64_t se = s + len - done, de = d + len - done;
            c = min2(min2(room_down(se), room_down(de)), min2(len - done, cap));
            from = se - c;
            to = de - c;
        }
        smc_access(0, from, c, tmp, pc, site);
        smc_access(1, to, c, tmp, pc, site);
    }
}

/* `len` bytes at `d` set to `pattern` repeated every `period` bytes (1, 2, 4 or 8) from `d`. */
void smc_fill_pieces(uint64_t d, uint64_t len, const uint8_t pattern[8], uint32_t period, int down, uint64_t pc,
                     uint32_t site) {
    uint8_t tmp[8];
    for (uint64_t done = 0, c; done < len; done += c) {
        uint64_t at;
        if (!down) {
            at = d + done;
            c = min2(room_up(at), len - done);
        } else {
            c = min2(room_down(d + len - done), len - done);
            at = d + len - done - c;
        }
        for (uint64_t i = 0; i < c; i++) tmp[i] = pattern[(at + i - d) & (period - 1)];
        smc_access(1, at, c, tmp, pc, site);
    }
}

/* ---- who calls ---- */

/* The runtime's own code: its calls (and those the compiler makes for it) are not the
 * program's. */
static uint64_t g_rt_lo, g_rt_hi;

void object_span(const struct dl_phdr_info *info, uint64_t *lo, uint64_t *hi) {
    *lo = UINT64_MAX;
    *hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        uint64_t a = info->dlpi_addr + ph->p_vaddr;
        if (a < *lo) *lo = a;
        if (a + ph->p_memsz > *hi) *hi = a + ph->p_memsz;
    }
}

/* The object holding q[0]: its span into q[1], q[2]. */
static int find_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    uint64_t *q = data, lo, hi;
    object_span(info, &lo, &hi);
    if (q[0] < lo || q[0] >= hi) return 0;
    q[1] = lo;
    q[2] = hi;
    return 1;
}

void span_of_object(uint64_t addr, uint64_t *lo, uint64_t *hi) {
    uint64_t q[3] = {addr, 0, 0};
    dl_iterate_phdr(find_object, q);
    *lo = q[1];
    *hi = q[2];
}

/* The executable (the first object): its load bias into out[0], its span into out[1], out[2]. */
static int first_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    uint64_t *out = data;
    out[0] = info->dlpi_addr;
    object_span(info, &out[1], &out[2]);
    return 1;
}

void program_span(uint64_t *bias, uint64_t *lo, uint64_t *hi) {
    uint64_t out[3] = {0, 0, 0};
    dl_iterate_phdr(first_object, out);
    *bias = out[0];
    *lo = out[1];
    *hi = out[2];
}

int in_runtime(uint64_t pc) { return pc >= g_rt_lo && pc < g_rt_hi; }

void memory_init(void) { span_of_object(U(&memory_init), &g_rt_lo, &g_rt_hi); }

/* Whether the function was called by the program's code in an execution (`ret`: its return
 * address), and its pieces are events (see smc_pieces_begin). */
static int pieces_call(void *ret) {
    if (!program_call(U(ret)) || (g_coroutines && g_cur < 0)) return 0;
    return smc_pieces_begin(U(ret) - SMC_CALL_BACK, 0);
}
#define PROGRAM_CALL pieces_call(__builtin_return_address(0))
#define PC CALLER_PC

/* ---- the functions ---- */

/* Up to 8 bytes of the string at `a + i`: to the end of its word, at most `max`. */
static uint64_t load_word(uint64_t a, uint64_t i, uint64_t max, uint8_t *buf, uint64_t pc) {
    uint64_t c = min2(room_up(a + i), max);
    smc_load_pieces(a + i, c, buf, pc, 0);
    return c;
}

static void *copy(void *d, const void *s, size_t n, uint64_t pc) {
    int down = U(d) > U(s) && U(d) - U(s) < n;
    smc_copy_pieces(U(d), U(s), n, down, pc, 0);
    return d;
}

static void *fill(void *d, int c, size_t n, uint64_t pc) {
    uint8_t pattern[8];
    for (int i = 0; i < 8; i++) pattern[i] = (uint8_t)c;
    smc_fill_pieces(U(d), n, pattern, 1, 0, pc, 0);
    return d;
}

static size_t length(const char *s, size_t max, uint64_t pc) {
    uint8_t buf[8];
    for (size_t i = 0; i < max;) {
        uint64_t c = load_word(U(s), i, max - i, buf, pc);
        for (uint64_t k = 0; k < c; k++)
            if (!buf[k]) return i + k;
        i += c;
    }
    return max;
}

/* Compare up to `n` bytes; `strings`: stop after a NUL in both. */
static int compare(const void *a, const void *b, size_t n, int strings, uint64_t pc) {
    uint8_t x[8], y[8];
    for (size_t i = 0; i < n;) {
        uint64_t c = min2(min2(room_up(U(a) + i), room_up(U(b) + i)), n - i);
        smc_load_pieces(U(a) + i, c, x, pc, 0);
        smc_load_pieces(U(b) + i, c, y, pc, 0);
        for (uint64_t k = 0; k < c; k++) {
            if (x[k] != y[k]) return x[k] < y[k] ? -1 : 1;
            if (strings && !x[k]) return 0;
        }
        i += c;
    }
    return 0;
}

/* Copy the string at `s` to `d`, at most `n` bytes; with `pad`, fill up to `n` with NULs
 * (strncpy). Returns the number of bytes copied before the NUL. */
static size_t copy_string(char *d, const char *s, size_t n, int pad, uint64_t pc) {
    uint8_t buf[8];
    size_t i = 0;
    while (i < n) {
        uint64_t c = min2(min2(room_up(U(s) + i), room_up(U(d) + i)), n - i), k = 0;
        smc_load_pieces(U(s) + i, c, buf, pc, 0);
        while (k < c && buf[k]) k++;
        if (k < c) {
            smc_store_pieces(U(d) + i, k + 1, buf, pc, 0);
            if (pad && i + k + 1 < n) fill(d + i + k + 1, 0, n - (i + k + 1), pc);
            return i + k;
        }
        smc_store_pieces(U(d) + i, c, buf, pc, 0);
        i += c;
    }
    return n;
}

/* The first byte `c` in up to `n` bytes at `s` (`strings`: or the NUL, then NULL unless c is
 * 0); with `last`, the last one before the end. */
static void *find(const void *s, int c, size_t n, int strings, int last, uint64_t pc) {
    uint8_t buf[8];
    void *found = NULL;
    for (size_t i = 0; i < n;) {
        uint64_t w = load_word(U(s), i, n - i, buf, pc);
        for (uint64_t k = 0; k < w; k++) {
            if (buf[k] == (uint8_t)c) {
                found = (char *)(uintptr_t)s + i + k;
                if (!last || !c) return found;
            }
            if (strings && !buf[k]) return found;
        }
        i += w;
    }
    return found;
}

#define REAL_CALL(name, ...) REAL_FN(name)(__VA_ARGS__)

EXPORT void *memcpy(void *d, const void *s, size_t n) {
    if (!PROGRAM_CALL) return REAL_CALL(memcpy, d, s, n);
    smc_copy_pieces(U(d), U(s), n, 0, PC, 0);
    return d;
}
EXPORT void *memmove(void *d, const void *s, size_t n) {
    return PROGRAM_CALL ? copy(d, s, n, PC) : REAL_CALL(memmove, d, s, n);
}
EXPORT void *mempcpy(void *d, const void *s, size_t n) {
    if (!PROGRAM_CALL) return REAL_CALL(mempcpy, d, s, n);
    smc_copy_pieces(U(d), U(s), n, 0, PC, 0);
    return (char *)d + n;
}
EXPORT void *memset(void *d, int c, size_t n) {
    return PROGRAM_CALL ? fill(d, c, n, PC) : REAL_CALL(memset, d, c, n);
}
EXPORT void bzero(void *d, size_t n) {
    if (PROGRAM_CALL) fill(d, 0, n, PC);
    else REAL_CALL(bzero, d, n);
}
EXPORT void explicit_bzero(void *d, size_t n) {
    if (PROGRAM_CALL) fill(d, 0, n, PC);
    else REAL_CALL(explicit_bzero, d, n);
}
EXPORT int memcmp(const void *a, const void *b, size_t n) {
    return PROGRAM_CALL ? compare(a, b, n, 0, PC) : REAL_CALL(memcmp, a, b, n);
}
EXPORT int bcmp(const void *a, const void *b, size_t n) {
    return PROGRAM_CALL ? compare(a, b, n, 0, PC) : REAL_CALL(bcmp, a, b, n);
}
EXPORT void *memchr(const void *s, int c, size_t n) {
    return PROGRAM_CALL ? find(s, c, n, 0, 0, PC) : REAL_CALL(memchr, s, c, n);
}
EXPORT size_t strlen(const char *s) {
    return PROGRAM_CALL ? length(s, SIZE_MAX, PC) : REAL_CALL(strlen, s);
}
EXPORT size_t strnlen(const char *s, size_t max) {
    return PROGRAM_CALL ? length(s, max, PC) : REAL_CALL(strnlen, s, max);
}
EXPORT int strcmp(const char *a, const char *b) {
    return PROGRAM_CALL ? compare(a, b, SIZE_MAX, 1, PC) : REAL_CALL(strcmp, a, b);
}
EXPORT int strncmp(const char *a, const char *b, size_t n) {
    return PROGRAM_CALL ? compare(a, b, n, 1, PC) : REAL_CALL(strncmp, a, b, n);
}
EXPORT char *strchr(const char *s, int c) {
    return PROGRAM_CALL ? find(s, c, SIZE_MAX, 1, 0, PC) : REAL_CALL(strchr, s, c);
}
EXPORT char *strrchr(const char *s, int c) {
    return PROGRAM_CALL ? find(s, c, SIZE_MAX, 1, 1, PC) : REAL_CALL(strrchr, s, c);
}
EXPORT char *strcpy(char *d, const char *s) {
    if (!PROGRAM_CALL) return REAL_CALL(strcpy, d, s);
    copy_string(d, s, SIZE_MAX, 0, PC);
    return d;
}
EXPORT char *stpcpy(char *d, const char *s) {
    return PROGRAM_CALL ? d + copy_string(d, s, SIZE_MAX, 0, PC) : REAL_CALL(stpcpy, d, s);
}
EXPORT char *strncpy(char *d, const char *s, size_t n) {
    if (!PROGRAM_CALL) return REAL_CALL(strncpy, d, s, n);
    copy_string(d, s, n, 1, PC);
    return d;
}
EXPORT char *stpncpy(char *d, const char *s, size_t n) {
    return PROGRAM_CALL ? d + copy_string(d, s, n, 1, PC) : REAL_CALL(stpncpy, d, s, n);
}
EXPORT char *strcat(char *d, const char *s) {
    if (!PROGRAM_CALL) return REAL_CALL(strcat, d, s);
    copy_string(d + length(d, SIZE_MAX, PC), s, SIZE_MAX, 0, PC);
    return d;
}
EXPORT char *strncat(char *d, const char *s, size_t n) {
    if (!PROGRAM_CALL) return REAL_CALL(strncat, d, s, n);
    char *end = d + length(d, SIZE_MAX, PC);
    size_t k = copy_string(end, s, n, 0, PC);
    if (k == n) fill(end + n, 0, 1, PC); /* no NUL within n: strncat adds one */
    return d;
}
EXPORT char *strdup(const char *s) {
    if (!PROGRAM_CALL) return REAL_CALL(strdup, s);
    size_t n = length(s, SIZE_MAX, PC) + 1;
    char *d = malloc(n);
    if (d) copy(d, s, n, PC);
    return d;
}
EXPORT char *strndup(const char *s, size_t max) {
    if (!PROGRAM_CALL) return REAL_CALL(strndup, s, max);
    size_t n = length(s, max, PC);
    char *d = malloc(n + 1);
    if (d) {
        copy(d, s, n, PC);
        d[n] = 0;
    }
    return d;
}

/* _FORTIFY_SOURCE's checked forms: an overflow goes on to the C library, which reports it */
EXPORT void *__memcpy_chk(void *d, const void *s, size_t n, size_t room) {
    if (n > room || !PROGRAM_CALL) return REAL_CALL(__memcpy_chk, d, s, n, room);
    smc_copy_pieces(U(d), U(s), n, 0, PC, 0);
    return d;
}
EXPORT void *__memmove_chk(void *d, const void *s, size_t n, size_t room) {
    return n <= room && PROGRAM_CALL ? copy(d, s, n, PC) : REAL_CALL(__memmove_chk, d, s, n, room);
}
EXPORT void *__mempcpy_chk(void *d, const void *s, size_t n, size_t room) {
    if (n > room || !PROGRAM_CALL) return REAL_CALL(__mempcpy_chk, d, s, n, room);
    smc_copy_pieces(U(d), U(s), n, 0, PC, 0);
    return (char *)d + n;
}
EXPORT void *__memset_chk(void *d, int c, size_t n, size_t room) {
    return n <= room && PROGRAM_CALL ? fill(d, c, n, PC) : REAL_CALL(__memset_chk, d, c, n, room);
}
/* as the C library does: the length first, then the copy */
EXPORT char *__strcpy_chk(char *d, const char *s, size_t room) {
    if (!PROGRAM_CALL) return REAL_CALL(__strcpy_chk, d, s, room);
    size_t n = length(s, SIZE_MAX, PC);
    if (n >= room) return REAL_CALL(__strcpy_chk, d, s, room);
    smc_copy_pieces(U(d), U(s), n + 1, 0, PC, 0);
    return d;
}
EXPORT char *__stpcpy_chk(char *d, const char *s, size_t room) {
    if (!PROGRAM_CALL) return REAL_CALL(__stpcpy_chk, d, s, room);
    size_t n = length(s, SIZE_MAX, PC);
    if (n >= room) return REAL_CALL(__stpcpy_chk, d, s, room);
    smc_copy_pieces(U(d), U(s), n + 1, 0, PC, 0);
    return d + n;
}
EXPORT char *__strncpy_chk(char *d, const char *s, size_t n, size_t room) {
    if (n > room || !PROGRAM_CALL) return REAL_CALL(__strncpy_chk, d, s, n, room);
    copy_string(d, s, n, 1, PC);
    return d;
}
EXPORT char *__strcat_chk(char *d, const char *s, size_t room) {
    if (!PROGRAM_CALL) return REAL_CALL(__strcat_chk, d, s, room);
    size_t k = length(d, SIZE_MAX, PC), n = length(s, SIZE_MAX, PC);
    if (k + n >= room) return REAL_CALL(__strcat_chk, d, s, room);
    smc_copy_pieces(U(d) + k, U(s), n + 1, 0, PC, 0);
    return d;
}
EXPORT char *__strncat_chk(char *d, const char *s, size_t n, size_t room) {
    if (!PROGRAM_CALL) return REAL_CALL(__strncat_chk, d, s, n, room);
    size_t k = length(d, SIZE_MAX, PC), m = length(s, n, PC);
    if (k + m >= room) return REAL_CALL(__strncat_chk, d, s, n, room);
    smc_copy_pieces(U(d) + k, U(s), m, 0, PC, 0);
    fill(d + k + m, 0, 1, PC);
    return d;
}
EXPORT char *__stpncpy_chk(char *d, const char *s, size_t n, size_t room) {
    if (n > room || !PROGRAM_CALL) return REAL_CALL(__stpncpy_chk, d, s, n, room);
    return d + copy_string(d, s, n, 1, PC);
}
