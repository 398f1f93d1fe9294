/* The heap: the malloc family, interposed to record each block an execution allocates (so
 * that reports can name heap blocks) and to mark how far a worker's heap is in use (so that
 * its restore copies only that far, smc_snapshot_heap_mark). Until libc's functions are
 * known, a static arena serves dlsym's own allocations.
 *
 * Under the graph engine, the program's own blocks come from its thread's heap (below): their
 * addresses are then a function of what that thread did, whatever the others did, which a
 * graph (kept by address, replayed in another order) needs; and no block's memory is reused
 * within an execution, so each allocation is a location of its own. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <sys/auxv.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

/* A call from the C library's or the loader's own code. */
static int from_libc(uint64_t pc) {
    return (pc >= libc_lo && pc < libc_hi) || (pc >= ldso_lo && pc < ldso_hi);
}

/* A free or realloc the program made, not the C library or the loader for their own blocks
 * (stdio's, a joined thread's TLS), which they free at times that depend on the executor and
 * where the output goes. */
static int program_release(uint64_t pc) { return program_call(pc) && !from_libc(pc); }

/* The C library writes a block it frees (its links) or copies one it reallocates: a stop, an
 * event that conflicts with every other thread's access to the block (else a reference count
 * two threads both read as zero before either frees it is never explored: a double free).
 * Under store buffers, the thread's own stores into the block reach memory first, as on the
 * processor, where the library's writes queue behind them: the engine lets the stop through
 * once the thread's buffer holds none (landing later, they would overwrite the allocator's).
 * Not under the graph engine (without store buffers), whose blocks are the runtime's, freed
 * with a store of their own (release_own). */
static void heap_release(void *p, uint64_t pc) {
    if (program_release(pc) &&
        (!(ch->flags & SMC_FLAG_GRAPH) || (ch->flags & SMC_FLAG_FENCES_VISIBLE)))
        smc_stop(SMC_OP_HEAP_RELEASE, (uint64_t)(uintptr_t)p, 0, 0, REAL_FN(malloc_usable_size)(p), pc, 0, 0);
}

/* ---- threads' heaps (the graph engine): a span per slot, reserved once by the fork server,
 * handed out from its bottom (a 16-byte header before each block, each block zeroed, so that
 * what a program reads of memory it did not write does not depend on earlier executions);
 * freeing marks the block, to catch a double free as glibc does, and hands it to the freeing
 * thread's own list, from which that thread's later allocations of the same size take it, the
 * last freed first: glibc's per-thread cache does so, and a program whose lock-free structure
 * gets an address back that it still compares against (ABA) fails as it would there. Which
 * block a thread gets depends on its own calls alone, as a graph needs. Not the C library's and the
 * loader's own blocks: they allocate at times that depend on the schedule (stdio's buffer on
 * the first print of any thread), which would move the thread's later blocks. A span used up,
 * or a process without one, falls back to the C library's heap. ---- */
#if defined(__powerpc64__)
/* qemu-user keeps a descriptor per guest page mapped, reserved or not, and copies them at
 * every fork: a smaller reservation, for the first slots only */
#define SMC_HEAP_SPAN (8ul << 20)
#define SMC_HEAP_SLOTS 32
#else
#define SMC_HEAP_SPAN (128ul << 20)
#define SMC_HEAP_SLOTS SMC_MAX_THREADS
#endif
#define SMC_HEAP_STEP (1ul << 20) /* made usable in steps, as the span is used */
#define BLOCK_LIVE 0x65766c2d636d73ul  /* "smc-lve" */
#define BLOCK_FREED 0x65657266636d73ul /* "smcfree" */
struct block_header {
    uint64_t size;
    uint64_t state;
};
static char *g_heap_area;
static uint64_t g_heap_used[SMC_HEAP_SLOTS];  /* this execution's, from the span's bottom */
static uint64_t g_heap_ready[SMC_HEAP_SLOTS]; /* usable in this process */
static uint32_t g_heap_slots;                   /* the slots this execution allocated in */
#define SMC_FREED_DEPTH 64
struct freed_blocks {
    uint32_t n;
    struct block_header *blocks[SMC_FREED_DEPTH]; /* the last freed last */
};
static struct freed_blocks g_heap_freed[SMC_HEAP_SLOTS]; /* per slot, the blocks its thread freed */
static uint32_t g_freed_slots;                         /* the slots this execution freed in */

void reserve_heaps(void) {
    if (!(ch->flags & SMC_FLAG_GRAPH)) return;
    void *p = mmap(NULL, SMC_HEAP_SPAN * SMC_HEAP_SLOTS, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    g_heap_area = p == MAP_FAILED ? NULL : p;
}

/* An execution starts with every thread's heap empty. */
static uint64_t g_unseen_used; /* (an unseen function's heap, below) */
void heap_reset(void) {
    g_unseen_used = 0;
    for (uint32_t i = 0; i < g_heap_slots; i++) g_heap_used[i] = 0;
    g_heap_slots = 0;
    for (uint32_t i = 0; i < g_freed_slots; i++) g_heap_freed[i].n = 0;
    g_freed_slots = 0;
}

static struct block_header *own_block(const void *p) {
    uint64_t a = (uint64_t)(uintptr_t)p, area = (uint64_t)(uintptr_t)g_heap_area;
    if (!g_heap_area || a < area + sizeof(struct block_header) || a >= area + SMC_HEAP_SPAN * SMC_HEAP_SLOTS)
        return NULL;
    return (struct block_header *)(uintptr_t)(a - sizeof(struct block_header));
}

/* What a block of `n` bytes takes up after its header. */
static uint64_t block_room(uint64_t n) { return (n + 15) & ~(uint64_t)15; }

/* A block the thread freed that holds `n` bytes as a new one would (the last freed first),
 * taken off its list; NULL if none. Its bytes are as they were (as glibc's are), but for the
 * header. */
static struct block_header *reuse_freed(int slot, size_t n) {
    struct freed_blocks *f = &g_heap_freed[slot];
    for (uint32_t i = f->n; i-- > 0;) {
        struct block_header *h = f->blocks[i];
        if (block_room(h->size) != block_room(n)) continue;
        for (uint32_t j = i; j + 1 < f->n; j++) f->blocks[j] = f->blocks[j + 1];
        f->n--;
        h->size = n;
        h->state = BLOCK_LIVE;
        return h;
    }
    return NULL;
}

/* A block of the running thread's heap, for a call from `pc`; NULL where the C library's heap
 * serves it. `align`: a power of two, at least 16. `*reused`: whether it is one the thread
 * freed before (its bytes not zeroed, and other threads' earlier accesses to it events of the
 * execution). */
static void *own_alloc(size_t n, size_t align, uint64_t pc, int *reused) {
    *reused = 0;
    /* (the area is reserved under the graph engine only) */
    if (!g_heap_area || !program_call(pc) || from_libc(pc)) return NULL;
    int slot = t_slot;
    if (slot < 0 || slot >= SMC_HEAP_SLOTS || n > SMC_HEAP_SPAN) return NULL;
    struct block_header *freed = align == 16 ? reuse_freed(slot, n) : NULL;
    if (freed) {
        *reused = 1;
        return freed + 1;
    }
    uint64_t base = (uint64_t)(uintptr_t)g_heap_area + (uint64_t)slot * SMC_HEAP_SPAN;
    uint64_t at = (base + g_heap_used[slot] + sizeof(struct block_header) + align - 1) & ~(uint64_t)(align - 1);
    uint64_t end = at + block_room(n);
    if (end > base + SMC_HEAP_SPAN) return NULL;
    if (end - base > g_heap_ready[slot]) {
        uint64_t ready = (end - base + SMC_HEAP_STEP - 1) & ~(SMC_HEAP_STEP - 1);
        if (mprotect((void *)(uintptr_t)(base + g_heap_ready[slot]), ready - g_heap_ready[slot],
                     PROT_READ | PROT_WRITE) != 0)
            return NULL;
        g_heap_ready[slot] = ready;
    }
    struct block_header *h = (struct block_header *)(uintptr_t)(at - sizeof *h);
    h->size = n;
    h->state = BLOCK_LIVE;
    memset((void *)(uintptr_t)at, 0, n);
    g_heap_used[slot] = end - base;
    if ((uint32_t)slot >= g_heap_slots) g_heap_slots = (uint32_t)slot + 1;
    return (void *)(uintptr_t)at;
}

/* What glibc does with a block it did not hand out or that is already free. */
static void __attribute__((noreturn)) heap_corrupt(const char *msg) {
    ssize_t r = write(2, msg, strlen(msg));
    (void)r;
    abort();
}

/* ---- an unseen function's heap (trap.c at_unseen_bound): what it allocates must not move
 * the blocks the program's events name, and its data (how many blocks it takes) may differ
 * between the worker and the checker's replay of an error (a map keyed by stack addresses),
 * so its blocks come from an area of their own, handed out from the bottom and zeroed, none
 * given back before the execution ends (its frees are no events). */
#define SMC_UNSEEN_AREA (64ull << 20)
static char *g_unseen_area;

static int unseen(void) { return t_unseen_sp && thread_in_execution(); }
static int in_unseen_area(const void *p) {
    return g_unseen_area && (const char *)p >= g_unseen_area && (const char *)p < g_unseen_area + SMC_UNSEEN_AREA;
}

/* A block for an unseen function: `n` zeroed bytes aligned to `align` (a power of two, at
 * least 16), its size in the 16 bytes before it; NULL when the area is full. */
static void *unseen_alloc(size_t n, size_t align) {
    if (!g_unseen_area) {
        void *m = REAL_FN(mmap)(NULL, SMC_UNSEEN_AREA, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) return NULL;
        g_unseen_area = m;
    }
    uint64_t at = (g_unseen_used + 16 + align - 1) & ~(uint64_t)(align - 1);
    if (n > SMC_UNSEEN_AREA || at + n > SMC_UNSEEN_AREA) return NULL;
    g_unseen_used = at + n;
    memset(g_unseen_area + at, 0, n);
    *(size_t *)(g_unseen_area + at - 16) = n;
    return g_unseen_area + at;
}

/* A block of the running thread's heap aligned to `align` (NULL where it is no power of two,
 * or where the C library's heap serves it). */
static void *own_aligned(size_t n, size_t align, uint64_t pc) {
    if (!align || (align & (align - 1))) return NULL;
    if (unseen()) {
        void *u = unseen_alloc(n, align < 16 ? 16 : align);
        if (u) return u;
    }
    int reused;
    return own_alloc(n, align < 16 ? 16 : align, pc, &reused);
}

/* What a freed block's first bytes hold: glibc writes its links there (a tcache entry's next
 * pointer and key), so a read of a freed block does not find what the program stored. Not a
 * canonical address: a freed node's link followed faults, as it would more or less often with
 * glibc's. */
#define BLOCK_POISON 0xfeeefeeefeeefeeeull

/* Frees a live block of a thread's heap. Its first bytes (up to 16, as glibc's links) are
 * written over, a store of the freeing thread, so that another thread's read of the block that
 * the free does not happen before can read them: a use after free found as with glibc's heap
 * (the block marked first, so that a second free of it found while the first one stops is a
 * double free). Then the freeing thread may have it again. */
static void release_own(struct block_header *h, uint64_t pc) {
    h->state = BLOCK_FREED;
    if (!program_release(pc)) return;
    if (h->size) {
        uint8_t poison[8];
        for (int i = 0; i < 8; i++) poison[i] = (uint8_t)(BLOCK_POISON >> (8 * i));
        smc_pieces_begin(pc, 0);
        smc_fill_pieces((uint64_t)(uintptr_t)(h + 1), h->size < 16 ? h->size : 16, poison, 8, 0, pc, 0);
    }
    int slot = t_slot;
    if (slot < 0 || slot >= SMC_HEAP_SLOTS) return;
    struct freed_blocks *f = &g_heap_freed[slot];
    if (f->n == SMC_FREED_DEPTH) return; /* (kept from reuse) */
    f->blocks[f->n++] = h;
    if ((uint32_t)slot >= g_freed_slots) g_freed_slots = (uint32_t)slot + 1;
}
static void own_free(struct block_header *h, const char *what, uint64_t pc) {
    if (h->state != BLOCK_LIVE)
        heap_corrupt(h->state == BLOCK_FREED ? "free(): double free detected in tcache 2\n" : what);
    release_own(h, pc);
}

/* What a new block `p` holds first: `len` bytes copied from `q`, or zeros where `q` is NULL
 * (a fresh block is zeroed already). In a block the thread freed before, other threads'
 * accesses are events of the execution, so the copy or the zeros are the thread's stores. */
static void fill_new(void *p, const void *q, size_t len, int reused, uint64_t pc) {
    if (!reused) {
        if (q) memcpy(p, q, len);
        return;
    }
    smc_pieces_begin(pc, 0);
    if (q) {
        smc_copy_pieces((uint64_t)(uintptr_t)p, (uint64_t)(uintptr_t)q, len, 0, pc, 0);
    } else {
        static const uint8_t zeros[8];
        smc_fill_pieces((uint64_t)(uintptr_t)p, len, zeros, 8, 0, pc, 0);
    }
}

EXPORT void *malloc(size_t n) {
    if (unseen()) {
        void *u = unseen_alloc(n, 16);
        if (u) return u;
    }
    if (!heap_ready()) return boot_alloc(n);
    int reused;
    void *p = own_alloc(n, 16, CALLER_PC, &reused);
    if (!p) p = real_malloc(n);
    record_block(p, n, CALLER_PC);
    return p;
}

EXPORT void *calloc(size_t a, size_t b) {
    if (b && a > (size_t)-1 / b) return NULL;
    if (unseen()) {
        void *u = unseen_alloc(a * b, 16);
        if (u) return u;
    }
    if (!heap_ready()) return boot_alloc(a * b);
    int reused;
    void *p = own_alloc(a * b, 16, CALLER_PC, &reused);
    if (p) fill_new(p, NULL, a * b, reused, CALLER_PC);
    else p = real_calloc(a, b);
    record_block(p, a * b, CALLER_PC);
    return p;
}

EXPORT size_t malloc_usable_size(void *p) {
    struct block_header *h = own_block(p);
    if (h) return h->state == BLOCK_LIVE ? h->size : 0;
    if (!p) return 0;
    if (in_boot(p) || in_unseen_area(p)) return *(size_t *)((char *)p - 16);
    return REAL_FN(malloc_usable_size)(p);
}

EXPORT void *realloc(void *q, size_t n) {
    uint64_t pc = CALLER_PC;
    struct block_header *h = own_block(q);
    if (q && (unseen() || in_unseen_area(q))) {
        /* (a new block, the old one kept, as an unseen function's free keeps it) */
        size_t old = h            ? h->size
                     : in_boot(q) || in_unseen_area(q) ? *(size_t *)((char *)q - 16)
                                                       : REAL_FN(malloc_usable_size)(q);
        void *p = malloc(n);
        if (p) memcpy(p, q, old < n ? old : n);
        return p;
    }
    if (h || (q && in_boot(q))) {
        size_t old = h ? h->size : *(size_t *)((char *)q - 16);
        if (h && h->state != BLOCK_LIVE) heap_corrupt("realloc(): invalid pointer\n");
        int reused = 0;
        void *p = heap_ready() ? own_alloc(n, 16, pc, &reused) : NULL;
        if (!p) p = heap_ready() ? real_malloc(n) : boot_alloc(n);
        if (!p && n) return NULL;
        if (p) fill_new(p, q, old < n ? old : n, reused, pc);
        if (h) release_own(h, pc); /* (found live above) */
        record_block(p, n, pc);
        return p;
    }
    if (!heap_ready()) return q ? NULL : boot_alloc(n);
    int reused;
    void *p = own_alloc(n, 16, pc, &reused);
    if (p) {
        /* a block of the C library's heap moves to the thread's */
        if (q) {
            size_t old = REAL_FN(malloc_usable_size)(q);
            fill_new(p, q, old < n ? old : n, reused, pc);
            heap_release(q, pc);
            real_free(q);
        }
    } else {
        if (q) heap_release(q, pc);
        p = real_realloc(q, n);
    }
    record_block(p, n, pc);
    return p;
}

EXPORT void free(void *p) {
    /* (an unseen function's free is no event: the block is kept till the execution ends) */
    if (unseen() || in_unseen_area(p)) return;
    struct block_header *h = own_block(p);
    if (h) {
        own_free(h, "free(): invalid pointer\n", CALLER_PC);
        return;
    }
    if (!p || in_boot(p) || !heap_ready()) return;
    heap_release(p, CALLER_PC);
    real_free(p);
}

/* Aligned blocks come from the heap too (not recorded for reports). */
EXPORT void *memalign(size_t align, size_t n) {
    void *p = own_aligned(n, align, CALLER_PC);
    return p ? p : heap_block(REAL_FN(memalign)(align, n), n);
}
EXPORT void *aligned_alloc(size_t align, size_t n) {
    void *p = own_aligned(n, align, CALLER_PC);
    return p ? p : heap_block(REAL_FN(aligned_alloc)(align, n), n);
}
EXPORT int posix_memalign(void **out, size_t align, size_t n) {
    void *p = align % sizeof(void *) == 0 ? own_aligned(n, align, CALLER_PC) : NULL;
    if (p) {
        *out = p;
        return 0;
    }
    int r = REAL_FN(posix_memalign)(out, align, n);
    if (r == 0) heap_block(*out, n);
    return r;
}
EXPORT void *valloc(size_t n) {
    void *p = own_aligned(n, 4096, CALLER_PC);
    return p ? p : heap_block(REAL_FN(valloc)(n), n);
}
EXPORT void *pvalloc(size_t n) {
    size_t size = (n + 4095) & ~(size_t)4095;
    void *p = own_aligned(size, 4096, CALLER_PC);
    return p ? p : heap_block(REAL_FN(pvalloc)(n), size);
}
EXPORT void *reallocarray(void *q, size_t a, size_t b) {
    if (b && a > (size_t)-1 / b) return NULL;
    return realloc(q, a * b);
}
