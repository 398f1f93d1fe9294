/* smc-run runtime: preloaded into the program under test.
 *
 * It executes, it never decides. At load it maps the channel, patches a trap over every
 * instrumented instruction of the executable and becomes a fork server at main. In an
 * execution, every visible operation (a trapped shared-memory access, a pthread call) is
 * announced in the thread's slot and the thread waits until the supervisor lets it run; only
 * one thread of the program runs at a time. The trap path is async-signal-safe: atomics,
 * raw futex syscalls and memcpy only. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <linux/futex.h>
#include <malloc.h>

#include "channel.h"
#include "arch.h"
#include "coro.h"
#include "hook.h"
#include "fdwatch.h"
#include "snapshot.h"

#define EXPORT __attribute__((visibility("default")))
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

/* ---- process-wide state (set up before main, read-only afterwards) ---- */
static struct smc_header *ch;
static const struct smc_site *g_sites;
static uint32_t g_nsites;
static uint64_t g_bias;
static uint8_t *g_tramp;
static int g_active;
static volatile int g_exiting; /* the execution has ended: run everything natively */
static pthread_t g_tids[SMC_MAX_THREADS];
static uint64_t g_main_stack_lo, g_main_stack_hi;

/* ---- coroutines: a worker process runs execution after execution, the program's threads as
 * coroutines of its one OS thread, and puts its memory back from a snapshot after each ---- */
static int g_coroutines;
static struct coro {
    uint64_t sp, fs;
    int waiting; /* suspended in wait_go: the host may resume it once its go is set */
    void *ret;   /* what the thread returned, for pthread_join */
    /* its stack: where it starts, where it ends, and the deepest stop on it since it was last
     * cleared (0: clean) */
    uint64_t top, floor, low;
} g_co[SMC_MAX_THREADS];
/* The coroutines any execution has used so far: an execution's start resets only these (all
 * SMC_MAX_THREADS of them are 14 KiB, as much as the rest of a small execution touches). */
static uint32_t g_co_span = 1;
static uint64_t g_host_sp;  /* the worker's loop, on the process's own stack */
static int g_cur = -1;      /* the coroutine running, -1 for the host */
static int g_resume = -1;   /* who runs next when the current one waits: a creator whose child
                             * has announced its first event */
static int g_exec_over, g_exec_status, g_exec_flush;
static int g_all_waiting;   /* every thread of the execution waits: the host takes it from here */
static int g_errno_at_main; /* main's errno when the snapshot was taken */
static int g_exit_for_real; /* the execution must end with exit() (exit handlers in libc's list) */
static pid_t g_worker_pid;  /* this worker's process id, 0 outside a worker */
static int g_nexit_handlers; /* exit handlers the worker keeps for the execution (below) */
static void run_exit_handlers(int status);
static void run_thread_local_dtors(int slot);
static void run_key_dtors(void);
static void co_thread_reset(void);
static void restore_if_pending(void);
static void keep_keys_at_main(void);
static int unmap_execution_maps(void);
static int loader_changed(void);
static void keep_cwd_at_main(void);
static int restore_cwd(void);
static void keep_signals_at_main(void);
static void restore_signals(void);
static int g_argc;
static char **g_argv, **g_envp;

/* ---- the engine inside the worker (src/target/in_worker.rs): the checker's engine, loaded
 * into the fork server as a library, runs a whole exploration in the worker, calling the
 * coroutine loop below directly instead of a round trip to the checker per step ---- */
struct smc_engine_ops { /* EngineOps in src/target/in_worker.rs */
    uint64_t abi;
    void *channel;
    uint64_t channel_size;
    int (*begin)(void);
    int (*run)(void);
    int (*end)(void);
};
#define SMC_ENGINE_ABI 2
typedef int (*engine_explore_fn)(const struct smc_engine_ops *, void *);
static char g_engine_lib[4096]; /* SMC_ENGINE_LIB */
static void *g_engine_area;      /* SMC_ENGINE_FD's area, shared with the checker */
static engine_explore_fn g_engine_explore;
static int g_in_engine;    /* the worker's engine runs: nobody waits for a stop */
static int g_worker_spent; /* this worker cannot run another execution */
/* Yields before the worker sleeps waiting for a go, when it shares its one CPU with the
 * supervisor: the go usually comes within microseconds, and a wake-up costs more. */
static int g_yields;
#define WORKER_YIELDS 20

/* ---- per-thread state ---- */
static __thread int t_slot = -1;
static __thread uint64_t t_stack_lo, t_stack_hi;
static __thread uint32_t t_prev_flags; /* SMC_PREV_* of the last executed event */
static __thread uint64_t t_prev_addr, t_prev_size, t_prev_read;
static __thread uint64_t t_trap_pc; /* pc of the site being handled, for crash reports */
static __thread int t_in_trap;
static __thread uint8_t t_rmw_buf[SMC_MAX_ACCESS];
/* A tentative change to memory this thread made, undone at its next stop: a buffered store
 * (whose bytes are then captured) or a load's view of its store buffer. */
static __thread struct {
    int active, capture;
    uint64_t addr, size;
    uint8_t saved[SMC_MAX_ACCESS];
} t_fix;
static __thread int t_captured; /* the last store's bytes are in the slot's `stored` */

/* ---- real functions ---- */
typedef int (*main_fn)(int, char **, char **);
static main_fn real_main;
static int (*real_pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static int (*real_pthread_join)(pthread_t, void **);
static void (*real_pthread_exit)(void *) __attribute__((noreturn));
static void (*real_exit)(int) __attribute__((noreturn));
static void (*real_assert_fail)(const char *, const char *, unsigned, const char *) __attribute__((noreturn));

#define LOAD(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)
/* The hand-off between a thread's stop and its go: with real threads the stores are ordered
 * with the loads of other threads that follow them (SEQ_CST: a locked instruction each, on
 * x86). With coroutines one OS thread runs the program's threads, and a supervisor in the
 * checker only needs to see a stop's stores in order (it reads the slot once it sees
 * `running` at 0): release stores do, plain ones on x86 (they were ~6 locked instructions per
 * event). */
#define HANDOFF_STORE(p, v)                                                                        \
    do {                                                                                           \
        if (g_coroutines) __atomic_store_n((p), (v), __ATOMIC_RELEASE);                            \
        else STORE(p, v);                                                                          \
    } while (0)
/* `running` minus one, as it is now */
static uint32_t running_less_one(void);

/* The function this one interposes (looked up once), and a forward to it. */
#define REAL_FN(name)                                                                              \
    ({                                                                                             \
        static __typeof__(name) *real_fn;                                                          \
        if (!real_fn) real_fn = (__typeof__(name) *)dlsym(RTLD_NEXT, #name);                       \
        real_fn;                                                                                   \
    })
#define REAL(name, ...) return REAL_FN(name)(__VA_ARGS__)

static long futex(uint32_t *w, int op, uint32_t val, const struct timespec *ts) {
    return syscall(SYS_futex, w, op, val, ts, NULL, 0);
}
static void futex_wake_all(uint32_t *w) { futex(w, FUTEX_WAKE, 0x7fffffff, NULL); }

static void __attribute__((noreturn)) die_now(int code) {
    syscall(SYS_exit_group, code);
    __builtin_unreachable();
}

static void notify_supervisor(void) {
    if (g_in_engine) return;
    __atomic_add_fetch(&ch->sup_futex, 1, __ATOMIC_SEQ_CST);
    if (LOAD(&ch->sup_sleeping)) futex_wake_all(&ch->sup_futex); /* else it sees the bump */
}

static int in_execution(void) { return g_active && t_slot >= 0 && !g_exiting; }

/* Copy up to 8 bytes of a value for reporting. */
static uint64_t read_value(uint64_t addr, uint64_t size) {
    uint64_t v = 0;
    if (addr < 4096) return 0; /* the access itself will fault; do not fault here first */
    memcpy(&v, (const void *)addr, size < 8 ? size : 8);
    return v;
}

/* Fill the slot's description of the event this thread executed last. */
static void publish_prev(struct smc_slot *s) {
    s->prev_flags = t_prev_flags | (t_captured ? SMC_PREV_STORED : 0);
    s->prev_read = t_prev_read;
    s->prev_written = 0;
    if (t_prev_flags & SMC_PREV_WROTE) {
        if (t_captured) memcpy(&s->prev_written, s->stored, t_prev_size < 8 ? t_prev_size : 8);
        else s->prev_written = read_value(t_prev_addr, t_prev_size);
    }
    t_prev_flags = 0;
    t_captured = 0;
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

/* Undo this thread's tentative change, capturing a buffered store's bytes first. */
static void undo_tentative(struct smc_slot *s) {
    if (!t_fix.active) return;
    if (t_fix.capture) {
        copy_access(s->stored, (const void *)t_fix.addr, t_fix.size);
        s->stored_size = (uint32_t)t_fix.size;
        t_captured = 1;
    }
    copy_access((void *)t_fix.addr, t_fix.saved, t_fix.size);
    t_fix.active = 0;
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

static int buffered(void) { return (ch->flags & SMC_FLAG_BUFFERED) != 0; }

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
/* A buffered store reaches memory (bytes the supervisor sent: checked before use). */
static void commit_bytes(uint64_t addr, const uint8_t *bytes, uint32_t size) {
    if (addr >= 4096 && size <= SMC_MAX_ACCESS) memcpy((void *)addr, bytes, size);
}

static void apply_commits(void) {
    uint32_t n = LOAD(&ch->ncommits);
    if (n > SMC_MAX_COMMITS) n = SMC_MAX_COMMITS;
    for (uint32_t i = 0; i < n; i++) commit_bytes(ch->commits[i].addr, ch->commits[i].bytes, ch->commits[i].size);
    STORE(&ch->ncommits, 0);
}

static void note_executed(uint64_t addr, uint64_t size, int read, int wrote) {
    t_prev_flags = SMC_PREV_VALID | (wrote ? SMC_PREV_WROTE : 0) | (read ? SMC_PREV_READ : 0);
    t_prev_addr = addr;
    t_prev_size = size;
    t_prev_read = read ? read_value(addr, size) : 0;
}

/* Record the first error of this execution. Async-signal-safe. */
static void report_error(uint32_t kind, uint32_t sig, uint64_t pc, uint64_t addr, const char *msg) {
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

/* A waiting thread sleeps at once. Spinning first (every waiter, or one at a time) took the
 * cores from the thread that runs and from the supervisor: 2x fewer executions/s on 2 cores
 * (BENCHMARKS.md). The supervisor spins instead; it is the one that is woken next. */
static void co_wait(void);
static void co_end(int status, int flush) __attribute__((noreturn));

static uint32_t running_less_one(void) {
    if (!g_coroutines) return __atomic_sub_fetch(&ch->running, 1, __ATOMIC_SEQ_CST);
    uint32_t n = LOAD(&ch->running) - 1;
    __atomic_store_n(&ch->running, n, __ATOMIC_RELEASE);
    return n;
}
static uint64_t state_hash(const greg_t *uc, uint16_t dead);

/* What a load's await hash is computed from: its registers at the hook, and those it
 * overwrites unread. */
struct hash_src {
    const greg_t *regs;
    uint16_t dead;
};

/* Wait for the go of the thread stopped at `s`. `h`: its await hash, still to be computed
 * (see smc_stop) before anything else runs, which may read the slot. */
static void wait_go(struct smc_slot *s, const struct hash_src *h) {
    if (g_coroutines)
        while (!LOAD(&s->go)) {
            if (h) s->hash = state_hash(h->regs, h->dead);
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
    HANDOFF_STORE(&s->go, 0);
    HANDOFF_STORE(&s->state, SMC_SLOT_RUNNING);
}

/* ---- scripted replay ---- */

/* Log slot `i` as it is now, the state after `epoch` scripted steps. 0 when the log is full. */
static int log_slot(uint32_t epoch, uint32_t i) {
    uint32_t n = ch->log_len;
    if (n >= SMC_MAX_LOG || i >= SMC_MAX_THREADS) return 0;
    ch->log[n].epoch = epoch;
    ch->log[n].slot = i;
    memcpy(&ch->log[n].copy, &ch->slots[i], sizeof ch->log[n].copy);
    ch->log_len = n + 1;
    return 1;
}

/* Log what step `k - 1` changed (its thread, and the threads it created): the state after k
 * steps, which the supervisor reads back when it replays step k - 1. */
static int log_epoch(uint32_t k) {
    if (k > 0 && ch->script[k - 1].slot != SMC_SCRIPT_COMMIT && !log_slot(k, ch->script[k - 1].slot))
        return 0;
    uint32_t n = LOAD(&ch->nthreads);
    for (uint32_t i = ch->log_threads; i < n; i++)
        if (!log_slot(k, i)) return 0;
    ch->log_threads = n;
    return 1;
}

/* Carry out the next scripted steps: buffered stores reach memory, then one thread is let
 * run its event: its slot + 1. 0 when the script is done (or cannot go on): the supervisor
 * takes over. */
static int run_script(void) {
    uint32_t len = LOAD(&ch->script_len);
    if (len > SMC_MAX_SCRIPT) len = SMC_MAX_SCRIPT;
    for (uint32_t k = ch->script_done; k < len; k = ch->script_done) {
        if (ch->script_logged && !log_epoch(k)) return 0;
        const struct smc_script_step *st = &ch->script[k];
        if (st->slot == SMC_SCRIPT_COMMIT) {
            commit_bytes(st->addr, st->bytes, st->size);
            ch->script_done = k + 1;
            continue;
        }
        if (st->slot >= LOAD(&ch->nthreads) || LOAD(&ch->slots[st->slot].state) != SMC_SLOT_STOPPED)
            return 0; /* not what the previous execution did: the supervisor will see why */
        struct smc_slot *s = &ch->slots[st->slot];
        if ((st->expect_pc && s->pc != st->expect_pc) || (st->expect_addr && s->addr != st->expect_addr))
            return 0;
        s->reply = st->reply;
        s->patch_mask = st->patch_mask;
        if (st->patch_mask) memcpy(s->patch, st->bytes, sizeof s->patch);
        ch->script_done = k + 1;
        HANDOFF_STORE(&ch->running, 1);
        HANDOFF_STORE(&s->go, 1);
        if (st->slot != (uint32_t)t_slot && !g_coroutines) futex(&s->go, FUTEX_WAKE, 1, NULL);
        return (int)st->slot + 1;
    }
    return 0;
}

/* The script's next step, if one runs now (every thread waits): run_script's answer. */
static int script_step(void) {
    return LOAD(&ch->script_len) && !LOAD(&ch->running) ? run_script() : 0;
}

/* Every thread of the execution waits: let the script's next step run (1), or end the script
 * and tell the supervisor (0). `running` is 0 for a moment between two scripted steps too; the
 * supervisor takes it for a stop only once script_len is 0 again. */
static int go_on_or_notify(void) {
    if (script_step()) return 1;
    STORE(&ch->script_len, 0);
    notify_supervisor();
    return 0;
}

/* A coroutine that stopped last goes on with the script itself: the next step's thread runs
 * without a round through the host (two switches, one with the host's thread pointer), or
 * at once if it is this one. 0 when the script is over: the host takes over. Not inlined: its
 * frame lies below smc_stop's, where smc_stop clears after the stop (see there). */
static __attribute__((noinline)) int script_goes_on(void) {
    int slot = script_step() - 1;
    if (slot < 0) return 0;
    if (slot != t_slot) g_resume = slot;
    return 1;
}

/* Every thread of the execution waits. `stopping`: the caller waits for its go next (it may
 * go on with the script itself); otherwise it leaves for the host. */
static void all_waiting(int stopping) {
    if (g_coroutines) {
        /* else the host goes on (co_run_ready) */
        if (!stopping || !script_goes_on()) g_all_waiting = 1;
        return;
    }
    go_on_or_notify();
}

/* Announce the pending event and wait until the supervisor lets this thread run it.
 * Returns the supervisor's reply. A load's await hash (from `h`; 0 without) is computed only
 * if someone may read it: with the engine in this worker, only when the thread does not go on
 * at once (in a scripted replay it mostly does), which wait_go sees before it lets anything
 * else run; with real threads, a supervisor in the checker (which reads the slot once it sees
 * `running` at 0) or a logged script, before the stop is published. Either way the registers
 * and the stack near them are as they were at the stop: nothing else ran in between. */
static uint64_t smc_stop(uint32_t op, uint64_t addr, uint64_t addr2, uint64_t size, uint64_t arg,
                         uint64_t pc, const struct hash_src *h, uint32_t site) {
    struct smc_slot *s = &ch->slots[t_slot];
    int saved_errno = errno; /* the program's, and the wait makes system calls */
    if (g_coroutines) {
        /* on the coroutine's own stack (not a signal stack) */
        struct coro *c = &g_co[t_slot];
        uint64_t here = (uint64_t)(uintptr_t)__builtin_frame_address(0);
        if (here >= c->floor && here < c->top && (!c->low || here < c->low)) c->low = here;
    }
    undo_tentative(s);
    publish_prev(s);
    s->op = op;
    s->addr = addr;
    s->addr2 = addr2;
    s->size = size;
    s->arg = arg;
    s->pc = pc;
    s->hash = 0;
    s->site = site;
    if (h && (!g_coroutines || !g_in_engine || ch->script_logged)) {
        s->hash = state_hash(h->regs, h->dead);
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
    errno = saved_errno;
    return LOAD(&s->reply);
}

/* The call instruction that called us (a return address minus one points into it, so that
 * function+offset and file:line name the call, not the statement after it). */
#define CALLER_PC ((uint64_t)(uintptr_t)__builtin_return_address(0) - 1)

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
    uint64_t lo = sp - SMC_RED_ZONE, hi = sp + 256;
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
#undef SMC_MIX
    return ((h0 * 31 + h1) * 31 + h2) * 31 + h3;
}

static int cas_would_write(const struct smc_site *st, uint64_t ea, const greg_t *uc) {
    if (ea < 4096) return 0;
    if (st->kind == SMC_SITE_CAS2) {
        uint64_t cur[2] = {0, 0};
        if (st->size == 16) {
            memcpy(cur, (const void *)ea, 16);
            return cur[0] == smc_acc(uc) && cur[1] == smc_acc_hi(uc);
        }
        memcpy(cur, (const void *)ea, 8);
        return cur[0] == ((smc_acc(uc) & 0xffffffffu) | (smc_acc_hi(uc) << 32));
    }
    uint64_t cur = 0, want = smc_acc(uc);
    memcpy(&cur, (const void *)ea, st->size);
    if (st->size < 8) want &= (1ULL << (8 * st->size)) - 1;
    return cur == want;
}

static int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);

/* libc's sigaction: the runtime's own (below) keeps the program off the signals it needs */
static int sys_sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
    if (!real_sigaction) real_sigaction = dlsym(RTLD_NEXT, "sigaction");
    return real_sigaction(sig, act, old);
}

/* Die of `sig` as if nobody handled it. */
static void reraise_default(int sig) {
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sys_sigaction(sig, &dfl, NULL);
    raise(sig); /* blocked until the handler returns, then fatal */
}

static void at_site(const struct smc_site *st, uint64_t pc, const greg_t *uc);

static void on_trap(int sig, siginfo_t *si, void *ucv) {
    (void)sig;
    (void)si;
    greg_t *g = smc_gregs(ucv);
    uint64_t pc = smc_pc(g) - SMC_TRAP_LEN;
    const struct smc_site *st = g_nsites ? find_site(pc - g_bias) : NULL;
    if (!st) {
        /* not one of ours: the program's own int3. Treat it as the fatal signal it would be. */
        report_error(SMC_ERR_SIGNAL, SIGTRAP, pc, 0, NULL);
        reraise_default(SIGTRAP);
        return;
    }
    smc_set_pc(g, (uint64_t)(uintptr_t)g_tramp + st->copy_off);
    at_site(st, pc, g);
}

/* A jump hook's stub calls this (targets/ARCH/hook.h); the stub then runs the site's copy. */
void smc_hook(greg_t *g, uint32_t index) {
    if (index >= g_nsites) return;
    const struct smc_site *st = &g_sites[index];
    at_site(st, g_bias + st->offset, g);
}

/* The visible operation of the instruction of site `st` at `pc`, about to run with registers
 * `uc`: report it and wait for the engine's go. */
static void at_site(const struct smc_site *st, uint64_t pc, const greg_t *uc) {
    uint32_t site_no = (uint32_t)(st - g_sites) + 1;
    if (!in_execution()) return;
    if (st->kind == SMC_SITE_FENCE) {
        if (ch->flags & SMC_FLAG_FENCES_VISIBLE) smc_stop(SMC_OP_FENCE, 0, 0, 0, st->size, pc, 0, site_no);
        return;
    }
    struct smc_slot *slot = &ch->slots[t_slot];
    uint64_t ea = effective_address(st, uc);
    if (ea >= t_stack_lo && ea < t_stack_hi) return; /* this thread's own stack */
    /* main's, when it runs as a coroutine: argv and the environment are on it */
    if (t_slot == 0 && ea >= g_main_stack_lo && ea < g_main_stack_hi) return;
    uint64_t size = st->size;
    const struct hash_src hash = {uc, st->dead_regs};
    t_in_trap = 1;
    t_trap_pc = pc;
    switch (st->kind) {
    case SMC_SITE_LOAD:
        smc_stop(SMC_OP_LOAD, ea, 0, size, 0, pc, &hash, site_no);
        apply_patch(slot, ea, size);
        note_executed(ea, size, 1, 0);
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
        smc_stop(SMC_OP_RMW, ea, 0, size, 0, pc, 0, site_no);
        note_executed(ea, size, 1, 1);
        break;
    case SMC_SITE_CAS:
    case SMC_SITE_CAS2:
        smc_stop(SMC_OP_CAS, ea, 0, size, 0, pc, &hash, site_no);
        note_executed(ea, size, 1, cas_would_write(st, ea, uc));
        break;
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

static void on_fatal(int sig, siginfo_t *si, void *ucv) {
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
        sigset_t m;
        sigemptyset(&m);
        sigaddset(&m, sig);
        syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &m, NULL, _NSIG / 8);
        co_end(sig, 0);
    }
    reraise_default(sig);
}

/* The checker's sign to the engine inside the worker that a thread has run too long without a
 * visible operation: the execution ends as a hang (SIGRTMAX; the checker sends it). */
#define SMC_HANG_SIGNAL (_NSIG - 1)

/* The signals the runtime keeps for itself: SIGTRAP (its traps), the fatal ones (crash
 * reports; SIGSYS also for the worker's descriptor watch), and the hang signal. The program
 * may neither handle nor block them during an execution. */
static const int runtime_signals[] = {SIGTRAP, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS, SMC_HANG_SIGNAL};
#define N_RUNTIME_SIGNALS (sizeof runtime_signals / sizeof runtime_signals[0])

static int g_exec_hung; /* the execution ended on the hang signal */

/* The worker's descriptor watch (fdwatch.h): on, whether a call it stopped (one that may
 * have opened a descriptor, or used descriptor 1 or 2 when the output is watched) ran since
 * the last restore, which closes descriptors only then, and executions until it goes on.
 * Installing the filter costs ~0.2 ms here (about what the watch saves in 200 executions): a
 * check of a few executions does without. */
static int g_fdwatch_on, g_fds_touched;
static int g_restore_pending; /* co_reset's restore is still to be done (restore_if_pending) */
static int g_fdwatch_countdown = -1; /* not read yet */
/* The watch covers the output too: an execution that made no call it stopped wrote nothing to
 * the capture file nor moved its offset (0), and the worker need not ask with lseek. Only for
 * a program that wrote nothing there in the executions before the watch went on: each write to
 * it costs a signal from then on. */
static int g_output_watched, g_output_seen;

static void on_sys(int sig, siginfo_t *si, void *ucv) {
    if (!g_fdwatch_on || !smc_fdwatch_ours(si)) {
        on_fatal(sig, si, ucv);
        return;
    }
    g_fds_touched = 1;
    smc_fdwatch_make_call(si, smc_gregs(ucv));
}

/* After a restore that closed what the execution opened: put the watch on when it is time
 * (SMC_FDWATCH_AFTER executions, 0 never; the tests start it after the first). */
static void fdwatch_count_down(void) {
    if (g_fdwatch_countdown < 0) {
        const char *after = getenv("SMC_FDWATCH_AFTER");
        g_fdwatch_countdown = after ? atoi(after) : 256;
    }
    if (g_fdwatch_on || g_fdwatch_countdown <= 0 || --g_fdwatch_countdown > 0) return;
    int output = (ch->flags & SMC_FLAG_CAPTURED) && !g_output_seen;
    g_fdwatch_on = smc_fdwatch_install(output);
    g_output_watched = g_fdwatch_on && output;
}

static void on_hang(int sig, siginfo_t *si, void *ucv) {
    (void)si;
    (void)ucv;
    if (!g_in_engine || g_cur < 0 || g_exec_over) return; /* nothing to end: the checker kills */
    g_exec_hung = 1;
    sigset_t m; /* left by switching away: unblock it for the next execution */
    sigemptyset(&m);
    sigaddset(&m, sig);
    syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &m, NULL, _NSIG / 8);
    co_end(0, 0);
}

static void install_handlers(void) {
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

/* ---- start-up: map the channel, receive the relocated copies, patch the text ---- */

static int first_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    uint64_t *out = data; /* bias, lowest, highest address of the executable */
    out[0] = info->dlpi_addr;
    out[1] = UINT64_MAX;
    out[2] = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        uint64_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (lo < out[1]) out[1] = lo;
        if (hi > out[2]) out[2] = hi;
    }
    return 1; /* the first object is the executable */
}

static void init_fail(const char *msg) {
    snprintf(ch->err_msg, SMC_MSG_LEN, "%s", msg);
    STORE(&ch->init_state, SMC_INIT_FAILED);
    notify_supervisor();
    futex_wake_all(&ch->init_state);
    die_now(126);
}

/* A trampoline within +-2 GiB of the text, so relocated rip-relative operands reach. */
static uint8_t *map_near(uint64_t lo, uint64_t hi, uint64_t size) {
    const uint64_t step = 1ULL << 20;
    for (uint64_t d = step; d < (1ULL << 30); d += step) {
        uint64_t cand[2] = {((hi + d) & ~(step - 1)), lo > d + size ? ((lo - d - size) & ~(step - 1)) : 0};
        for (int k = 0; k < 2; k++) {
            if (!cand[k]) continue;
            void *p = mmap((void *)cand[k], size, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
            if (p != MAP_FAILED) {
                if ((uint64_t)(uintptr_t)p == cand[k]) return p;
                munmap(p, size);
            }
        }
    }
    return NULL;
}

/* The trampoline: the relocated copies (the supervisor's), then an 8-byte pointer to the hook
 * entry and one jump-hook stub per site. */
static uint64_t tramp_size(void) {
    return ch->code_cap + 8 + (uint64_t)g_nsites * SMC_HOOK_STUB_LEN;
}

static uint64_t stub_addr(uint32_t i) {
    return (uint64_t)(uintptr_t)g_tramp + ch->code_cap + 8 + (uint64_t)i * SMC_HOOK_STUB_LEN;
}

/* Write every stub; false when jump hooks cannot be used here (int3 serves every site). */
static int write_stubs(void) {
    if (ch->flags & SMC_FLAG_SSE_ONLY) smc_hook_sse_only = getenv("SMC_HOOK_SCRAMBLE") ? 3 : 1;
    if (getenv("SMC_NO_JUMP_HOOKS") || !smc_hooks_init()) return 0;
    uint64_t entry_ptr = (uint64_t)(uintptr_t)g_tramp + ch->code_cap;
    void (*entry)(void) = smc_hook_entry;
    memcpy((void *)(uintptr_t)entry_ptr, &entry, 8);
    for (uint32_t i = 0; i < g_nsites; i++) {
        uint64_t copy = (uint64_t)(uintptr_t)g_tramp + g_sites[i].copy_off;
        smc_write_stub((uint8_t *)(uintptr_t)stub_addr(i), i, entry_ptr, copy);
    }
    return 1;
}

static void wait_init_state(uint32_t want) {
    for (;;) {
        uint32_t s = LOAD(&ch->init_state);
        if (s == want) return;
        if (s == SMC_INIT_FAILED) die_now(126);
        futex(&ch->init_state, FUTEX_WAIT, s, NULL);
    }
}

/* ---- heap: allocations are recorded so that reports can name heap blocks ---- */

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
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

static int heap_ready(void) {
    if (LOAD(&real_malloc)) return 1;
    if (heap_resolving) return 0;
    heap_resolving = 1;
    real_calloc = dlsym(RTLD_NEXT, "calloc");
    real_realloc = dlsym(RTLD_NEXT, "realloc");
    real_free = dlsym(RTLD_NEXT, "free");
    void *m = dlsym(RTLD_NEXT, "malloc");
    heap_resolving = 0;
    if (!real_calloc || !real_realloc || !real_free) return 0;
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
    void *p = real_realloc(q, n);
    record_block(p, n, CALLER_PC);
    return p;
}

EXPORT void free(void *p) {
    if (!p || in_boot(p) || !heap_ready()) return;
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

__attribute__((constructor)) static void smc_init(void) {
    heap_ready();
    /* resolved even when inactive: the interposed functions forward to them */
    real_pthread_create = dlsym(RTLD_NEXT, "pthread_create");
    real_pthread_join = dlsym(RTLD_NEXT, "pthread_join");
    real_pthread_exit = dlsym(RTLD_NEXT, "pthread_exit");
    real_exit = dlsym(RTLD_NEXT, "exit");
    real_assert_fail = dlsym(RTLD_NEXT, "__assert_fail");
    const char *fdenv = getenv("SMC_CHANNEL_FD");
    if (!fdenv) return;
    int fd = atoi(fdenv);
    /* the loader has read us: the program need not see our file (nor the worker put back
     * one more fd gap per execution) */
    const char *rtenv = getenv("SMC_RUNTIME_FD");
    if (rtenv && atoi(rtenv) > 2 && atoi(rtenv) != fd) close(atoi(rtenv));
    const char *lib = getenv("SMC_ENGINE_LIB"), *area = getenv("SMC_ENGINE_FD");
    if (lib && area && strlen(lib) < sizeof g_engine_lib) {
        /* mapped once, its descriptor closed: every execution starts with descriptors 0-2
         * only, which the reset closes above in one call. A raw mmap: not the program's. */
        int afd = atoi(area);
        struct stat st;
        if (afd > 2 && afd != fd && fstat(afd, &st) == 0) {
            long p = syscall(SYS_mmap, 0, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, afd, 0);
            if (p != -1) {
                g_engine_area = (void *)p;
                strcpy(g_engine_lib, lib);
            }
            close(afd);
        }
    }
    /* helpers the program starts must not inherit the checker */
    unsetenv("SMC_ENGINE_LIB");
    unsetenv("SMC_ENGINE_FD");
    unsetenv("SMC_RUNTIME_FD");
    unsetenv("SMC_CHANNEL_FD");
    unsetenv("LD_PRELOAD");
    struct smc_header *h = mmap(NULL, sizeof *h, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (h == MAP_FAILED) die_now(126);
    if (h->magic != SMC_CHANNEL_MAGIC || h->version != SMC_CHANNEL_VERSION) die_now(126);
    uint64_t total = h->total_size;
    munmap(h, sizeof *h);
    ch = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (ch == MAP_FAILED) die_now(126);
    close(fd);

    if (!real_pthread_create || !real_pthread_join || !real_pthread_exit || !real_exit || !real_assert_fail)
        init_fail("runtime: cannot resolve the pthread functions");

    uint64_t img[3];
    dl_iterate_phdr(first_object, img);
    g_bias = img[0];
    g_nsites = ch->nsites;
    g_sites = (const struct smc_site *)((char *)ch + ch->sites_off);
    if (ch->code_cap) {
        g_tramp = map_near(img[1], img[2], tramp_size());
        if (!g_tramp) init_fail("runtime: no room for a trampoline near the program's text");
    }
    ch->load_bias = g_bias;
    ch->tramp_addr = (uint64_t)(uintptr_t)g_tramp;
    ch->self_addr = (uint64_t)(uintptr_t)ch;
    STORE(&ch->init_state, SMC_INIT_MAPPED);
    notify_supervisor();
    wait_init_state(SMC_INIT_CODE);

    int hooks = 0;
    if (g_tramp) {
        memcpy(g_tramp, (char *)ch + ch->code_off, ch->code_cap);
        hooks = write_stubs();
        mprotect(g_tramp, tramp_size(), PROT_READ | PROT_EXEC);
    }
    install_handlers();
    long pg = sysconf(_SC_PAGESIZE);
    for (uint32_t i = 0; i < g_nsites; i++) {
        uint8_t *at = (uint8_t *)(uintptr_t)(g_bias + g_sites[i].offset);
        if (*at != g_sites[i].orig) init_fail("runtime: the executable in memory differs from the file");
    }
    for (uint32_t i = 0; i < g_nsites;) {
        /* one mprotect round per run of sites on the same pages */
        uint64_t first = (g_bias + g_sites[i].offset) & ~(uint64_t)(pg - 1);
        uint32_t j = i;
        while (j < g_nsites && ((g_bias + g_sites[j].offset) & ~(uint64_t)(pg - 1)) <= first + (uint64_t)pg)
            j++;
        uint64_t last = (g_bias + g_sites[j - 1].offset + g_sites[j - 1].len + pg - 1) & ~(uint64_t)(pg - 1);
        if (mprotect((void *)first, last - first, PROT_READ | PROT_WRITE | PROT_EXEC))
            init_fail("runtime: cannot make the text writable");
        for (uint32_t k = i; k < j; k++) {
            uint8_t *at = (uint8_t *)(uintptr_t)(g_bias + g_sites[k].offset);
            uint64_t stub = stub_addr(k);
            if (hooks && g_sites[k].len >= SMC_HOOK_LEN && smc_reaches((uint64_t)(uintptr_t)at + 5, stub))
                smc_write_jump(at, stub);
            else
                *at = SMC_TRAP_BYTE;
        }
        mprotect((void *)first, last - first, PROT_READ | PROT_EXEC);
        i = j;
    }
    g_active = 1;
}

/* ---- the fork server ---- */

static void stack_bounds(uint64_t *lo, uint64_t *hi) {
    pthread_attr_t attr;
    void *addr = NULL;
    size_t size = 0;
    *lo = *hi = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        pthread_attr_getstack(&attr, &addr, &size);
        pthread_attr_destroy(&attr);
        *lo = (uint64_t)(uintptr_t)addr;
        *hi = *lo + size;
    }
}

static void reserve_stacks(void);
static void run_worker(uint32_t cmd);

/* Load the engine library the checker named, in the fork server: before any worker's snapshot,
 * which leaves the library's memory out. Without it the checker explores by itself. */
static void load_engine(void) {
    if (!g_engine_lib[0]) return;
    void *h = dlopen(g_engine_lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) return;
    void (*init)(void) = (void (*)(void))dlsym(h, "smc_engine_init");
    engine_explore_fn explore = (engine_explore_fn)dlsym(h, "smc_engine_explore");
    if (!init || !explore) return;
    init();
    g_engine_explore = explore;
}

/* Wait once for `*word` to move past `seen`: a worker on the supervisor's CPU yields to it
 * (`*yields` counts the yields), else the runtime sleeps on the word and says so in
 * rt_sleeping; the supervisor makes the wake-up call only then. */
static void rt_wait(uint32_t *word, uint32_t seen, int *yields) {
    if ((*yields)++ < g_yields) {
        syscall(SYS_sched_yield); /* not the interposed sched_yield */
        return;
    }
    STORE(&ch->rt_sleeping, 1);
    futex(word, FUTEX_WAIT, seen, NULL);
    STORE(&ch->rt_sleeping, 0);
    *yields = 0;
}

/* Wait for the next command after `seen`; exits when the supervisor quits. */
static uint32_t next_command(uint32_t seen) {
    uint32_t cmd;
    int yields = 0;
    while ((cmd = LOAD(&ch->fs_cmd)) == seen && !LOAD(&ch->fs_quit)) rt_wait(&ch->fs_cmd, seen, &yields);
    if (LOAD(&ch->fs_quit)) die_now(0);
    return cmd;
}

/* Bytes the execution wrote to the capture file (fds 1 and 2 share its offset); the next
 * execution writes from its start (the checker reads these bytes before it begins). */
static void note_output(void) {
    /* with the output watched, no call it stopped means the offset is still 0 */
    off_t end = g_output_watched && !g_fds_touched ? 0 : lseek(1, 0, SEEK_CUR);
    g_output_seen |= end != 0;
    STORE(&ch->out_len, end < 0 ? 0 : (uint64_t)end);
    if (end != 0) lseek(1, 0, SEEK_SET);
}

static int smc_main(int argc, char **argv, char **envp) {
    if (!g_active) return real_main(argc, argv, envp);
    stack_bounds(&g_main_stack_lo, &g_main_stack_hi);
    reserve_stacks();
    g_argc = argc;
    g_argv = argv;
    g_envp = envp;
    /* a debugger follows one process per execution */
    int coroutines = !getenv("SMC_NO_COROUTINES") && !(ch->flags & SMC_FLAG_DEBUGGABLE);
    pid_t server = getpid();
    if (coroutines) load_engine();
    uint32_t seen = LOAD(&ch->fs_cmd);
    STORE(&ch->init_state, SMC_INIT_READY);
    notify_supervisor();
    for (;;) {
        uint32_t cmd = next_command(seen);
        seen = cmd;
        int captured = (ch->flags & SMC_FLAG_CAPTURED) != 0;
        if (captured) lseek(1, 0, SEEK_SET);
        int worker = coroutines && LOAD(&ch->coroutines) != SMC_COROUTINES_FAILED;
        if (worker) STORE(&ch->worker_cmd, cmd);
        pid_t pid = fork(); /* not in an execution here: the interposed fork forwards */
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != server) die_now(0);
            /* yama's ptrace_scope=1 only lets ancestors trace; gdb is not ours */
            if (ch->flags & SMC_FLAG_DEBUGGABLE) prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY);
            if (worker) run_worker(cmd); /* returns only if it cannot run coroutines */
            if (LOAD(&ch->explore_cmd) == cmd) die_now(1); /* no worker: the checker explores */
            t_slot = 0;
            t_stack_lo = g_main_stack_lo;
            t_stack_hi = g_main_stack_hi;
            g_tids[0] = pthread_self();
            int r = real_main(argc, argv, envp);
            if (in_execution()) smc_stop(SMC_OP_PROCESS_EXIT, 0, 0, 0, (uint64_t)r, 0, 0, 0);
            g_exiting = 1;
            return r;
        }
        if (pid < 0) {
            STORE(&ch->wait_status, -1);
        } else {
            STORE(&ch->child_pid, pid);
            int st = 0;
            while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
            }
            if (worker) {
                /* a worker ends by dying: report the execution it was in, if any */
                uint32_t in = LOAD(&ch->worker_cmd);
                if (!in) {
                    seen = LOAD(&ch->worker_last);
                    continue;
                }
                seen = cmd = in;
            }
            STORE(&ch->wait_status, st);
        }
        if (captured) note_output();
        STORE(&ch->exec_done, cmd);
        notify_supervisor();
    }
}

EXPORT int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void), void (*fini)(void),
                             void (*rtld_fini)(void), void *stack_end) {
    real_main = main;
    int (*real)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void), void *) =
        dlsym(RTLD_NEXT, "__libc_start_main");
    return real(smc_main, argc, argv, init, fini, rtld_fini, stack_end);
}

/* ---- threads ---- */

struct start_arg {
    void *(*fn)(void *);
    void *arg;
    int slot;
    uint64_t stack_lo, stack_hi; /* a stack of ours, or 0 */
};

/* Each slot's start routine, and stack. A thread created with default attributes runs on a
 * stack of its slot, in an area reserved once by the fork server: no mmap, no malloc arena, no
 * pthread_getattr_np per thread and execution (each cost system calls and page faults). */
static struct start_arg g_start[SMC_MAX_THREADS];
static char *g_stack_area;
static char g_stack_ready[SMC_MAX_THREADS]; /* usable in this process */
#define SMC_STACK_SPAN (8ul << 20)
#define SMC_STACK_GUARD (64ul << 10)

static void reserve_stacks(void) {
    /* PROT_NONE reserves address space only; each slot's part becomes usable when needed */
    void *p = mmap(NULL, SMC_STACK_SPAN * SMC_MAX_THREADS, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    g_stack_area = p == MAP_FAILED ? NULL : p;
}

/* The stack of slot n (the guard below it stays PROT_NONE); 0 if there is none. */
static int slot_stack(uint32_t n, struct start_arg *a) {
    if (!g_stack_area) return 0;
    char *lo = g_stack_area + (size_t)n * SMC_STACK_SPAN + SMC_STACK_GUARD;
    size_t size = SMC_STACK_SPAN - SMC_STACK_GUARD;
    if (!g_stack_ready[n] && mprotect(lo, size, PROT_READ | PROT_WRITE) != 0) return 0;
    g_stack_ready[n] = 1;
    a->stack_lo = (uint64_t)(uintptr_t)lo;
    a->stack_hi = a->stack_lo + size;
    return 1;
}

/* Attributes running slot n (not main's) on its own stack. */
static int own_stack(uint32_t n, pthread_attr_t *attr, struct start_arg *a) {
    if (n == 0 || !slot_stack(n, a)) return 0;
    if (pthread_attr_init(attr) != 0) return 0;
    pthread_attr_setstack(attr, (void *)(uintptr_t)a->stack_lo, a->stack_hi - a->stack_lo);
    return 1;
}

static int slot_of(pthread_t t) {
    uint32_t n = LOAD(&ch->nthreads);
    for (uint32_t i = 0; i < n && i < SMC_MAX_THREADS; i++)
        if (pthread_equal(g_tids[i], t)) return (int)i;
    return -1;
}

static void thread_finish(void *ret) {
    smc_stop(SMC_OP_THREAD_EXIT, 0, 0, 0, 0, 0, 0, 0);
    struct smc_slot *s = &ch->slots[t_slot];
    publish_prev(s);
    g_co[t_slot].ret = ret;
    t_slot = -1;
    HANDOFF_STORE(&s->state, SMC_SLOT_EXITED);
    if (running_less_one() == 0) all_waiting(0);
}

static void *thread_start(void *p) {
    struct start_arg a = *(struct start_arg *)p;
    errno = 0; /* a new thread's; a coroutine's TLS starts as a copy of its creator's */
    t_slot = a.slot;
    if (a.stack_lo) {
        t_stack_lo = a.stack_lo;
        t_stack_hi = a.stack_hi;
    } else {
        stack_bounds(&t_stack_lo, &t_stack_hi);
    }
    smc_stop(SMC_OP_THREAD_START, 0, 0, 0, 0, (uint64_t)(uintptr_t)a.fn, 0, 0);
    void *ret = a.fn(a.arg);
    if (t_slot >= 0 && !g_exiting) thread_finish(ret);
    return ret;
}

/* ---- the coroutine worker ---- */

static void co_switch(int to) {
    int from = g_cur;
    g_cur = to;
    /* a program that uses no wide register state does not mind what the host left there */
    smc_coro_switch(from < 0 ? &g_host_sp : &g_co[from].sp, to < 0 ? g_host_sp : g_co[to].sp,
                    to < 0 ? smc_tls.main_tp : g_co[to].fs, to >= 0 && !smc_hook_sse_only);
}

/* The running coroutine waits for its go: another one runs, or the host waits for the
 * supervisor. */
static void co_wait(void) {
    int me = g_cur, to = g_resume;
    g_resume = -1;
    g_co[me].waiting = 1;
    co_switch(to);
    g_co[me].waiting = 0;
}

/* The execution is over (`status` as waitpid would say; stdio flushed as exit would): back
 * to the host, never to return. */
static void co_end(int status, int flush) {
    g_exiting = 1;
    g_exec_over = 1;
    g_exec_status = status;
    g_exec_flush = flush;
    co_switch(-1);
    __builtin_unreachable();
}

/* The running coroutine's thread has exited. */
static void __attribute__((noreturn)) co_gone(void) {
    g_co[g_cur].waiting = 0;
    co_switch(-1);
    __builtin_unreachable();
}

/* The running coroutine's thread ends (its start routine returned or it called pthread_exit,
 * its exit event is recorded): what glibc's start_thread would run after it, its thread_local
 * destructors and then those of its thread-specific data, unseen by the checker as there. */
static void __attribute__((noreturn)) co_thread_exit(void) {
    run_thread_local_dtors(g_cur);
    run_key_dtors();
    co_gone();
}

/* The execution exits with `status` (main returned or exit() was called, its exit event is
 * recorded): as exit() would, in the exiting thread, its thread_local destructors and the exit
 * handlers the execution registered run; the host flushes stdio. */
static void __attribute__((noreturn)) co_exit(int status) {
    g_exiting = 1;
    run_thread_local_dtors(g_cur);
    if (!g_exit_for_real) run_exit_handlers(status & 0xff);
    co_end((status & 0xff) << 8, 1);
}

static void __attribute__((noreturn)) co_main(void) {
    t_slot = 0;
    t_stack_lo = g_start[0].stack_lo;
    t_stack_hi = g_start[0].stack_hi;
    g_tids[0] = pthread_self();
    int r = real_main(g_argc, g_argv, g_envp);
    if (in_execution()) smc_stop(SMC_OP_PROCESS_EXIT, 0, 0, 0, (uint64_t)r, 0, 0, 0);
    co_exit(r);
}

static void __attribute__((noreturn)) co_thread(void) {
    thread_start(&g_start[g_cur]);
    co_thread_exit();
}

/* Zero what the last execution left on a coroutine's stack: the await hash of a load takes in
 * stack words near the stack pointer that the program may not have written in this execution,
 * and must not depend on what earlier executions left there (an execution that replays an
 * earlier one's prefix must see the same hashes: the engine compares them with that one's). The
 * margin covers what the stop's own callees write below it. */
static void clear_stack(struct coro *c) {
    if (!c->low) return;
    uint64_t lo = c->low > c->floor + 1024 ? c->low - 1024 : c->floor;
    if (lo < c->top) memset((void *)(uintptr_t)lo, 0, c->top - lo);
    c->low = 0;
}

/* Start an execution: main as coroutine 0, run until it waits. */
static void co_start(void) {
    restore_if_pending();
    g_exec_over = 0;
    g_exiting = 0;
    g_all_waiting = 0;
    g_nexit_handlers = 0; /* a crashed or aborted execution's never ran */
    co_thread_reset();
    g_resume = -1;
    for (uint32_t i = 0; i < g_co_span; i++) {
        g_co[i].waiting = 0;
        clear_stack(&g_co[i]);
    }
    g_co[0].fs = smc_tls.main_tp;
    errno = g_errno_at_main; /* main's TLS is the host's, whose own calls set errno */
    g_co[0].top = g_start[0].stack_hi;
    g_co[0].floor = g_start[0].stack_lo;
    g_co[0].sp = smc_coro_frame(g_start[0].stack_hi, co_main);
    co_switch(0);
}

/* Resume the coroutines whose go is set until none is. 1 when the execution is over
 * (g_exec_status says how), 0 when every thread that has not exited waits; *ran says
 * whether one ran. */
static int co_run_ready(int *ran) {
    while (!g_exec_over) {
        uint32_t n = LOAD(&ch->nthreads), exited = 0;
        if (n > SMC_MAX_THREADS) n = SMC_MAX_THREADS;
        int next = -1;
        for (uint32_t i = 0; i < n && next < 0; i++) {
            if (g_co[i].waiting && LOAD(&ch->slots[i].go)) next = (int)i;
            exited += LOAD(&ch->slots[i].state) == SMC_SLOT_EXITED;
        }
        if (next >= 0) {
            co_switch(next);
            *ran = 1;
            continue;
        }
        if (g_all_waiting) {
            g_all_waiting = 0;
            if (go_on_or_notify()) continue;
        }
        if (exited == n) { /* main left by pthread_exit, and the last thread has exited */
            g_exec_over = 1;
            g_exec_status = 0;
            g_exec_flush = 1;
        }
        return g_exec_over;
    }
    return 1;
}

/* Run one execution: main as coroutine 0, then whichever coroutine the supervisor (or the
 * script) lets go, until it ends. Returns its status, as waitpid would. */
static int co_execution(void) {
    co_start();
    int yields = 0;
    for (;;) {
        uint32_t seq = LOAD(&ch->rt_wake);
        if (LOAD(&ch->abort) && !g_exec_over) return 0; /* as die_now(0), output not flushed */
        int ran = 0;
        if (co_run_ready(&ran)) break;
        if (ran) {
            yields = 0;
            continue;
        }
        int saved_errno = errno; /* main's: the host runs on its TLS */
        rt_wait(&ch->rt_wake, seq, &yields);
        errno = saved_errno;
    }
    if (g_exec_flush) fflush(NULL); /* exit() in the program, or main returned */
    return g_exec_status;
}

/* After an execution: note its output and put the process back as the snapshot has it.
 * 0 when this worker cannot run another execution. */
static int co_reset(int captured) {
    if (captured) note_output();
    int last = loader_changed() || !unmap_execution_maps() || !restore_cwd();
    restore_signals();
    g_restore_pending = !last;
    return !last;
}

/* The memory restore of co_reset, put off until the next execution starts: the engine's work
 * between two executions (the end's analysis, the next branch, a checkpoint) then finds its
 * state still in the cache, which the restore's ~100 KB of copies and checks would have
 * evicted. Neither the engine nor the runtime reads the program's memory in between. */
static void restore_if_pending(void) {
    if (!g_restore_pending) return;
    g_restore_pending = 0;
    smc_snapshot_restore(!g_fdwatch_on || g_fds_touched);
    g_fds_touched = 0;
    fdwatch_count_down();
}

/* ---- the engine's side of the worker (struct smc_engine_ops) ---- */

/* The execution is over: as run_worker after co_execution. 1, 2 when it ended on the hang
 * signal, or -1 when it had to end the worker (exit handlers in libc's list: the checker
 * explores by itself then). */
static int ew_finish(void) {
    if (g_exec_flush) fflush(NULL);
    if (g_exit_for_real) {
        g_worker_spent = 1;
        return -1;
    }
    if (!co_reset((ch->flags & SMC_FLAG_CAPTURED) != 0)) g_worker_spent = 1;
    STORE(&ch->wait_status, g_exec_status);
    int hung = g_exec_hung;
    g_exec_hung = 0;
    return hung ? 2 : 1;
}

static int ew_settle(void) {
    int ran = 0;
    return co_run_ready(&ran) ? ew_finish() : 0;
}

static int ew_begin(void) {
    if (g_worker_spent) return -1;
    STORE(&ch->child_pid, g_worker_pid); /* what the checker kills if the exploration hangs */
    co_start();
    return ew_settle();
}

static int ew_run(void) { return ew_settle(); }

/* The engine abandons the execution while its threads wait (as the checker's abort). */
static int ew_end(void) {
    if (!g_exec_over) {
        g_exec_over = 1;
        g_exiting = 1;
        g_exec_status = 0;
        g_exec_flush = 0;
    }
    return ew_finish();
}

/* Run the exploration the checker asked for with command `cmd`; the status to answer it with
 * (0: the answer is in the shared area). */
static int engine_explore(void) {
    if (!g_engine_explore) return 1 << 8;
    struct smc_engine_ops ops = {SMC_ENGINE_ABI, ch, ch->total_size, ew_begin, ew_run, ew_end};
    g_in_engine = 1;
    int r = g_engine_explore(&ops, g_engine_area);
    g_in_engine = 0;
    return r == 0 ? 0 : 1 << 8;
}

/* How many objects the dynamic loader has loaded and unloaded so far (one callback). */
static int loader_counts(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    uint64_t *out = data;
    out[0] = info->dlpi_adds;
    out[1] = info->dlpi_subs;
    return 1;
}

static uint64_t g_loader_counts[2]; /* at the snapshot */

/* Whether an execution loaded or unloaded an object (dlopen, dlclose): the loader's state is
 * not put back, only the heap it points into, so this worker must not run another. */
static int loader_changed(void) {
    uint64_t now[2] = {0, 0};
    dl_iterate_phdr(loader_counts, now);
    return now[0] != g_loader_counts[0] || now[1] != g_loader_counts[1];
}

/* Set up coroutines in this fresh worker; 0 when they cannot be used here. */
static int co_setup(void) {
    smc_tls.skip = (const void *)g_engine_explore;
    if (!smc_tls_init() || !slot_stack(0, &g_start[0])) return 0;
    /* no mmap'd chunks: memory a restore would not take back */
    mallopt(M_MMAP_MAX, 0);
    dl_iterate_phdr(loader_counts, g_loader_counts);
    keep_keys_at_main();
    keep_cwd_at_main();
    keep_signals_at_main();
    struct smc_range tls[2] = {{smc_tls.lo, smc_tls.hi}, {NULL, NULL}};
    int n = 1;
    if (smc_tls.rseq_lo) { /* the kernel's part of the TCB */
        tls[0].hi = smc_tls.rseq_lo;
        tls[1].lo = smc_tls.rseq_hi;
        tls[1].hi = smc_tls.hi;
        n = 2;
    }
    g_errno_at_main = errno;
    return smc_snapshot_take(g_argv, tls, n, (const void *)g_engine_explore) == NULL;
}

/* A worker process: runs the execution of command `cmd`, and every one after it, until it
 * dies (the program crashed, or the supervisor killed it) or must exit for real. */
static void run_worker(uint32_t cmd) {
    if (!co_setup()) {
        STORE(&ch->coroutines, SMC_COROUTINES_FAILED);
        return;
    }
    g_coroutines = 1;
    cpu_set_t cpus;
    if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) == 1) g_yields = WORKER_YIELDS;
    STORE(&ch->coroutines, SMC_COROUTINES_ON);
    pid_t me = getpid();
    g_worker_pid = me;
    int captured = (ch->flags & SMC_FLAG_CAPTURED) != 0;
    for (;;) {
        STORE(&ch->child_pid, me);
        int st, last;
        if (LOAD(&ch->explore_cmd) == cmd) {
            st = engine_explore();
            last = g_worker_spent;
        } else {
            st = co_execution();
            if (g_exit_for_real) { /* end as its process would have; the server reports it */
                if (WIFSIGNALED(st)) reraise_default(WTERMSIG(st)); /* crashed: no exit handlers */
                real_exit(WEXITSTATUS(st));
            }
            last = !co_reset(captured);
        }
        STORE(&ch->wait_status, st);
        STORE(&ch->worker_last, cmd);
        STORE(&ch->exec_done, cmd);
        STORE(&ch->worker_cmd, 0);
        notify_supervisor();
        if (last) die_now(0); /* idle: the server forks a new worker for the next command */
        cmd = next_command(cmd);
        STORE(&ch->worker_cmd, cmd);
    }
}

/* The TLS of a new coroutine: a fresh copy of the main thread's at the top of its stack `a`,
 * as glibc places a thread's (so its accesses count as the thread's own, like its stack's).
 * Its thread pointer; the stack it starts on ends below. */
static uint64_t co_tls(struct start_arg *a, uint64_t *sp_top) {
    uint64_t area = (a->stack_hi - smc_tls_area_size()) & ~4095ULL;
    *sp_top = area;
    return smc_tls_new((char *)(uintptr_t)area);
}

EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg) {
    if (!in_execution()) return real_pthread_create(t, attr, fn, arg);
    uint32_t n = LOAD(&ch->nthreads);
    if (n >= SMC_MAX_THREADS) return EAGAIN;
    smc_stop(SMC_OP_SPAWN, 0, 0, 0, n, CALLER_PC, 0, 0);
    struct start_arg *a = &g_start[n];
    a->fn = fn;
    a->arg = arg;
    a->slot = (int)n;
    a->stack_lo = a->stack_hi = 0;
    uint64_t tp = 0, sp_top = 0;
    pthread_attr_t own;
    int ours = 0;
    if (g_coroutines) {
        /* attributes do not apply: every coroutine has a stack of its slot */
        if (!slot_stack(n, a) || !(tp = co_tls(a, &sp_top))) return EAGAIN;
    } else {
        ours = !attr && own_stack(n, &own, a);
    }
    struct smc_slot *s = &ch->slots[n];
    s->parent = (uint32_t)t_slot;
    STORE(&s->state, SMC_SLOT_RUNNING);
    STORE(&ch->nthreads, n + 1);
    __atomic_add_fetch(&ch->running, 1, __ATOMIC_SEQ_CST);
    if (g_coroutines) {
        if (n >= g_co_span) g_co_span = n + 1;
        g_co[n].fs = tp;
        g_co[n].top = sp_top;
        g_co[n].floor = a->stack_lo;
        g_co[n].sp = smc_coro_frame(sp_top, co_thread);
        g_co[n].ret = NULL;
        *t = (pthread_t)tp; /* what pthread_self() says in it */
        g_tids[n] = *t;
        g_resume = g_cur; /* back here once the child has announced its first event */
        co_switch((int)n);
        return 0;
    }
    int r = real_pthread_create(t, ours ? &own : attr, thread_start, a);
    if (ours) pthread_attr_destroy(&own);
    if (r) {
        STORE(&s->state, SMC_SLOT_FREE);
        STORE(&ch->nthreads, n);
        __atomic_sub_fetch(&ch->running, 1, __ATOMIC_SEQ_CST);
        return r;
    }
    g_tids[n] = *t;
    /* one thread at a time: wait until the child has announced its first event */
    uint32_t st;
    while ((st = LOAD(&s->state)) == SMC_SLOT_RUNNING) futex(&s->state, FUTEX_WAIT, st, NULL);
    return 0;
}

EXPORT int pthread_join(pthread_t t, void **ret) {
    int slot = in_execution() ? slot_of(t) : -1;
    if (slot >= 0) smc_stop(SMC_OP_JOIN, 0, 0, 0, (uint64_t)slot, CALLER_PC, 0, 0);
    if (!g_coroutines) return real_pthread_join(t, ret);
    if (slot < 0) return ESRCH;
    if (ret) *ret = g_co[slot].ret;
    return 0;
}

EXPORT void pthread_exit(void *ret) {
    /* main may leave this way too: the process then lives on until its last thread exits */
    if (in_execution()) {
        thread_finish(ret);
        if (g_coroutines) co_thread_exit();
    }
    real_pthread_exit(ret);
}

EXPORT void exit(int status) {
    if (in_execution()) {
        smc_stop(SMC_OP_PROCESS_EXIT, 0, 0, 0, (uint64_t)status, CALLER_PC, 0, 0);
        if (g_coroutines) co_exit(status);
        g_exiting = 1;
    }
    real_exit(status);
}

/* Exit handlers an execution registers run when it exits, as exit() would run them. libc's
 * list is put back with the snapshot, so a worker keeps them in a list of its own and runs
 * them itself (run_exit_handlers). Past its room, the rest go to libc after one handler that
 * runs ours (so the order stays last in, first out), and the execution ends with exit(). */
#define SMC_MAX_EXIT_HANDLERS 256
static struct {
    void (*fn)(void *);
    void (*on)(int, void *);
    void *arg;
} g_exit_handlers[SMC_MAX_EXIT_HANDLERS];

static void run_exit_handlers(int status) {
    while (g_nexit_handlers > 0) { /* a handler may register more */
        int i = --g_nexit_handlers;
        if (g_exit_handlers[i].on) g_exit_handlers[i].on(status, g_exit_handlers[i].arg);
        else g_exit_handlers[i].fn(g_exit_handlers[i].arg);
    }
}

static void run_kept_exit_handlers(int status, void *arg) {
    (void)arg;
    run_exit_handlers(status);
}

/* Keep a handler for the worker; 0 when libc must take it. */
static int keep_exit_handler(void (*fn)(void *), void (*on)(int, void *), void *arg) {
    if (!g_coroutines || !in_execution() || g_exit_for_real) return 0;
    if (g_nexit_handlers == SMC_MAX_EXIT_HANDLERS) {
        g_exit_for_real = 1;
        REAL_FN(on_exit)(run_kept_exit_handlers, NULL);
        return 0;
    }
    g_exit_handlers[g_nexit_handlers].fn = fn;
    g_exit_handlers[g_nexit_handlers].on = on;
    g_exit_handlers[g_nexit_handlers].arg = arg;
    g_nexit_handlers++;
    return 1;
}

/* Memory the program maps during an execution (mmap) is unmapped after it, as its process's
 * would be: the snapshot does not hold it, and a worker would otherwise keep every execution's.
 * A mapping unmapped whole in the execution is forgotten; past the list's room the worker
 * ends after the execution. */
#define SMC_MAX_MAPS 256
static struct {
    void *addr;
    size_t len;
} g_maps[SMC_MAX_MAPS];
static int g_nmaps, g_maps_lost;

static void *keep_map(void *p, size_t len) {
    if (p == MAP_FAILED || !g_coroutines || !in_execution()) return p;
    if (g_nmaps == SMC_MAX_MAPS) {
        g_maps_lost = 1;
        return p;
    }
    g_maps[g_nmaps].addr = p;
    g_maps[g_nmaps].len = len;
    g_nmaps++;
    return p;
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
    return keep_map(REAL_FN(mmap)(addr, len, prot, flags, fd, off), len);
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
    return keep_map(REAL_FN(mmap64)(addr, len, prot, flags, fd, off), len);
}

EXPORT int munmap(void *addr, size_t len) {
    uintptr_t lo = (uintptr_t)addr, hi = lo + len;
    for (int i = 0; i < g_nmaps; i++) {
        uintptr_t a = (uintptr_t)g_maps[i].addr;
        if (a >= lo && a + g_maps[i].len <= hi) g_maps[i--] = g_maps[--g_nmaps];
    }
    REAL(munmap, addr, len);
}

/* After an execution: 0 when some of its mappings were not kept (the worker must end). */
static int unmap_execution_maps(void) {
    while (g_nmaps > 0) {
        g_nmaps--;
        REAL_FN(munmap)(g_maps[g_nmaps].addr, g_maps[g_nmaps].len);
    }
    int kept = !g_maps_lost;
    g_maps_lost = 0;
    return kept;
}

/* The working directory an execution changes (chdir, fchdir) is changed back after it; when
 * it cannot be, the worker ends after the execution. */
static char g_cwd_at_main[4096];
static int g_cwd_changed;

static void keep_cwd_at_main(void) {
    if (!getcwd(g_cwd_at_main, sizeof g_cwd_at_main)) g_cwd_at_main[0] = 0;
    g_cwd_changed = 0;
}

EXPORT int chdir(const char *path) {
    g_cwd_changed = 1;
    REAL(chdir, path);
}

EXPORT int fchdir(int fd) {
    g_cwd_changed = 1;
    REAL(fchdir, fd);
}

/* After an execution: 0 when the working directory could not be put back. */
static int restore_cwd(void) {
    if (!g_cwd_changed) return 1;
    g_cwd_changed = 0;
    return g_cwd_at_main[0] && REAL_FN(chdir)(g_cwd_at_main) == 0;
}

/* A coroutine thread's own thread id, as a real thread has one: main's is the process id (as
 * for a real main thread), slot n's the process id + n. Programs use it as an identity (lock
 * owners, logs), so all threads sharing the worker's one would behave unlike real threads. */
static long own_tid(void) { return g_worker_pid && t_slot > 0 ? (long)g_worker_pid + t_slot : 0; }

EXPORT pid_t gettid(void) {
    long tid = own_tid();
    return tid ? (pid_t)tid : (pid_t)syscall(SYS_gettid);
}

/* syscall(SYS_gettid), the way to gettid before glibc 2.30; every other number goes to libc's
 * syscall() with all six argument registers (those the call did not set are ignored). */
EXPORT long syscall(long nr, ...) {
    if (nr == SYS_gettid && own_tid()) return own_tid();
    va_list ap;
    va_start(ap, nr);
    long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long);
    long d = va_arg(ap, long), e = va_arg(ap, long), f = va_arg(ap, long);
    va_end(ap);
    return REAL_FN(syscall)(nr, a, b, c, d, e, f);
}

/* Destructors a real thread would run when it ends, which a coroutine runs itself
 * (co_thread_exit): C++ thread_local objects' (registered per thread with
 * __cxa_thread_atexit_impl; kept here for the execution, since libc keeps them in the TLS the
 * coroutine got as a copy of main's) and thread-specific data's (pthread_key_create; keys are
 * remembered as created, and those an execution creates or deletes are forgotten with it, as
 * the snapshot puts libc's key table back). */
#define SMC_MAX_TLS_DTORS 1024
static struct {
    int slot;
    void (*dtor)(void *);
    void *obj;
} g_tls_dtors[SMC_MAX_TLS_DTORS];
static int g_ntls_dtors;

EXPORT int __cxa_thread_atexit_impl(void (*dtor)(void *), void *obj, void *dso) {
    if (g_coroutines && in_execution() && g_ntls_dtors < SMC_MAX_TLS_DTORS) {
        g_tls_dtors[g_ntls_dtors].slot = t_slot;
        g_tls_dtors[g_ntls_dtors].dtor = dtor;
        g_tls_dtors[g_ntls_dtors].obj = obj;
        g_ntls_dtors++;
        return 0;
    }
    REAL(__cxa_thread_atexit_impl, dtor, obj, dso);
}

/* Newest first; a destructor may register more. */
static void run_thread_local_dtors(int slot) {
    for (;;) {
        int i = g_ntls_dtors - 1;
        while (i >= 0 && g_tls_dtors[i].slot != slot) i--;
        if (i < 0) return;
        void (*dtor)(void *) = g_tls_dtors[i].dtor;
        void *obj = g_tls_dtors[i].obj;
        memmove(&g_tls_dtors[i], &g_tls_dtors[i + 1], (size_t)(g_ntls_dtors - i - 1) * sizeof g_tls_dtors[0]);
        g_ntls_dtors--;
        dtor(obj);
    }
}

#define SMC_MAX_KEYS 1024
struct key_dtor {
    pthread_key_t key;
    void (*dtor)(void *);
};
static struct key_dtor g_keys[SMC_MAX_KEYS], g_keys_at_main[SMC_MAX_KEYS];
static int g_nkeys, g_nkeys_at_main, g_keys_changed;

static void forget_key(pthread_key_t key) {
    for (int i = 0; i < g_nkeys; i++)
        if (g_keys[i].key == key) g_keys[i--] = g_keys[--g_nkeys];
}

EXPORT int pthread_key_create(pthread_key_t *key, void (*dtor)(void *)) {
    int r = REAL_FN(pthread_key_create)(key, dtor);
    if (r == 0) {
        forget_key(*key);
        if (dtor && g_nkeys < SMC_MAX_KEYS) {
            g_keys[g_nkeys].key = *key;
            g_keys[g_nkeys].dtor = dtor;
            g_nkeys++;
        }
        g_keys_changed = 1;
    }
    return r;
}

EXPORT int pthread_key_delete(pthread_key_t key) {
    forget_key(key);
    g_keys_changed = 1;
    REAL(pthread_key_delete, key);
}

/* As glibc: each non-null value is set to null and its destructor called, in rounds while
 * destructors set new values. */
static void run_key_dtors(void) {
    for (int round = 0; round < 4; round++) { /* glibc's PTHREAD_DESTRUCTOR_ITERATIONS */
        int any = 0;
        for (int i = 0; i < g_nkeys; i++) {
            void *v = pthread_getspecific(g_keys[i].key);
            if (!v) continue;
            pthread_setspecific(g_keys[i].key, NULL);
            g_keys[i].dtor(v);
            any = 1;
        }
        if (!any) return;
    }
}

/* At the snapshot: the keys that exist at main. */
static void keep_keys_at_main(void) {
    memcpy(g_keys_at_main, g_keys, sizeof g_keys);
    g_nkeys_at_main = g_nkeys;
    g_keys_changed = 0;
}

/* Before each execution: none of the last one's thread_local destructors, main's keys. */
static void co_thread_reset(void) {
    g_ntls_dtors = 0;
    if (!g_keys_changed) return;
    memcpy(g_keys, g_keys_at_main, sizeof g_keys);
    g_nkeys = g_nkeys_at_main;
    g_keys_changed = 0;
}

EXPORT int __cxa_atexit(void (*fn)(void *), void *arg, void *dso) {
    if (keep_exit_handler(fn, NULL, arg)) return 0;
    REAL(__cxa_atexit, fn, arg, dso);
}
EXPORT int on_exit(void (*fn)(int, void *), void *arg) {
    if (keep_exit_handler(NULL, fn, arg)) return 0;
    REAL(on_exit, fn, arg);
}

EXPORT void __assert_fail(const char *assertion, const char *file, unsigned line, const char *function) {
    if (in_execution()) {
        char msg[SMC_MSG_LEN];
        snprintf(msg, sizeof msg, "%s:%u: %s: Assertion `%s' failed.", file, line, function ? function : "?",
                 assertion);
        report_error(SMC_ERR_ASSERT, SIGABRT, CALLER_PC, 0, msg);
    }
    real_assert_fail(assertion, file, line, function);
}

/* ---- synchronisation: modelled by the supervisor, never executed for real ---- */

#define VISIBLE(op, a, a2, arg) smc_stop((op), (uint64_t)(uintptr_t)(a), (uint64_t)(uintptr_t)(a2), 1, (arg), CALLER_PC, 0, 0)

EXPORT int pthread_mutex_lock(pthread_mutex_t *m) {
    if (!in_execution()) REAL(pthread_mutex_lock, m);
    VISIBLE(SMC_OP_MUTEX_LOCK, m, 0, 0);
    return 0;
}
EXPORT int pthread_mutex_trylock(pthread_mutex_t *m) {
    if (!in_execution()) REAL(pthread_mutex_trylock, m);
    return VISIBLE(SMC_OP_MUTEX_TRYLOCK, m, 0, 0) ? EBUSY : 0;
}
EXPORT int pthread_mutex_unlock(pthread_mutex_t *m) {
    if (!in_execution()) REAL(pthread_mutex_unlock, m);
    VISIBLE(SMC_OP_MUTEX_UNLOCK, m, 0, 0);
    return 0;
}
EXPORT int pthread_spin_lock(pthread_spinlock_t *m) {
    if (!in_execution()) REAL(pthread_spin_lock, m);
    VISIBLE(SMC_OP_MUTEX_LOCK, m, 0, 0);
    return 0;
}
EXPORT int pthread_spin_trylock(pthread_spinlock_t *m) {
    if (!in_execution()) REAL(pthread_spin_trylock, m);
    return VISIBLE(SMC_OP_MUTEX_TRYLOCK, m, 0, 0) ? EBUSY : 0;
}
EXPORT int pthread_spin_unlock(pthread_spinlock_t *m) {
    if (!in_execution()) REAL(pthread_spin_unlock, m);
    VISIBLE(SMC_OP_MUTEX_UNLOCK, m, 0, 0);
    return 0;
}
EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m) {
    if (!in_execution()) REAL(pthread_cond_wait, c, m);
    VISIBLE(SMC_OP_COND_WAIT, c, m, 0);
    return (int)VISIBLE(SMC_OP_COND_REACQUIRE, c, m, 0);
}
EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *ts) {
    if (!in_execution()) REAL(pthread_cond_timedwait, c, m, ts);
    VISIBLE(SMC_OP_COND_WAIT, c, m, 1);
    return (int)VISIBLE(SMC_OP_COND_REACQUIRE, c, m, 1);
}
EXPORT int pthread_cond_signal(pthread_cond_t *c) {
    if (!in_execution()) REAL(pthread_cond_signal, c);
    VISIBLE(SMC_OP_COND_SIGNAL, c, 0, 0);
    return 0;
}
EXPORT int pthread_cond_broadcast(pthread_cond_t *c) {
    if (!in_execution()) REAL(pthread_cond_broadcast, c);
    VISIBLE(SMC_OP_COND_BROADCAST, c, 0, 0);
    return 0;
}
EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t *l) {
    if (!in_execution()) REAL(pthread_rwlock_rdlock, l);
    return (int)VISIBLE(SMC_OP_RW_RDLOCK, l, 0, 0);
}
EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t *l) {
    if (!in_execution()) REAL(pthread_rwlock_tryrdlock, l);
    return (int)VISIBLE(SMC_OP_RW_RDLOCK, l, 0, 1);
}
EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *l) {
    if (!in_execution()) REAL(pthread_rwlock_wrlock, l);
    return (int)VISIBLE(SMC_OP_RW_WRLOCK, l, 0, 0);
}
EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t *l) {
    if (!in_execution()) REAL(pthread_rwlock_trywrlock, l);
    return (int)VISIBLE(SMC_OP_RW_WRLOCK, l, 0, 1);
}
EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *l) {
    if (!in_execution()) REAL(pthread_rwlock_unlock, l);
    VISIBLE(SMC_OP_RW_UNLOCK, l, 0, 0);
    return 0;
}
EXPORT int pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *a, unsigned count) {
    if (!in_execution()) REAL(pthread_barrier_init, b, a, count);
    if (count == 0) return EINVAL;
    VISIBLE(SMC_OP_BARRIER_INIT, b, 0, count);
    return 0;
}
EXPORT int pthread_barrier_wait(pthread_barrier_t *b) {
    if (!in_execution()) REAL(pthread_barrier_wait, b);
    if (VISIBLE(SMC_OP_BARRIER_WAIT, b, 0, 0)) return PTHREAD_BARRIER_SERIAL_THREAD;
    VISIBLE(SMC_OP_BARRIER_LEAVE, b, 0, 0);
    return 0;
}
EXPORT int sem_init(sem_t *s, int pshared, unsigned value) {
    if (!in_execution()) REAL(sem_init, s, pshared, value);
    VISIBLE(SMC_OP_SEM_INIT, s, 0, value);
    return 0;
}
EXPORT int sem_wait(sem_t *s) {
    if (!in_execution()) REAL(sem_wait, s);
    VISIBLE(SMC_OP_SEM_WAIT, s, 0, 0);
    return 0;
}
EXPORT int sem_trywait(sem_t *s) {
    if (!in_execution()) REAL(sem_trywait, s);
    if (VISIBLE(SMC_OP_SEM_WAIT, s, 0, 1)) {
        errno = EAGAIN;
        return -1;
    }
    return 0;
}
EXPORT int sem_post(sem_t *s) {
    if (!in_execution()) REAL(sem_post, s);
    VISIBLE(SMC_OP_SEM_POST, s, 0, 0);
    return 0;
}
EXPORT int sched_yield(void) {
    if (!in_execution()) REAL(sched_yield);
    VISIBLE(SMC_OP_YIELD, 0, 0, 0);
    return 0;
}

/* ---- SV-COMP conventions (see runtime/smc_verifier.h) ---- */

EXPORT void __VERIFIER_assume(int cond) {
    if (!in_execution()) {
        if (!cond) real_exit(0);
        return;
    }
    VISIBLE(SMC_OP_ASSUME, 0, 0, cond != 0);
}
EXPORT void __VERIFIER_error(void) {
    if (in_execution()) report_error(SMC_ERR_VERIFIER, 0, CALLER_PC, 0, "__VERIFIER_error() reached");
    abort();
}
EXPORT void reach_error(void) {
    if (in_execution()) report_error(SMC_ERR_VERIFIER, 0, CALLER_PC, 0, "reach_error() reached");
    abort();
}
EXPORT void __VERIFIER_atomic_begin(void) {
    if (in_execution()) VISIBLE(SMC_OP_ATOMIC_BEGIN, 0, 0, 0);
}
EXPORT void __VERIFIER_atomic_end(void) {
    if (in_execution()) VISIBLE(SMC_OP_ATOMIC_END, 0, 0, 0);
}
/* Record a value of the execution's final state (the litmus front-end observes registers and
 * memory this way); not an event, so it costs no round trip. */
EXPORT void __smc_observe(unsigned index, unsigned long long value) {
    if (!in_execution() || index >= SMC_MAX_OBSERVED) return;
    ch->observed[index] = value;
    __atomic_fetch_or(&ch->observed_mask, 1ULL << index, __ATOMIC_SEQ_CST);
}
EXPORT int __VERIFIER_nondet_int(void) { return 0; }
EXPORT unsigned __VERIFIER_nondet_uint(void) { return 0; }
EXPORT long __VERIFIER_nondet_long(void) { return 0; }
EXPORT unsigned long __VERIFIER_nondet_ulong(void) { return 0; }
EXPORT _Bool __VERIFIER_nondet_bool(void) { return 0; }
EXPORT char __VERIFIER_nondet_char(void) { return 0; }

/* ---- what the program must not change or do under the checker ---- */

/* The runtime needs SIGTRAP (its traps) and the fatal signals (crash reports). A program's own
 * handlers for them are remembered and reported back, never installed: a fault is reported as
 * a crash whatever the program would have done. */
static struct sigaction prog_act[65];

static int runtime_signal(int sig) {
    if (!g_active) return 0;
    for (unsigned i = 0; i < N_RUNTIME_SIGNALS; i++)
        if (sig == runtime_signals[i]) return 1;
    return 0;
}

/* Dispositions and timers an execution changes are put back after it (restore_signals). */
static struct sigaction g_act_at_main[65], g_prog_act_at_main[65];
static uint64_t g_sigs_changed; /* bit sig - 1 */
static int g_timers_set, g_mask_changed;
static sigset_t g_mask_at_main;

EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
    if (act && sig > 0 && sig < 65) g_sigs_changed |= 1ull << (sig - 1);
    if (!runtime_signal(sig)) return sys_sigaction(sig, act, old);
    if (old) *old = prog_act[sig];
    if (act) prog_act[sig] = *act;
    return 0;
}

EXPORT unsigned alarm(unsigned seconds) {
    g_timers_set = 1;
    REAL(alarm, seconds);
}

EXPORT int setitimer(__itimer_which_t which, const struct itimerval *value, struct itimerval *old) {
    g_timers_set = 1;
    REAL(setitimer, which, value, old);
}

static void keep_signals_at_main(void) {
    for (int sig = 1; sig < 65; sig++) sys_sigaction(sig, NULL, &g_act_at_main[sig]);
    memcpy(g_prog_act_at_main, prog_act, sizeof prog_act);
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &g_mask_at_main, _NSIG / 8);
    g_sigs_changed = 0;
    g_mask_changed = 0;
    g_timers_set = 0;
}

/* After an execution: the dispositions it changed and the signal mask as at main, its interval
 * timers off (an alarm it set must not go off in a later execution). */
static void restore_signals(void) {
    if (g_mask_changed) syscall(SYS_rt_sigprocmask, SIG_SETMASK, &g_mask_at_main, NULL, _NSIG / 8);
    g_mask_changed = 0;
    for (int sig = 1; g_sigs_changed && sig < 65; sig++) {
        if (!(g_sigs_changed >> (sig - 1) & 1)) continue;
        if (runtime_signal(sig)) prog_act[sig] = g_prog_act_at_main[sig];
        else sys_sigaction(sig, &g_act_at_main[sig], NULL);
    }
    g_sigs_changed = 0;
    if (!g_timers_set) return;
    struct itimerval off;
    memset(&off, 0, sizeof off);
    for (int which = ITIMER_REAL; which <= ITIMER_PROF; which++) REAL_FN(setitimer)(which, &off, NULL);
    g_timers_set = 0;
}

EXPORT sighandler_t signal(int sig, sighandler_t handler) {
    struct sigaction act, old;
    memset(&act, 0, sizeof act);
    act.sa_handler = handler;
    act.sa_flags = SA_RESTART;
    if (sigaction(sig, &act, &old) != 0) return SIG_ERR;
    return old.sa_handler;
}

/* A program that blocks every signal must not block the runtime's: a blocked SIGTRAP at a trap
 * makes the kernel kill the process. The mask is applied without them. */
static const sigset_t *without_runtime_signals(const sigset_t *set, sigset_t *copy) {
    if (!set || !g_active) return set;
    *copy = *set;
    for (unsigned i = 0; i < N_RUNTIME_SIGNALS; i++) sigdelset(copy, runtime_signals[i]);
    return copy;
}

EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old) {
    sigset_t copy;
    if (set) g_mask_changed = 1;
    REAL(sigprocmask, how, how == SIG_UNBLOCK ? set : without_runtime_signals(set, &copy), old);
}

EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old) {
    sigset_t copy;
    if (set) g_mask_changed = 1;
    REAL(pthread_sigmask, how, how == SIG_UNBLOCK ? set : without_runtime_signals(set, &copy), old);
}

/* Other processes cannot be followed: starting one during an execution is an error naming the
 * call. Outside executions (before main) the calls go through. */
static void refuse(const char *what, uint64_t pc) {
    report_error(SMC_ERR_CALL, 0, pc, 0, what);
    die_now(125);
}

EXPORT pid_t fork(void) {
    if (in_execution()) refuse("fork()", CALLER_PC);
    REAL(fork);
}
EXPORT pid_t vfork(void) {
    /* forwarding vfork through a wrapper would return twice into a dead frame: fork instead */
    if (in_execution()) refuse("vfork()", CALLER_PC);
    REAL(fork);
}
EXPORT int execve(const char *p, char *const argv[], char *const envp[]) {
    if (in_execution()) refuse("execve()", CALLER_PC);
    REAL(execve, p, argv, envp);
}
EXPORT int execv(const char *p, char *const argv[]) {
    if (in_execution()) refuse("execv()", CALLER_PC);
    REAL(execv, p, argv);
}
EXPORT int execvp(const char *p, char *const argv[]) {
    if (in_execution()) refuse("execvp()", CALLER_PC);
    REAL(execvp, p, argv);
}
EXPORT int execvpe(const char *p, char *const argv[], char *const envp[]) {
    if (in_execution()) refuse("execvpe()", CALLER_PC);
    REAL(execvpe, p, argv, envp);
}

/* execl, execlp, execle: collect the arguments, then as execv/execvp/execve */
#define MAX_EXEC_ARGS 256
#define COLLECT_ARGS(first, ap, argv)                                                              \
    do {                                                                                           \
        int n_ = 0;                                                                                \
        argv[n_++] = (char *)(first);                                                              \
        while (n_ < MAX_EXEC_ARGS - 1 && (argv[n_] = va_arg(ap, char *)) != NULL) n_++;           \
        argv[n_] = NULL;                                                                           \
    } while (0)

EXPORT int execl(const char *p, const char *arg, ...) {
    if (in_execution()) refuse("execl()", CALLER_PC);
    char *argv[MAX_EXEC_ARGS];
    va_list ap;
    va_start(ap, arg);
    COLLECT_ARGS(arg, ap, argv);
    va_end(ap);
    return execv(p, argv);
}
EXPORT int execlp(const char *p, const char *arg, ...) {
    if (in_execution()) refuse("execlp()", CALLER_PC);
    char *argv[MAX_EXEC_ARGS];
    va_list ap;
    va_start(ap, arg);
    COLLECT_ARGS(arg, ap, argv);
    va_end(ap);
    return execvp(p, argv);
}
EXPORT int execle(const char *p, const char *arg, ...) {
    if (in_execution()) refuse("execle()", CALLER_PC);
    char *argv[MAX_EXEC_ARGS];
    va_list ap;
    va_start(ap, arg);
    COLLECT_ARGS(arg, ap, argv);
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return execve(p, argv, envp);
}
EXPORT int system(const char *cmd) {
    if (in_execution()) refuse("system()", CALLER_PC);
    REAL(system, cmd);
}
EXPORT FILE *popen(const char *cmd, const char *mode) {
    if (in_execution()) refuse("popen()", CALLER_PC);
    REAL(popen, cmd, mode);
}
EXPORT int posix_spawn(pid_t *pid, const char *p, const posix_spawn_file_actions_t *fa,
                       const posix_spawnattr_t *at, char *const argv[], char *const envp[]) {
    if (in_execution()) refuse("posix_spawn()", CALLER_PC);
    REAL(posix_spawn, pid, p, fa, at, argv, envp);
}
EXPORT int posix_spawnp(pid_t *pid, const char *p, const posix_spawn_file_actions_t *fa,
                        const posix_spawnattr_t *at, char *const argv[], char *const envp[]) {
    if (in_execution()) refuse("posix_spawnp()", CALLER_PC);
    REAL(posix_spawnp, pid, p, fa, at, argv, envp);
}
