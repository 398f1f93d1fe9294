/* The stop, the trap path and the runtime's signal handlers.
 *
 * At load (startup.c) the runtime patches every instrumented instruction of the executable: a
 * jump to a stub of its own (targets/ARCH/hook.h) or int3. In an execution every visible operation is
 * announced by smc_stop, which waits for the supervisor's go: a trapped shared-memory access
 * (at_site, here) or an interposed call (threads.c, sync.c). The trap path is
 * async-signal-safe: atomics, raw futex syscalls and memcpy only. Crash reports and the hang
 * signal are handled here too.
 *
 * The trap path, the stop and the await hash stay in one file: they run at every event, and the
 * compiler inlines them into each other. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <ucontext.h>
#include <unistd.h>

#include "rt.h"
#include "string_insn.h"


/* ---- process-wide state (set up before main, read-only afterwards) ---- */
struct smc_header *ch;
const struct smc_site *g_sites;
uint32_t g_nsites;
uint64_t g_bias;
uint8_t *g_tramp;
int g_active;
volatile int g_exiting; /* the execution has ended: run everything natively */
uint64_t g_main_stack_lo, g_main_stack_hi;

/* ---- per-thread state ---- */
__thread int t_slot = -1;
__thread uint64_t t_stack_lo, t_stack_hi;
static __thread uint32_t t_prev_flags; /* SMC_PREV_* of the last executed event */
static __thread uint64_t t_prev_addr, t_prev_size, t_prev_read;
static __thread uint64_t t_trap_pc; /* pc of the site being handled, for crash reports */
static __thread int t_in_trap;
static __thread uint32_t t_skipped_loads; /* loads that were no event (the slot's `skipped`) */
static __thread uint8_t t_rmw_buf[SMC_MAX_ACCESS];
/* A tentative change to memory this thread made, undone at its next stop: a buffered store
 * (whose bytes are then captured) or a load's view of its store buffer. */
static __thread struct {
    int active, capture;
    uint64_t addr, size;
    uint8_t saved[SMC_MAX_ACCESS];
} t_fix;
static __thread int t_captured; /* the last store's bytes are in the slot's `stored` */
static __thread int t_written_known; /* the last store's value, read before its memory went */
static __thread uint64_t t_written;
static __thread int t_replaced; /* and what it wrote over in `replaced` (it stayed in memory) */

void notify_supervisor(void) {
    if (g_in_engine) return;
    __atomic_add_fetch(&ch->sup_futex, 1, __ATOMIC_SEQ_CST);
    if (LOAD(&ch->sup_sleeping)) futex_wake_all(&ch->sup_futex); /* else it sees the bump */
}

/* Copy up to 8 bytes of a value for reporting. */
static uint64_t read_value(uint64_t addr, uint64_t size) {
    uint64_t v = 0;
    if (addr < 4096) return 0; /* the access itself will fault; do not fault here first */
    memcpy(&v, (const void *)addr, size < 8 ? size : 8);
    return v;
}

/* Fill the slot's description of the event this thread executed last. */
void publish_prev(struct smc_slot *s) {
    s->prev_flags = t_prev_flags | (t_captured ? SMC_PREV_STORED : 0) | (t_replaced ? SMC_PREV_REPLACED : 0);
    s->prev_read = t_prev_read;
    s->prev_written = 0;
    if (t_prev_flags & SMC_PREV_WROTE) {
        if (t_captured) memcpy(&s->prev_written, s->stored, t_prev_size < 8 ? t_prev_size : 8);
        else if (t_written_known) s->prev_written = t_written;
        else s->prev_written = read_value(t_prev_addr, t_prev_size);
    }
    t_prev_flags = 0;
    t_captured = 0;
    t_replaced = 0;
    t_written_known = 0;
}

/* The program unmaps [lo, hi): what its last event wrote there is read now (the report reads
 * it at the thread's next stop, when it would fault). */
void smc_before_unmap(uint64_t lo, uint64_t hi) {
    if (!in_execution() || !(t_prev_flags & SMC_PREV_WROTE) || t_captured) return;
    if (t_prev_addr + t_prev_size <= lo || t_prev_addr >= hi) return;
    t_written = read_value(t_prev_addr, t_prev_size);
    t_written_known = 1;
}

/* memcpy of an access's bytes: the usual sizes as plain moves (no call into libc per store). */
static inline void copy_access(void *dst, const void *src, uint64_t size) {
    switch (size) {
    case 1: memcpy(dst, src, 1); break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    case 16: memcpy(dst, src, 16); break;
    default: memcpy(dst, src, size);
    }
}

static int buffered(void) { return (ch->flags & SMC_FLAG_BUFFERED) != 0; }

/* Undo this thread's tentative change, capturing a buffered store's bytes first. */
static void undo_tentative(struct smc_slot *s) {
    if (!t_fix.active) return;
    if (t_fix.capture) {
        copy_access(s->stored, (const void *)t_fix.addr, t_fix.size);
        s->stored_size = (uint32_t)t_fix.size;
        t_captured = 1;
        if ((ch->flags & SMC_FLAG_GRAPH) && (t_prev_flags & SMC_PREV_WROTE)) {
            /* the graph engine's writes reach memory in the order they run, so that the
             * kernel and code that is not instrumented see them; a load the engine lets read
             * another write is patched */
            copy_access(s->replaced, t_fix.saved, t_fix.size);
            t_replaced = 1;
            t_fix.active = 0;
            return;
        }
    }
    copy_access((void *)t_fix.addr, t_fix.saved, t_fix.size);
    t_fix.active = 0;
}

/* The thread stops running the program's code: its tentative change is undone (a buffered
 * store's bytes captured), and its buffered stores, which only it sees (pending.c), leave
 * memory; a store captured now joins them. */
static void stop_running(struct smc_slot *s) {
    int store = t_fix.active && t_fix.capture && buffered() && !(ch->flags & SMC_FLAG_GRAPH);
    uint64_t addr = t_fix.addr, size = t_fix.size;
    undo_tentative(s);
    smc_pending_hide(s);
    if (store && !smc_pending_push(s, addr, (uint32_t)size, s->stored)) {
        /* not an error of the program's: the execution is cut here, as at the step bound */
        char msg[128];
        snprintf(msg, sizeof msg, "more than %d stores buffered at once (the checker's limit)",
                 SMC_MAX_PENDING);
        report_error(SMC_ERR_LIMIT, 0, t_trap_pc, 0, msg);
        if (g_coroutines) co_end(0, 0);
        die_now(0);
    }
}

/* Remember memory at [addr, addr+size) so that what the thread does to it next is undone. */
static void begin_tentative(uint64_t addr, uint64_t size, int capture) {
    if (addr < 4096 || size > SMC_MAX_ACCESS) return; /* the access faults, or is too wide to buffer */
    t_fix.addr = addr;
    t_fix.size = size;
    t_fix.capture = capture;
    copy_access(t_fix.saved, (const void *)addr, size);
    t_fix.active = 1;
}

/* Let a load see its own thread's buffered bytes, as the supervisor says. */
static void apply_patch(struct smc_slot *s, uint64_t addr, uint64_t size) {
    uint64_t mask = s->patch_mask;
    if (!mask || size > SMC_MAX_ACCESS) return;
    begin_tentative(addr, size, 0);
    if (!t_fix.active) return;
    for (uint64_t i = 0; i < size; i++)
        if (mask >> i & 1) ((uint8_t *)addr)[i] = s->patch[i];
}

/* Buffered stores the supervisor let reach memory while this thread waited. */
static void apply_commits(void) {
    uint32_t n = LOAD(&ch->ncommits);
    if (n > SMC_MAX_COMMITS) n = SMC_MAX_COMMITS;
    for (uint32_t i = 0; i < n; i++) {
        const struct smc_commit *c = &ch->commits[i];
        /* the graph engine commits each location's latest write as the process exits, when
         * the stack frames written into are gone (and reused by the exit itself) */
        if ((ch->flags & SMC_FLAG_GRAPH) && on_a_stack(c->addr, c->size)) continue;
        smc_commit(c->owner, c->addr, c->bytes, c->size);
    }
    STORE(&ch->ncommits, 0);
}

static void note_executed(uint64_t addr, uint64_t size, int read, int wrote) {
    t_prev_flags = SMC_PREV_VALID | (wrote ? SMC_PREV_WROTE : 0) | (read ? SMC_PREV_READ : 0);
    t_prev_addr = addr;
    t_prev_size = size;
    t_prev_read = read ? read_value(addr, size) : 0;
}

/* A load the runtime made for the program (a futex word compared): its value for the report
 * and for the engine. */
void smc_note_read(uint64_t addr, uint64_t size) { note_executed(addr, size, 1, 0); }

/* Record the first error of this execution. Async-signal-safe. */
void report_error(uint32_t kind, uint32_t sig, uint64_t pc, uint64_t addr, const char *msg) {
    uint32_t none = SMC_ERR_NONE;
    if (!ch || !__atomic_compare_exchange_n(&ch->err_kind, &none, kind, 0, __ATOMIC_SEQ_CST,
                                            __ATOMIC_SEQ_CST))
        return;
    /* the value the dying thread's last event read or wrote, for the report */
    if (t_slot >= 0 && t_slot < SMC_MAX_THREADS) {
        undo_tentative(&ch->slots[t_slot]);
        publish_prev(&ch->slots[t_slot]);
    }
    ch->err_signal = sig;
    ch->err_pc = pc;
    ch->err_addr = addr;
    ch->err_slot = (uint32_t)t_slot;
    if (msg) {
        size_t n = strlen(msg);
        if (n >= SMC_MSG_LEN) n = SMC_MSG_LEN - 1;
        memcpy(ch->err_msg, msg, n);
        ch->err_msg[n] = 0;
    }
    if (ch->flags & SMC_FLAG_DEBUGGABLE) raise(SIGSTOP); /* the debugger takes over here */
}

/* `running` minus one, as it is now */
uint32_t running_less_one(void) {
    if (!g_coroutines) return __atomic_sub_fetch(&ch->running, 1, __ATOMIC_SEQ_CST);
    uint32_t n = LOAD(&ch->running) - 1;
    __atomic_store_n(&ch->running, n, __ATOMIC_RELEASE);
    return n;
}
static uint64_t state_hash(const greg_t *uc, uint16_t dead);
static inline __attribute__((always_inline)) uint64_t stack_hash(uint64_t lo, uint64_t hi, uint64_t h0, uint64_t h1,
                                                                 uint64_t h2, uint64_t h3);
/* How far up from the runtime's frames of a try call its await hash reads the stack: those
 * frames (under 1 KiB with ppc64le's register save areas) and the caller's words above. */
#define SMC_TRY_HASH_SPAN 2048

/* What a load's await hash is computed from: its registers at the hook, and those it
 * overwrites unread; without registers, `fixed` is the hash. */
struct hash_src {
    const greg_t *regs;
    uint16_t dead;
    uint64_t fixed;
};
static uint64_t hash_of(const struct hash_src *h) { return h->regs ? state_hash(h->regs, h->dead) : h->fixed; }

/* A waiting thread sleeps at once. Spinning first (every waiter, or one at a time) took the
 * cores from the thread that runs and from the supervisor: 2x fewer executions/s on 2 cores
 * (BENCHMARKS.md). The supervisor spins instead; it is the one that is woken next. */
/* Wait for the go of the thread stopped at `s`. `h`: its await hash, still to be computed
 * (see smc_stop) before anything else runs, which may read the slot. */
static void wait_go(struct smc_slot *s, const struct hash_src *h) {
    if (g_coroutines)
        while (!LOAD(&s->go)) {
            if (h) s->hash = hash_of(h);
            h = NULL;
            co_wait();
        }
    else
        while (!LOAD(&s->go)) futex(&s->go, FUTEX_WAIT, 0, NULL);
    if (LOAD(&ch->abort)) {
        if (g_coroutines) co_end(0, 0);
        die_now(0);
    }
    if (LOAD(&ch->ncommits)) apply_commits();
    smc_pending_show(s);
    HANDOFF_STORE(&s->go, 0);
    HANDOFF_STORE(&s->state, SMC_SLOT_RUNNING);
}

/* Announce the pending event and wait until the supervisor lets this thread run it.
 * Returns the supervisor's reply. A load's await hash (from `h`; 0 without) is computed only
 * if someone may read it: with the engine in this worker, only when the thread does not go on
 * at once (in a scripted replay it mostly does), which wait_go sees before it lets anything
 * else run; with real threads, a supervisor in the checker (which reads the slot once it sees
 * `running` at 0) or a logged script, before the stop is published. Either way the registers
 * and the stack near them are as they were at the stop: nothing else ran in between. */
static uint64_t stop_with(uint32_t op, uint64_t addr, uint64_t addr2, uint64_t size, uint64_t arg, uint64_t arg2,
                          uint64_t pc, const struct hash_src *h, uint32_t site) {
    if (__builtin_expect(t_atomic_begin_pc != 0, 0)) {
        /* the first visible operation of an atomic section: the section begins before it */
        uint64_t begun = t_atomic_begin_pc;
        t_atomic_begin_pc = 0;
        smc_stop(SMC_OP_ATOMIC_BEGIN, 0, 0, 1, 0, begun, 0, 0);
    }
    struct smc_slot *s = &ch->slots[t_slot];
    int saved_errno = errno; /* the program's, and the wait makes system calls */
    if (g_coroutines) {
        /* on the coroutine's own stack (not a signal stack) */
        struct coro *c = &g_co[t_slot];
        uint64_t here = (uint64_t)(uintptr_t)__builtin_frame_address(0);
        if (here >= c->floor && here < c->top && (!c->low || here < c->low)) c->low = here;
    }
    stop_running(s);
    publish_prev(s);
    s->op = op;
    s->addr = addr;
    s->addr2 = addr2;
    s->size = size;
    s->arg = arg;
    s->arg2 = arg2;
    s->pc = pc;
    s->hash = 0;
    s->site = site;
    s->skipped = t_skipped_loads;
    if (h && (!g_coroutines || !g_in_engine || ch->script_logged)) {
        s->hash = hash_of(h);
        h = NULL;
    }
    HANDOFF_STORE(&s->state, SMC_SLOT_STOPPED);
    if (op == SMC_OP_THREAD_START && !g_coroutines) futex_wake_all(&s->state); /* the creator waits */
    if (running_less_one() == 0) all_waiting(1);
    wait_go(s, h);
    /* Whether the script went on here or in the host, or another thread's engine step ran, is
     * not the program's business: the await hash of a later load takes in stack words the
     * program may not have written since, so what the stop left below this frame is cleared
     * (the same bytes either way). */
    if (g_coroutines) smc_clear_below_sp();
    /* (it stopped: a hang signal that came while it was in here is not for it) */
    if (g_hang_deferred == g_cur) g_hang_deferred = -1;
    errno = saved_errno;
    return LOAD(&s->reply);
}

uint64_t smc_stop(uint32_t op, uint64_t addr, uint64_t addr2, uint64_t size, uint64_t arg, uint64_t pc,
                  const struct hash_src *h, uint32_t site) {
    return stop_with(op, addr, addr2, size, arg, 0, pc, h, site);
}

/* A compare-exchange's stop, with what it compares memory with and what it writes if equal
 * (of `size` bytes): the engine knows before it chooses a source whether the operation
 * writes with it. */
static uint64_t stop_cas(uint64_t ea, uint64_t size, uint64_t expected, uint64_t desired, uint64_t pc,
                         const struct hash_src *h, uint32_t site) {
    return stop_with(SMC_OP_CAS, ea, expected, size, SMC_CAS_OPERANDS, desired, pc, h, site);
}

/* ---- the trap path ---- */

static const struct smc_site *find_site(uint64_t off) {
    uint32_t lo = 0, hi = g_nsites;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (g_sites[mid].offset < off) lo = mid + 1;
        else hi = mid;
    }
    return lo < g_nsites && g_sites[lo].offset == off ? &g_sites[lo] : NULL;
}

static uint64_t effective_address(const struct smc_site *st, const greg_t *uc) {
    uint64_t ea = (uint64_t)st->disp;
    if (st->flags & SMC_SITE_FS) ea += smc_fs_base();
    if (st->base == SMC_REG_RIP) ea += g_bias;
    else if (st->base != SMC_REG_NONE) ea += smc_reg(uc, st->base);
    if (st->index != SMC_REG_NONE) ea += smc_reg(uc, st->index) * st->scale;
    if (st->addr32) ea &= 0xffffffffu;
    return ea;
}

/* Hash of the thread-local state at a load: registers and the stack near the stack pointer
 * (including the red zone), leaving out the registers the load overwrites unread. Two equal
 * hashes at the same pc, with no write in between, mean the thread is going round an await loop. */
static uint64_t state_hash(const greg_t *uc, uint16_t dead) {
    /* four independent chains (the words of each chain a multiply apart would make one long
     * dependency: ~3% of an exploration's samples), mixed at the end; in registers, four words
     * a round (an array indexed by the word's number stayed in memory: a store and a reload
     * in every chain's dependency) */
    uint64_t h0 = 1469598103934665603ULL, h1 = 0x9e3779b97f4a7c15ULL, h2 = 0xc2b2ae3d27d4eb4fULL,
             h3 = 0x165667b19e3779f9ULL;
#define SMC_MIX(h, w) ((h) = ((h) ^ (w)) * 1099511628211ULL)
    for (int i = 0; i < SMC_NGPR; i += 4) {
        if (!(dead >> i & 1)) SMC_MIX(h0, smc_reg(uc, i));
        if (!(dead >> (i + 1) & 1)) SMC_MIX(h1, smc_reg(uc, i + 1));
        if (!(dead >> (i + 2) & 1)) SMC_MIX(h2, smc_reg(uc, i + 2));
        if (!(dead >> (i + 3) & 1)) SMC_MIX(h3, smc_reg(uc, i + 3));
    }
    uint64_t sp = smc_sp(uc);
    return stack_hash(sp - SMC_RED_ZONE, sp + 256, h0, h1, h2, h3);
}

/* The await hash's part from the thread's stack words in [lo, hi), mixed into chains h0..h3. */
static inline __attribute__((always_inline)) uint64_t stack_hash(uint64_t lo, uint64_t hi, uint64_t h0, uint64_t h1, uint64_t h2, uint64_t h3) {
    if (lo < t_stack_lo) lo = t_stack_lo;
    if (hi > t_stack_hi) hi = t_stack_hi;
    /* a coroutine's TLS lies above its stack: left out (a copy of main's, which the host's own
     * calls change between steps) */
    if (g_coroutines && t_slot >= 0 && g_co[t_slot].top && hi > g_co[t_slot].top) hi = g_co[t_slot].top;
    const uint64_t *w = (const uint64_t *)(uintptr_t)(lo & ~7ULL);
    size_t n = hi >= (lo & ~7ULL) + 8 ? (hi - (lo & ~7ULL)) / 8 : 0, k = 0;
    for (; k + 4 <= n; k += 4) {
        SMC_MIX(h0, w[k]);
        SMC_MIX(h1, w[k + 1]);
        SMC_MIX(h2, w[k + 2]);
        SMC_MIX(h3, w[k + 3]);
    }
    if (k < n) SMC_MIX(h0, w[k]);
    if (k + 1 < n) SMC_MIX(h1, w[k + 1]);
    if (k + 2 < n) SMC_MIX(h2, w[k + 2]);
    /* a loop that reads a clock between two loads is not waiting for a write, though its
     * registers may be the same (time() changes once a second) */
    SMC_MIX(h3, clock_reads_of_thread());
    return ((h0 * 31 + h1) * 31 + h2) * 31 + h3;
}
#undef SMC_MIX

/* The await hash of a call that tries to take a lock or a semaphore and returns at once (a
 * trylock): its caller's live state is its callee-saved registers, which
 * __builtin_unwind_init saves into this frame, and its stack: the words from here up, over
 * the runtime's frames of the call (which the same call in the same state leaves the same)
 * to well above the caller's stack pointer. Never 0 (no hash) or the lock-wait mark. */
static __attribute__((noinline)) uint64_t try_hash(void) {
    __builtin_unwind_init();
    volatile uint64_t anchor = 0;
    uint64_t lo = (uint64_t)(uintptr_t)&anchor;
    uint64_t h = stack_hash(lo, lo + SMC_TRY_HASH_SPAN, 1469598103934665603ULL, 0x9e3779b97f4a7c15ULL,
                            0xc2b2ae3d27d4eb4fULL, 0x165667b19e3779f9ULL);
    return h == 0 || h == SMC_HASH_LOCK_WAIT ? 1 : h;
}

static __attribute__((noinline)) uint64_t stop_hashed(uint32_t op, uint64_t obj, uint64_t arg, uint64_t pc,
                                                    uint64_t hash) {
    const struct hash_src h = {NULL, 0, hash};
    return smc_stop(op, obj, 0, 1, arg, pc, &h, 0);
}

/* A try call's stop (`obj` the object, `arg` its argument), with the await hash of its caller:
 * a loop of tries in the same state waits for another thread's change of the object, as a
 * loop of loads waits for a store. (The hash goes on to a frame below this one: what this
 * frame keeps after try_hash is in the stack the next try hashes, so nothing that differs.) */
uint64_t smc_stop_try(uint32_t op, uint64_t obj, uint64_t arg, uint64_t pc) {
    return stop_hashed(op, obj, arg, pc, try_hash());
}

/* What compare-exchange site `st` compares memory with, of `st->size` bytes (rax, edx:eax for
 * cmpxchg8b); 0 for cmpxchg16b, whose 16 bytes are two words. */
static int cas_expected(const struct smc_site *st, const greg_t *uc, uint64_t *out) {
    if (st->kind == SMC_SITE_CAS2) {
        if (st->size != 8) return 0;
        *out = (smc_acc(uc) & 0xffffffffu) | (smc_acc_hi(uc) << 32);
        return 1;
    }
    *out = smc_acc(uc);
    if (st->size < 8) *out &= (1ULL << (8 * st->size)) - 1;
    return 1;
}

static int cas_would_write(const struct smc_site *st, uint64_t ea, const greg_t *uc) {
    if (ea < 4096) return 0;
    uint64_t cur[2] = {0, 0}, want;
    if (!cas_expected(st, uc, &want)) {
        memcpy(cur, (const void *)ea, 16);
        return cur[0] == smc_acc(uc) && cur[1] == smc_acc_hi(uc);
    }
    memcpy(cur, (const void *)ea, st->size);
    return cur[0] == want;
}

/* Compare-exchange site `st`'s operands, of `st->size` bytes: what it compares memory with and
 * what it writes if equal. 0 where not known (cmpxchg16b's are 16 bytes). */
static int cas_operands(const struct smc_site *st, const greg_t *uc, uint64_t *expected, uint64_t *desired) {
    if (!cas_expected(st, uc, expected)) return 0;
    if (st->kind == SMC_SITE_CAS2) {
        *desired = (smc_reg(uc, 3) & 0xffffffffu) | (smc_reg(uc, 1) << 32); /* ecx:ebx */
        return 1;
    }
    return smc_cmpxchg_source((const uint8_t *)g_tramp + st->copy_off, uc, st->size, desired);
}

/* Die of `sig` as if nobody handled it. */
void reraise_default(int sig) {
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sys_sigaction(sig, &dfl, NULL);
    raise(sig); /* blocked until the handler returns, then fatal */
}

static void at_site(const struct smc_site *st, uint64_t pc, greg_t *uc);
static void set_aside_if_deferred(void);

static void on_trap(int sig, siginfo_t *si, void *ucv) {
    (void)sig;
    (void)si;
    greg_t *g = smc_gregs(ucv);
    uint64_t pc = smc_pc(g) - SMC_TRAP_LEN;
    const struct smc_site *st = g_nsites ? find_site(pc - g_bias) : NULL;
    /* a stub's trap (no jump hooks): a chained site's copy went on to the next site */
    if (!st && (st = site_of_stub(pc))) pc = g_bias + st->offset;
    if (!st) {
        /* not one of ours: the program's own int3. Treat it as the fatal signal it would be. */
        report_error(SMC_ERR_SIGNAL, SIGTRAP, pc, 0, NULL);
        reraise_default(SIGTRAP);
        return;
    }
    smc_set_pc(g, (uint64_t)(uintptr_t)g_tramp + st->copy_off);
    at_site(st, pc, g);
    set_aside_if_deferred();
}

/* A jump hook's stub calls this (targets/ARCH/hook.h); the stub then runs the site's copy. */
void smc_hook(greg_t *g, uint32_t index) {
    if (index >= g_nsites) return;
    const struct smc_site *st = &g_sites[index];
    at_site(st, g_bias + st->offset, g);
    set_aside_if_deferred();
}

/* ---- stack and TLS memory shared between threads ---- */

static uint64_t stack_area_lo(void) { return (uint64_t)(uintptr_t)g_stack_area; }
static uint64_t stack_area_hi(void) {
    return g_stack_area ? stack_area_lo() + SMC_STACK_SPAN * SMC_MAX_THREADS : 0;
}

/* Whether [ea, ea + size) touches memory the supervisor said is shared. */
static int hits_shared(uint64_t ea, uint64_t size) {
    uint32_t n = ch->nshared; /* written before the program started */
    for (uint32_t i = 0; i < n && i < SMC_MAX_SHARED; i++) {
        uint64_t lo = ch->shared[i].lo, hi = ch->shared[i].hi;
        if (lo & SMC_SPAN_IN_STACK_AREA) {
            lo = (lo & ~SMC_SPAN_IN_STACK_AREA) + stack_area_lo();
            hi = (hi & ~SMC_SPAN_IN_STACK_AREA) + stack_area_lo();
        }
        if (ea < hi && ea + size > lo) return 1;
    }
    return 0;
}

/* Whether `ea` is another thread's stack or TLS: another slot's part of the stack area, or,
 * for a thread other than main, main's process stack or static TLS. */
static int foreign_private(uint64_t ea) {
    if (ea >= stack_area_lo() && ea < stack_area_hi()) return !(ea >= t_stack_lo && ea < t_stack_hi);
    if (t_slot == 0) return 0;
    return (ea >= g_main_stack_lo && ea < g_main_stack_hi) || (ea >= g_main_tls_lo && ea < g_main_tls_hi);
}

/* Note an access to another thread's stack or TLS that is not known to be shared, by the
 * 8-byte words it touches, for the supervisor to check again with them shared. */
static void note_found(uint64_t ea, uint64_t size) {
    uint64_t lo = ea & ~7ull, hi = (ea + size + 7) & ~7ull;
    if (ea >= stack_area_lo() && ea < stack_area_hi()) {
        lo = (lo - stack_area_lo()) | SMC_SPAN_IN_STACK_AREA;
        hi = (hi - stack_area_lo()) | SMC_SPAN_IN_STACK_AREA;
    }
    uint32_t n = LOAD(&ch->nfound);
    for (uint32_t i = 0; i < n && i < SMC_MAX_SHARED; i++)
        if (ch->found[i].lo <= lo && hi <= ch->found[i].hi) return;
    if (n >= SMC_MAX_SHARED) return; /* the supervisor finds the rest in its next round */
    ch->found[n].lo = lo;
    ch->found[n].hi = hi;
    STORE(&ch->nfound, n + 1);
}

/* Whether an access of [ea, ea + size) by this thread is a visible event: not on this thread's
 * own stack or TLS (`private_site`: the site's operand is) unless some of it is shared (main's
 * process stack too, when it runs as a coroutine: argv and the environment are on it). An
 * access to another thread's stack or TLS not known to be shared is noted for the supervisor. */
/* The graph engine: a read-modify-write reads the bytes the engine chose, and its write is
 * captured at the thread's next stop, as a buffered store's (a compare-exchange that did not
 * write leaves memory as it was). */
static void patch_tentative(struct smc_slot *s, uint64_t addr, uint64_t size) {
    if (!(ch->flags & SMC_FLAG_GRAPH)) return;
    begin_tentative(addr, size, 1);
    if (!t_fix.active) return;
    for (uint64_t i = 0; i < size; i++)
        if (s->patch_mask >> i & 1) ((uint8_t *)addr)[i] = s->patch[i];
}

static int needs_event(uint64_t ea, uint64_t size, int private_site) {
    int own = (ea >= t_stack_lo && ea + size <= t_stack_hi) || private_site ||
              (t_slot == 0 && ea >= g_main_stack_lo && ea + size <= g_main_stack_hi);
    if (own) return (ch->flags & SMC_FLAG_ALL_STACKS) || hits_shared(ea, size);
    if (foreign_private(ea) && !hits_shared(ea, size)) note_found(ea, size);
    return 1;
}

/* Whether the pieces (memory.c) of the operation the program starts now are events: not while
 * it has one thread, which nobody can see half done. The thread's buffered stores then reach
 * memory first (a full fence), so that the operation reads what the thread would. */
static __thread int t_pieces_watched;
int smc_pieces_begin(uint64_t pc, uint32_t site) {
    /* (under the graph engine pieces are always events, so that they read what the engine
     * says) */
    t_pieces_watched = LOAD(&ch->nthreads) > 1 || (ch->flags & SMC_FLAG_GRAPH);
    if (!t_pieces_watched && buffered()) smc_stop(SMC_OP_FENCE, 0, 0, 0, 1, pc, 0, site);
    return t_pieces_watched;
}

/* Whether a piece on [ea, ea + size) may be an event (else it is done as it is). */
int smc_range_watched(uint64_t ea, uint64_t size) {
    return t_pieces_watched && needs_event(ea, size, 0);
}

/* A piece (at most 8 bytes, within one aligned word): a load into `buf` or a store from it,
 * which the runtime carries out for the program, a visible event where the memory may be
 * shared, as a site's access would be. */
void smc_access(int store, uint64_t ea, uint64_t size, void *buf, uint64_t pc, uint32_t site) {
    if (smc_range_watched(ea, size)) {
        t_in_trap = 1;
        t_trap_pc = pc;
        smc_stop(store ? SMC_OP_STORE : SMC_OP_LOAD, ea, 0, size, 0, pc, 0, site);
        if (!store) apply_patch(&ch->slots[t_slot], ea, size);
        else if (buffered()) begin_tentative(ea, size, 1);
        note_executed(ea, size, !store, store);
    }
    if (store) copy_access((void *)(uintptr_t)ea, buf, size);
    else copy_access(buf, (const void *)(uintptr_t)ea, size);
}

/* A load the runtime makes for the program as an event of its own (at most 8 bytes): what the
 * engine lets it read. */
uint64_t smc_visible_load(uint64_t addr, uint64_t size, uint64_t pc) {
    uint64_t v = 0;
    t_in_trap = 1;
    t_trap_pc = pc;
    smc_stop(SMC_OP_LOAD, addr, 0, size, 0, pc, 0, 0);
    apply_patch(&ch->slots[t_slot], addr, size);
    note_executed(addr, size, 1, 0);
    memcpy(&v, (const void *)(uintptr_t)addr, size < 8 ? size : 8);
    t_in_trap = 0;
    return v;
}

/* Where the function whose entry hook runs at `pc` was called from (its call instruction), so
 * that what it does is named by its call, as an interposed call is; `pc` if unknown. */
static uint64_t entry_caller_pc(const greg_t *uc, uint64_t pc) {
    uint64_t ret = smc_entry_return_address(uc);
    return ret ? ret - SMC_CALL_BACK : pc;
}

/* The sites that are not one memory access: string instructions and hooked functions. */
static __attribute__((noinline)) void at_special_site(const struct smc_site *st, uint64_t pc, greg_t *uc,
                                                      uint32_t site_no) {
    if (st->kind == SMC_SITE_ERROR_CALL) {
        /* the program's own reach_error or __VERIFIER_error, or Rust's __rust_start_panic (the
         * panic's message already written by the panic hook): named where it was called from */
        uint64_t at = entry_caller_pc(uc, pc);
        if (st->size == SMC_ERROR_CALL_PANIC) report_error(SMC_ERR_PANIC, 0, at, 0, "panic");
        else report_error(SMC_ERR_VERIFIER, 0, at, 0, st->size ? "__VERIFIER_error() reached" : "reach_error() reached");
        abort();
    }
    if (st->kind == SMC_SITE_ATOMIC_ENTRY) {
        atomic_begin(pc);
        return;
    }
    if (st->kind == SMC_SITE_ATOMIC_EXIT) {
        atomic_end(pc);
        return;
    }
    if (st->kind == SMC_SITE_STRING) {
        smc_pieces_begin(pc, site_no);
        t_in_trap = 1;
        t_trap_pc = pc;
        smc_string_insn(st, pc, uc, site_no);
        t_in_trap = 0;
    }
}

/* Rust std's futex Mutex::lock_contended(&self), called when the inlined compare-exchange of
 * `lock` found the word taken (0 free, 1 taken, 2 taken with sleepers): wait until the word is
 * free, then make it 2. The real function spins, swaps and sleeps on a futex, and an unlock
 * can land between any two of those steps: each place is another execution, several per
 * contended lock. Every way through it ends with the lock taken and the word 1 or 2, and
 * which of the two only decides whether the unlock wakes the futex, on which nobody sleeps
 * here. A compare-exchange repeated while it fails: the engine takes the repetition for an
 * await loop (the thread waits for another's write to the word), and SMC_HASH_LOCK_WAIT
 * tells it the thread is blocked on a lock, a deadlock when nothing can free it. */
static void rust_mutex_lock_contended(uint64_t pc, greg_t *uc, uint32_t site_no) {
    uint32_t *word = (uint32_t *)(uintptr_t)smc_arg0(uc);
    uint64_t ea = (uint64_t)(uintptr_t)word, at = entry_caller_pc(uc, pc);
    if (!in_execution() || !needs_event(ea, 4, 0)) {
        /* nobody else can see the word: taken as a real futex lock takes it (Drepper's) */
        uint32_t free_word = 0;
        if (__atomic_compare_exchange_n(word, &free_word, 2, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) return;
        while (__atomic_exchange_n(word, 2, __ATOMIC_ACQUIRE) != 0) futex(word, FUTEX_WAIT, 2, NULL);
        return;
    }
    const struct hash_src blocked = {NULL, 0, SMC_HASH_LOCK_WAIT};
    for (;;) {
        t_in_trap = 1;
        t_trap_pc = at;
        stop_cas(ea, 4, 0, 2, at, &blocked, site_no);
        patch_tentative(&ch->slots[t_slot], ea, 4);
        uint32_t free_word = 0;
        int taken = LOAD(word) == 0;
        note_executed(ea, 4, 1, taken);
        if (taken) __atomic_compare_exchange_n(word, &free_word, 2, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        t_in_trap = 0;
        if (taken) return;
    }
}

/* A library function whose accesses are no events (src/site.rs UNSEEN_FUNCTIONS) runs from
 * its entry until it leaves with the stack as it found it (a return, or a tail jump after its
 * epilogue), as one step of its thread: no event inside it, so no other thread runs meanwhile,
 * and what it does to memory only such functions see. Its calls run as outside an execution
 * (in_execution() is 0), but for the blocks it frees, kept till the execution ends (heap.c),
 * and its alternate signal stack, the thread's own (process.c). */
__thread uint64_t t_unseen_sp;
static void at_unseen_bound(const struct smc_site *st, greg_t *uc) {
    uint64_t sp = smc_sp(uc);
    if (st->kind == SMC_SITE_UNSEEN_ENTRY) {
        if (thread_in_execution() && !t_unseen_sp) t_unseen_sp = sp;
    } else if (sp >= t_unseen_sp) {
        t_unseen_sp = 0;
    }
}

/* A bounded spin loop's load (targets/x86_64/spin/): its counter is set so that the loop
 * ends after this load, which reaches the same states as spinning on. */
static void end_spin(const struct smc_site *st, greg_t *uc) {
    static const uint64_t value[4] = {0, 1, 0xffffffffu, ~0ull};
    smc_set_reg(uc, st->spin_reg - 1, value[st->spin_value & 3]);
}

#ifdef SMC_HAS_RESERVATIONS
/* This thread's reservation (POWER's load-reserve): where, how wide, and what it read. */
static __thread struct {
    uint64_t addr, size;
    uint8_t value[8];
} t_resv;

/* A load-reserve or store-conditional site (SMC_SITE_RESERVE). The trap between the two loses
 * the processor's reservation (qemu's too), so the store-conditional is carried out here:
 * as the engine's reply says (the graph engine explores failure and success as herd's POWER
 * model does), or, by default, it writes if memory still holds what the load-reserve read
 * (as qemu decides it: by value),
 * sets CR0 as the instruction would, and the program goes on after it. Also outside
 * executions and on the thread's own memory, where it is no event. */
static void at_reserve_site(const struct smc_site *st, uint64_t pc, greg_t *uc, uint32_t site_no) {
    uint64_t ea = effective_address(st, uc), size = st->size;
    int event = in_execution() && needs_event(ea, size, 0);
    const struct hash_src hash = {uc, (uint16_t)(st->dead_regs | st->await_mask), 0};
    struct smc_slot *slot = event ? &ch->slots[t_slot] : NULL;
    if (event) {
        t_in_trap = 1;
        t_trap_pc = pc;
    }
    if (st->kind == SMC_SITE_LOAD) {
        if (in_execution() && !event) t_skipped_loads++;
        if (event) {
            smc_stop(SMC_OP_LOAD, ea, 0, size, 0, pc, &hash, site_no);
            apply_patch(slot, ea, size);
            note_executed(ea, size, 1, 0);
        }
        t_resv.addr = 0;
        if (ea >= 4096 && size <= sizeof t_resv.value) {
            t_resv.addr = ea;
            t_resv.size = size;
            memcpy(t_resv.value, (const void *)(uintptr_t)ea, size);
        }
        t_in_trap = 0;
        return; /* the load-reserve itself runs from its copy */
    }
    uint64_t outcome = SMC_SC_BY_VALUE;
    uint32_t insn;
    memcpy(&insn, (const char *)g_tramp + st->copy_off, 4);
    if (event) {
        uint64_t stores = (uint64_t)uc[(insn >> 21) & 31];
        outcome = stop_with(SMC_OP_CAS, ea, 0, size, SMC_SC_STORES, stores, pc, &hash, site_no);
        patch_tentative(slot, ea, size);
    }
    int holds = outcome == SMC_SC_WRITE ||
                (outcome == SMC_SC_BY_VALUE && ea >= 4096 && t_resv.addr == ea && t_resv.size == size &&
                 memcmp((const void *)(uintptr_t)ea, t_resv.value, size) == 0);
    t_resv.addr = 0;
    if (event) note_executed(ea, size, 1, holds);
    smc_store_conditional(insn, uc, ea, size, holds);
    smc_set_pc(uc, pc + 4);
    t_in_trap = 0;
}
#endif

/* The visible operation of the instruction of site `st` at `pc`, about to run with registers
 * `uc`: report it and wait for the engine's go. */
static void at_site(const struct smc_site *st, uint64_t pc, greg_t *uc) {
    uint32_t site_no = (uint32_t)(st - g_sites) + 1;
#ifdef SMC_HAS_RESERVATIONS
    if (st->flags & SMC_SITE_RESERVE) {
        at_reserve_site(st, pc, uc, site_no);
        return;
    }
#endif
    if (st->kind == SMC_SITE_MODELLED) {
        /* (also outside executions: its copy returns to the caller) */
        if (st->size == SMC_MODELLED_RUST_MUTEX_LOCK) rust_mutex_lock_contended(pc, uc, site_no);
        return;
    }
    if (st->kind == SMC_SITE_UNSEEN_ENTRY || st->kind == SMC_SITE_UNSEEN_EXIT) {
        at_unseen_bound(st, uc);
        return;
    }
    /* (an unseen function's frame left by unwinding) */
    if (t_unseen_sp && smc_sp(uc) > t_unseen_sp) t_unseen_sp = 0;
    if (!in_execution()) return;
    if (st->kind == SMC_SITE_FENCE) {
        if (ch->flags & SMC_FLAG_FENCES_VISIBLE) smc_stop(SMC_OP_FENCE, 0, 0, 0, st->size, pc, 0, site_no);
        return;
    }
    if (st->kind >= SMC_SITE_STRING) {
        at_special_site(st, pc, uc, site_no);
        return;
    }
    struct smc_slot *slot = &ch->slots[t_slot];
    uint64_t ea = effective_address(st, uc);
    uint64_t size = st->size;
    if (!needs_event(ea, size, (st->flags & SMC_SITE_PRIVATE) != 0)) {
        /* (a load of the thread's own stack or TLS is no load a dependency comes from) */
        if (st->kind == SMC_SITE_LOAD && !(st->flags & SMC_SITE_PRIVATE)) t_skipped_loads++;
        return;
    }
    const struct hash_src hash = {uc, (uint16_t)(st->dead_regs | st->await_mask), 0};
    t_in_trap = 1;
    t_trap_pc = pc;
    switch (st->kind) {
    case SMC_SITE_LOAD:
        smc_stop(SMC_OP_LOAD, ea, 0, size, 0, pc, &hash, site_no);
        apply_patch(slot, ea, size);
        note_executed(ea, size, 1, 0);
        if (st->spin_reg) end_spin(st, uc);
        break;
    case SMC_SITE_STORE:
        smc_stop(SMC_OP_STORE, ea, 0, size, 0, pc, 0, site_no);
        if (buffered()) begin_tentative(ea, size, 1);
        note_executed(ea, size, 0, 1);
        break;
    case SMC_SITE_RMW: {
        /* Two events; the store half writes back what the load half saw, so a write by
         * another thread in between is lost as it would be on hardware. */
        uint64_t n = size < sizeof t_rmw_buf ? size : sizeof t_rmw_buf;
        smc_stop(SMC_OP_RMW_LOAD, ea, 0, size, 0, pc, &hash, site_no);
        apply_patch(slot, ea, size);
        note_executed(ea, size, 1, 0);
        if (ea >= 4096) memcpy(t_rmw_buf, (const void *)ea, n);
        smc_stop(SMC_OP_RMW_STORE, ea, 0, size, 0, pc, 0, site_no);
        if (buffered()) begin_tentative(ea, size, 1);
        if (ea >= 4096) memcpy((void *)ea, t_rmw_buf, n);
        note_executed(ea, size, 0, 1);
        break;
    }
    case SMC_SITE_ATOMIC:
        smc_stop(SMC_OP_RMW, ea, 0, size, 0, pc, &hash, site_no);
        patch_tentative(slot, ea, size);
        note_executed(ea, size, 1, 1);
        break;
    case SMC_SITE_CAS:
    case SMC_SITE_CAS2: {
        uint64_t expected = 0, desired = 0;
        if (cas_operands(st, uc, &expected, &desired)) stop_cas(ea, size, expected, desired, pc, &hash, site_no);
        else smc_stop(SMC_OP_CAS, ea, 0, size, 0, pc, &hash, site_no);
        patch_tentative(slot, ea, size);
        note_executed(ea, size, 1, cas_would_write(st, ea, uc));
        break;
    }
    default: {
        if (LOAD(&ch->nthreads) == 1) {
            /* No other thread exists yet, so nobody can see it half done: run it as it is,
             * after the thread's buffered stores reached memory (a full fence). */
            if (buffered()) smc_stop(SMC_OP_FENCE, 0, 0, 0, 1, pc, 0, site_no);
            break;
        }
        char msg[128];
        snprintf(msg, sizeof msg, "instruction at %#lx cannot be run faithfully on shared memory",
                 (unsigned long)pc);
        report_error(SMC_ERR_UNSUPPORTED, 0, pc, ea, msg);
        die_now(125);
    }
    }
    t_in_trap = 0;
}

void on_fatal(int sig, siginfo_t *si, void *ucv) {
    if (ch) {
        /* also before main: the supervisor then says where start-up crashed */
        uint64_t pc = t_in_trap ? t_trap_pc : smc_pc(smc_gregs(ucv));
        report_error(SMC_ERR_SIGNAL, (uint32_t)sig, pc, (uint64_t)(uintptr_t)si->si_addr, NULL);
    }
    if (g_coroutines && g_cur >= 0 && !g_exec_over) {
        /* The worker outlives the crash of one of its coroutines: the execution ends as if
         * the signal had killed the process (stdio not flushed), the next one starts from
         * the snapshot, and the crashed context is never returned to. Leaving the handler
         * this way keeps `sig` blocked; unblock it for the next execution. */
        sys_unblock_signal(sig);
        co_end(sig, 0);
    }
    reraise_default(sig);
}

/* The hang signal (the checker's, or the worker's own timer for a step that hung before): the
 * running coroutine has run past the time limit without a visible operation. It is set aside
 * for the rest of the execution, the others go on: its tentative change undone and what its
 * last event did published as at a stop, its slot SMC_SLOT_HUNG, and it is never switched to
 * again (the snapshot puts its stack back). Inside the runtime's own code (a step's tail), it
 * waits for the next signal. With real threads the checker ends the execution instead. */
static void set_aside(void) {
    int me = g_cur;
    struct coro *c = &g_co[me];
    uint64_t here = (uint64_t)(uintptr_t)__builtin_frame_address(0);
    if (here >= c->floor && here < c->top && (!c->low || here < c->low)) c->low = here;
    struct smc_slot *s = &ch->slots[me];
    stop_running(s);
    publish_prev(s);
    HANDOFF_STORE(&s->state, SMC_SLOT_HUNG);
    c->waiting = 0;
    if (running_less_one() == 0) all_waiting(0);
    co_switch(-1);
    __builtin_unreachable();
}

/* The coroutine the hang signal found inside the runtime's own code, -1 for none: it is set
 * aside as it leaves a site's hook for the program's code, unless it stops first. A spin whose
 * every iteration passes a site that is not an event (an access of its own stack) spends
 * most of its time in the hook, where a signal that only waits for the next would rarely
 * find it out. */
int g_hang_deferred = -1;

static void set_aside_if_deferred(void) {
    if (__builtin_expect(g_hang_deferred >= 0, 0) && g_hang_deferred == g_cur && !g_exec_over) {
        g_hang_deferred = -1;
        set_aside();
    }
}

static void on_hang(int sig, siginfo_t *si, void *ucv) {
    (void)si;
    if (!g_coroutines || g_cur < 0 || g_exec_over) return;
    uint64_t pc = smc_pc(smc_gregs(ucv));
    if (t_in_trap || in_runtime(pc)) {
        g_hang_deferred = g_cur;
        return;
    }
    sys_unblock_signal(sig); /* left blocked by switching away */
    set_aside();
}

void install_handlers(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_trap;
    /* not blocked in its own handler: a coroutine may switch to another one that traps */
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sys_sigaction(SIGTRAP, &sa, NULL);
    sa.sa_sigaction = on_fatal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    for (unsigned i = 1; i < N_RUNTIME_SIGNALS - 1; i++) sys_sigaction(runtime_signals[i], &sa, NULL);
    sa.sa_sigaction = on_hang;
    sys_sigaction(SMC_HANG_SIGNAL, &sa, NULL);
    /* the descriptor watch's calls are made inside it (SIGSYS also while its handler runs) */
    sa.sa_sigaction = on_sys;
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER;
    sys_sigaction(SIGSYS, &sa, NULL);
}
