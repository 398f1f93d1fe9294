/* The heap: the malloc family, interposed to record each block an execution allocates (so
 * that reports can name heap blocks) and to mark how far a worker's heap is in use (so that
 * its restore copies only that far, smc_snapshot_heap_mark). Until libc's functions are
 * known, a static arena serves dlsym's own allocations. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <sys/auxv.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"
#include "snapshot.h"

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
/* The C library's and the dynamic loader's code: their own frees are of their own blocks */
static uint64_t libc_lo, libc_hi, ldso_lo, ldso_hi;
/* dlsym may allocate before the real functions are known: such requests are served from a
 * static arena (zeroed, never freed), each block after a 16-byte header holding its size */
static _Alignas(16) char boot_arena[1 << 16];
static size_t boot_used;
static int heap_resolving;

static void *boot_alloc(size_t n) {
    if (n > sizeof boot_arena) return NULL;
    size_t need = (n + 31) & ~(size_t)15;
    size_t off = __atomic_fetch_add(&boot_used, need, __ATOMIC_SEQ_CST);
    if (off + need > sizeof boot_arena) return NULL;
    *(size_t *)(boot_arena + off) = n;
    return boot_arena + off + 16;
}

static int in_boot(const void *p) {
    return (const char *)p >= boot_arena && (const char *)p < boot_arena + sizeof boot_arena;
}

int heap_ready(void) {
    if (LOAD(&real_malloc)) return 1;
    if (heap_resolving) return 0;
    heap_resolving = 1;
    real_calloc = dlsym(RTLD_NEXT, "calloc");
    real_realloc = dlsym(RTLD_NEXT, "realloc");
    real_free = dlsym(RTLD_NEXT, "free");
    void *m = dlsym(RTLD_NEXT, "malloc");
    heap_resolving = 0;
    if (!real_calloc || !real_realloc || !real_free) return 0;
    span_of_object((uint64_t)(uintptr_t)real_free, &libc_lo, &libc_hi);
    span_of_object(getauxval(AT_BASE), &ldso_lo, &ldso_hi);
    STORE(&real_malloc, (void *(*)(size_t))m);
    return m != NULL;
}

/* Every block the heap hands out: a worker's restore must know how far the heap is in use. */
static void *heap_block(void *p, size_t n) {
    if (p && g_coroutines) smc_snapshot_heap_mark((const char *)p + n);
    return p;
}

static void record_block(void *p, size_t n, uint64_t pc) {
    if (!heap_block(p, n) || !in_execution()) return;
    uint32_t k = __atomic_fetch_add(&ch->nblocks, 1, __ATOMIC_SEQ_CST);
    if (k >= SMC_MAX_BLOCKS) return;
    ch->blocks[k].addr = (uint64_t)(uintptr_t)p;
    ch->blocks[k].size = n;
    ch->blocks[k].pc = pc;
}

/* Under store buffers, the thread's own stores into a block it frees or reallocates reach
 * memory before the library writes (or copies) the block, as on the processor, where the
 * library's writes queue behind them: a stop that the engine lets through once the thread's
 * buffer holds none (landing later, they would overwrite the allocator's). Not for the C
 * library's and the loader's own blocks (stdio's, a joined thread's TLS), which they free at
 * times that depend on the executor and where the output goes. */
static void heap_release(void *p, uint64_t pc) {
    int from_libc = (pc >= libc_lo && pc < libc_hi) || (pc >= ldso_lo && pc < ldso_hi);
    if (program_call(pc) && !from_libc && (ch->flags & SMC_FLAG_FENCES_VISIBLE))
        smc_stop(SMC_OP_HEAP_RELEASE, (uint64_t)(uintptr_t)p, 0, 0, malloc_usable_size(p), pc, 0, 0);
}

EXPORT void *malloc(size_t n) {
    if (!heap_ready()) return boot_alloc(n);
    void *p = real_malloc(n);
    record_block(p, n, CALLER_PC);
    return p;
}

EXPORT void *calloc(size_t a, size_t b) {
    if (b && a > (size_t)-1 / b) return NULL;
    if (!heap_ready()) return boot_alloc(a * b);
    void *p = real_calloc(a, b);
    record_block(p, a * b, CALLER_PC);
    return p;
}

EXPORT void *realloc(void *q, size_t n) {
    if (q && in_boot(q)) {
        size_t old = *(size_t *)((char *)q - 16);
        void *p = heap_ready() ? real_malloc(n) : boot_alloc(n);
        if (p) memcpy(p, q, old < n ? old : n);
        record_block(p, n, CALLER_PC);
        return p;
    }
    if (!heap_ready()) return q ? NULL : boot_alloc(n);
    if (q) heap_release(q, CALLER_PC);
    void *p = real_realloc(q, n);
    record_block(p, n, CALLER_PC);
    return p;
}

EXPORT void free(void *p) {
    if (!p || in_boot(p) || !heap_ready()) return;
    heap_release(p, CALLER_PC);
    real_free(p);
}

/* Aligned blocks come from the heap too (not recorded for reports). */
EXPORT void *memalign(size_t align, size_t n) { return heap_block(REAL_FN(memalign)(align, n), n); }
EXPORT void *aligned_alloc(size_t align, size_t n) { return heap_block(REAL_FN(aligned_alloc)(align, n), n); }
EXPORT int posix_memalign(void **out, size_t align, size_t n) {
    int r = REAL_FN(posix_memalign)(out, align, n);
    if (r == 0) heap_block(*out, n);
    return r;
}
EXPORT void *valloc(size_t n) { return heap_block(REAL_FN(valloc)(n), n); }
EXPORT void *pvalloc(size_t n) { return heap_block(REAL_FN(pvalloc)(n), (n + 4095) & ~(size_t)4095); }

