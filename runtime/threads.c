/* The program's threads: created, joined and ended through the interposed pthread calls, as
 * coroutines of the worker's one OS thread or, without a worker, as real threads that run one
 * at a time. And the coroutines themselves: the switch, their set-up in a new worker, and an
 * execution's start (main as coroutine 0).
 *
 * Real threads and coroutines share this file because making a thread is one call for both,
 * and a coroutine's stack frame and TLS come from targets/ARCH/coro.h, which one file includes
 * (it defines the switch). */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "rt.h"
#include "coro.h"
#include "snapshot.h"

/* ---- real functions (resolved by smc_init, also when the runtime is inactive) ---- */
int (*real_pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
int (*real_pthread_join)(pthread_t, void **);
void (*real_pthread_exit)(void *) __attribute__((noreturn));
void (*real_exit)(int) __attribute__((noreturn));
void (*real_assert_fail)(const char *, const char *, unsigned, const char *) __attribute__((noreturn));

pthread_t g_tids[SMC_MAX_THREADS];

/* ---- coroutines: a worker process runs execution after execution, the program's threads as
 * coroutines of its one OS thread, and puts its memory back from a snapshot after each ---- */
struct coro g_co[SMC_MAX_THREADS];
/* The coroutines any execution has used so far: an execution's start resets only these (all
 * SMC_MAX_THREADS of them are 14 KiB, as much as the rest of a small execution touches). */
static uint32_t g_co_span = 1;
/* Coroutines: slots whose thread has exited and been joined, which a new thread may take (the
 * limit counts threads alive at once, not every thread an execution creates). */
static uint8_t g_joined[SMC_MAX_THREADS];
uint32_t g_spawned_slot;
static uint64_t g_host_sp;  /* the worker's loop, on the process's own stack */
int g_cur = -1;             /* the coroutine running, -1 for the host */
int g_resume = -1;          /* who runs next when the current one waits: a creator whose child
                             * has announced its first event */
int g_exec_over, g_exec_status, g_exec_flush;
int g_all_waiting;          /* every thread of the execution waits: the host takes it from here */
static int g_errno_at_main; /* main's errno when the snapshot was taken */

/* ---- threads ---- */

void stack_bounds(uint64_t *lo, uint64_t *hi) {
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
char *g_stack_area;
uint64_t g_main_tls_lo, g_main_tls_hi;
static char g_stack_ready[SMC_MAX_THREADS]; /* usable in this process */
#define SMC_STACK_GUARD (64ul << 10)

void reserve_stacks(void) {
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

/* A thread's attributes as a real thread's would be: its stack and a guard page below it
 * (Rust's std asks for the guard). glibc answers for a coroutine from the main thread's
 * descriptor, reading /proc/self/maps, whose contents change between executions: main's
 * answer is the one taken at start-up (g_main_stack_lo/hi; asking in an execution would
 * allocate, leaving that execution's heap unlike the others'); a coroutine's is its slot's stack. */
EXPORT int pthread_getattr_np(pthread_t t, pthread_attr_t *attr) {
    int slot = g_coroutines && in_execution() ? slot_of(t) : -1;
    if (slot < 0 || (slot == 0 && !g_main_stack_hi)) REAL(pthread_getattr_np, t, attr);
    uint64_t lo = g_co[slot].floor, hi = g_co[slot].top;
    if (slot == 0) {
        lo = g_main_stack_lo;
        hi = g_main_stack_hi;
    }
    if (pthread_attr_init(attr) != 0) return ENOMEM;
    if (hi > lo) pthread_attr_setstack(attr, (void *)(uintptr_t)lo, hi - lo);
    pthread_attr_setguardsize(attr, 4096);
    return 0;
}

/* A thread ends: as glibc's start_thread, its thread_local destructors and then those of its
 * thread-specific data run in it before it is gone (a join returns after them), their accesses
 * events as the rest of the thread's (two threads' destructors that update one counter race). */
static void thread_finish(void *ret) {
    if (g_coroutines) {
        run_thread_local_dtors(g_cur);
        run_key_dtors();
    }
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
    t_atomic_depth = 0;
    t_atomic_begin_pc = 0;
    t_unseen_sp = 0;
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

/* ---- coroutines ---- */

void co_switch(int to) {
    int from = g_cur;
    g_cur = to;
    /* a program that uses no wide register state does not mind what the host left there */
    smc_coro_switch(from < 0 ? &g_host_sp : &g_co[from].sp, to < 0 ? g_host_sp : g_co[to].sp,
                    to < 0 ? smc_tls.main_tp : g_co[to].fs, to >= 0 && !smc_hook_sse_only);
}

/* The execution is over (`status` as waitpid would say; stdio flushed as exit would): back
 * to the host, never to return. */
void co_end(int status, int flush) {
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

/* The running coroutine's thread ends (its start routine returned or it called pthread_exit;
 * its destructors ran and its exit event is recorded). */
static void __attribute__((noreturn)) co_thread_exit(void) {
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
    if (in_execution()) smc_stop(SMC_OP_PROCESS_EXIT, 0, (uint64_t)g_exit_handlers_registered, 0, (uint64_t)r, 0, 0, 0);
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
void co_start(void) {
    restore_if_pending();
    heap_reset();
    g_exec_over = 0;
    g_hang_deferred = -1;
    g_exiting = 0;
    g_all_waiting = 0;
    g_nexit_handlers = 0; /* a crashed or aborted execution's never ran */
    g_exit_handlers_registered = 0;
    co_thread_reset();
    g_resume = -1;
    memset(g_joined, 0, sizeof g_joined);
    g_spawned_slot = 0;
    t_atomic_depth = 0; /* main's (the host's TLS): an execution may have ended inside a section */
    t_unseen_sp = 0;
    t_atomic_begin_pc = 0;
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

/* Set up coroutines in this fresh worker; 0 when they cannot be used here. */
int co_setup(void) {
    smc_tls.skip = (const void *)g_engine_explore;
    if (!smc_tls_init() || !slot_stack(0, &g_start[0])) return 0;
    /* no mmap'd chunks: memory a restore would not take back */
    mallopt(M_MMAP_MAX, 0);
    keep_loader_at_main();
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
    g_main_tls_lo = (uint64_t)(uintptr_t)smc_tls.lo;
    g_main_tls_hi = (uint64_t)(uintptr_t)smc_tls.hi;
    return smc_snapshot_take(g_argv, tls, n, (const void *)g_engine_explore) == NULL;
}

/* The TLS of a new coroutine: a fresh copy of the main thread's at the top of its stack `a`,
 * as glibc places a thread's (so its accesses count as the thread's own, like its stack's).
 * Its thread pointer; the stack it starts on ends below. */
static uint64_t co_tls(struct start_arg *a, uint64_t *sp_top) {
    uint64_t area = (a->stack_hi - smc_tls_area_size()) & ~4095ULL;
    *sp_top = area;
    return smc_tls_new((char *)(uintptr_t)area);
}

/* The slot of a new thread: a joined thread's, else the next one; -1 past the limit. */
static int free_slot(void) {
    uint32_t n = LOAD(&ch->nthreads);
    for (uint32_t i = 1; i < n && i < SMC_MAX_THREADS; i++)
        if (g_joined[i]) return (int)i;
    return n < SMC_MAX_THREADS ? (int)n : -1;
}

/* glibc (2.32 and later) clears this once the process creates a thread, and never sets it
 * again; libstdc++ and glibc itself read it to skip atomic instructions (a shared_ptr's count
 * becomes a plain increment). A coroutine is no thread of glibc's, so it is cleared here; the
 * snapshot restore puts it back for the next execution. Weak: older glibc has none. */
extern char __libc_single_threaded __attribute__((weak));

EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg) {
    if (!in_execution()) return real_pthread_create(t, attr, fn, arg);
    if (&__libc_single_threaded) __libc_single_threaded = 0;
    int slot = free_slot();
    if (slot < 0) {
        /* not an error of the program's: the execution is cut here, as at the step bound */
        char msg[128];
        snprintf(msg, sizeof msg, "more than %d threads alive at once (the checker's limit)", SMC_MAX_THREADS);
        report_error(SMC_ERR_LIMIT, 0, CALLER_PC, 0, msg);
        if (g_coroutines) co_end(0, 0); /* the execution is cut there */
        die_now(0);
    }
    uint32_t n = (uint32_t)slot, count = LOAD(&ch->nthreads);
    g_joined[n] = 0;
    smc_stop(SMC_OP_SPAWN, 0, 0, 0, n, CALLER_PC, 0, 0);
    g_spawned_slot = n + 1;
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
    if (n == count) STORE(&ch->nthreads, n + 1);
    __atomic_add_fetch(&ch->running, 1, __ATOMIC_SEQ_CST);
    if (g_coroutines) {
        if (n >= g_co_span) g_co_span = n + 1;
        g_co[n].fs = tp;
        g_co[n].top = sp_top;
        g_co[n].floor = a->stack_lo;
        g_co[n].sp = smc_coro_frame(sp_top, co_thread);
        g_co[n].ret = NULL;
        *t = (pthread_t)smc_tls_self(tp); /* what pthread_self() says in it */
        g_tids[n] = *t;
        g_resume = g_cur; /* back here once the child has announced its first event */
        co_switch((int)n);
        return 0;
    }
    int r = real_pthread_create(t, ours ? &own : attr, thread_start, a);
    if (ours) pthread_attr_destroy(&own);
    if (r) {
        STORE(&s->state, SMC_SLOT_FREE);
        STORE(&ch->nthreads, count);
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
    if (slot >= 0 && slot == t_slot) return EDEADLK;
    if (slot >= 0) smc_stop(SMC_OP_JOIN, 0, 0, 0, (uint64_t)slot, CALLER_PC, 0, 0);
    if (!g_coroutines) {
        /* the real thread is gone once joined: its slot and stack serve the next one */
        int r = real_pthread_join(t, ret);
        if (r == 0 && slot > 0) g_joined[slot] = 1;
        return r;
    }
    if (slot < 0) return ESRCH;
    if (ret) *ret = g_co[slot].ret;
    if (slot > 0) g_joined[slot] = 1;
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
        smc_stop(SMC_OP_PROCESS_EXIT, 0, (uint64_t)g_exit_handlers_registered, 0, (uint64_t)status, CALLER_PC, 0, 0);
        if (g_coroutines) co_exit(status);
        g_exiting = 1;
    }
    real_exit(status);
}

