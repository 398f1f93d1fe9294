/* The runtime, preloaded into the program under test: what its files share.
 *
 * It executes, it never decides. At load it maps the channel, patches a trap over every
 * instrumented instruction of the executable and becomes a fork server at main. In an
 * execution, every visible operation (a trapped shared-memory access, a pthread call) is
 * announced in the thread's slot and the thread waits until the supervisor lets it run; only
 * one thread of the program runs at a time. The trap path is async-signal-safe: atomics,
 * raw futex syscalls and memcpy only.
 *
 * The files, by what each owns:
 *   trap.c      the stop (announce an event, wait for the go), the trap path and the await
 *               hash, the runtime's signal handlers, start-up (the channel, the text patched)
 *   script.c    scripted replay: an execution's prefix carried out without the supervisor
 *   threads.c   the program's threads, real or coroutines of the worker; the coroutines'
 *               switch and set-up, an execution's start
 *   exits.c     exit handlers and thread destructors, which a worker runs itself
 *   sync.c      synchronisation, assertions and SV-COMP conventions: operations the engine
 *               models
 *   worker.c    the fork server, the worker's loop (which resumes the coroutines), the
 *               engine's side of the worker
 *   process.c   what the program must not change or do (signals, other processes, mappings,
 *               the working directory, descriptors, the output) and its reset after an
 *               execution
 *   heap.c      the malloc family: blocks recorded for reports and the worker's restore
 *   snapshot.c  the worker's snapshot of the process's memory (snapshot.h)
 * System calls the runtime makes by number are in sys.h, the target's code in targets/ARCH.
 *
 * Everything declared here is hidden: the runtime exports only its interposers (EXPORT), and
 * its files reach each other's state and functions directly, as within one file. Helpers that
 * a stop or a coroutine switch inlines from another file are static inline here. */
#ifndef SMC_RT_H
#define SMC_RT_H
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "channel.h"
#include "arch.h"
#include "sys.h"

#define EXPORT __attribute__((visibility("default")))

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

/* The function this one interposes (looked up once), and a forward to it. */
#define REAL_FN(name)                                                                              \
    ({                                                                                             \
        static __typeof__(name) *real_fn;                                                          \
        if (!real_fn) real_fn = (__typeof__(name) *)dlsym(RTLD_NEXT, #name);                       \
        real_fn;                                                                                   \
    })
#define REAL(name, ...) return REAL_FN(name)(__VA_ARGS__)

/* The call instruction that called us (a return address minus SMC_CALL_BACK points into it, so
 * that function+offset and file:line name the call, not the statement after it). */
#define CALLER_PC ((uint64_t)(uintptr_t)__builtin_return_address(0) - SMC_CALL_BACK)

/* The checker's sign to the engine inside the worker that a thread has run too long without a
 * visible operation: the execution ends as a hang (SIGRTMAX unless arch.h says otherwise; the
 * checker sends it, src/supervisor/in_worker.rs hang_signal). */
#ifndef SMC_HANG_SIGNAL
#define SMC_HANG_SIGNAL (_NSIG - 1)
#endif

/* The signals the runtime keeps for itself: SIGTRAP (its traps), the fatal ones (crash
 * reports; SIGSYS also for the worker's descriptor watch), and the hang signal. The program
 * may neither handle nor block them during an execution. */
static const int runtime_signals[] = {SIGTRAP, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS, SMC_HANG_SIGNAL};
#define N_RUNTIME_SIGNALS (sizeof runtime_signals / sizeof runtime_signals[0])

#pragma GCC visibility push(hidden)

/* ---- trap.c ---- */

/* process-wide state (set up before main, read-only afterwards) */
extern struct smc_header *ch;
/* the sites, the load bias and the trampoline (set up at start-up: startup.c) */
extern const struct smc_site *g_sites;
extern uint32_t g_nsites;
extern uint64_t g_bias;
extern uint8_t *g_tramp;
/* The site whose stub begins at `pc` (a trap there: a chained site's copy went on to it), if any. */
const struct smc_site *site_of_stub(uint64_t pc);
void install_handlers(void);
extern int g_active;
extern volatile int g_exiting; /* the execution has ended: run everything natively */
extern uint64_t g_main_stack_lo, g_main_stack_hi;
/* The slot stack area (threads.c): a span of SMC_STACK_SPAN bytes per slot, each a guard, the
 * slot's stack and, for a coroutine, its TLS at the top; NULL when it could not be reserved. */
#define SMC_STACK_SPAN (8ul << 20)
extern char *g_stack_area;
/* The main thread's static TLS and TCB, with coroutines (threads.c) */
extern uint64_t g_main_tls_lo, g_main_tls_hi;

/* per-thread state */
extern __thread int t_slot;
extern __thread uint64_t t_stack_lo, t_stack_hi;

struct hash_src;
uint64_t smc_stop(uint32_t op, uint64_t addr, uint64_t addr2, uint64_t size, uint64_t arg, uint64_t pc,
                  const struct hash_src *h, uint32_t site);
/* A call that tries a lock or a semaphore without waiting: a stop with its caller's await hash. */
uint64_t smc_stop_try(uint32_t op, uint64_t obj, uint64_t arg, uint64_t pc);
void notify_supervisor(void);
uint32_t running_less_one(void);
void smc_note_read(uint64_t addr, uint64_t size);
struct timespec;
long smc_futex(uint32_t *word, int op, uint32_t val, const struct timespec *timeout, uint64_t pc);
void publish_prev(struct smc_slot *s);
void smc_before_unmap(uint64_t lo, uint64_t hi);
void report_error(uint32_t kind, uint32_t sig, uint64_t pc, uint64_t addr, const char *msg);
/* process.c: a call the checker cannot follow ends the check, naming it (SMC_ERR_CALL). */
void __attribute__((noreturn)) refuse_call(const char *what, uint64_t pc);
void reraise_default(int sig);
void on_fatal(int sig, siginfo_t *si, void *ucv);

/* A library function whose accesses are no events runs (src/site.rs UNSEEN_FUNCTIONS): the
 * stack pointer at its entry, 0 if none. */
extern __thread uint64_t t_unseen_sp;
/* A thread of the execution runs (its calls and accesses may be events). */
static inline int thread_in_execution(void) { return g_active && t_slot >= 0 && !g_exiting; }
/* ... and its calls and accesses are events now. */
static inline int in_execution(void) { return thread_in_execution() && !t_unseen_sp; }

int smc_pieces_begin(uint64_t pc, uint32_t site);
int smc_range_watched(uint64_t ea, uint64_t size);
void smc_access(int store, uint64_t ea, uint64_t size, void *buf, uint64_t pc, uint32_t site);
uint64_t smc_visible_load(uint64_t addr, uint64_t size, uint64_t pc);

/* ---- pending.c: a thread's buffered stores, which it sees while it runs ---- */
int smc_pending_push(struct smc_slot *s, uint64_t addr, uint32_t size, const uint8_t *bytes);
void smc_commit(uint32_t owner, uint64_t addr, const uint8_t *bytes, uint32_t size);
void smc_pending_show(struct smc_slot *s);
void smc_pending_hide(struct smc_slot *s);

/* Is [addr, addr + size) on a thread's stack (the slots' stack area, main's stack)? */
static inline int on_a_stack(uint64_t addr, uint64_t size) {
    uint64_t area = (uint64_t)(uintptr_t)g_stack_area;
    if (area && addr + size > area && addr < area + SMC_STACK_SPAN * SMC_MAX_THREADS) return 1;
    return addr + size > g_main_stack_lo && addr < g_main_stack_hi;
}

/* ---- worker.c ---- */

struct smc_engine_ops;
typedef int (*engine_explore_fn)(const struct smc_engine_ops *, void *);
typedef int (*main_fn)(int, char **, char **);
extern main_fn real_main;
extern int g_argc;
extern char **g_argv, **g_envp;
extern int g_coroutines;
extern pid_t g_worker_pid;
extern char g_engine_lib[4096];
extern void *g_engine_area;
extern engine_explore_fn g_engine_explore;
extern int g_in_engine;

/* ---- threads.c ---- */

/* real functions (resolved by smc_init, also when the runtime is inactive) */
extern int (*real_pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
extern int (*real_pthread_join)(pthread_t, void **);
extern void (*real_pthread_exit)(void *) __attribute__((noreturn));
extern void (*real_exit)(int) __attribute__((noreturn));
extern void (*real_assert_fail)(const char *, const char *, unsigned, const char *) __attribute__((noreturn));

extern pthread_t g_tids[SMC_MAX_THREADS];
/* The slot the last thread created took, + 1 (0: none since the script log looked) */
extern uint32_t g_spawned_slot;
/* A coroutine: a thread of the program in a worker, which runs execution after execution, the
 * program's threads as coroutines of its one OS thread. */
extern struct coro {
    uint64_t sp, fs;
    int waiting; /* suspended in wait_go: the host may resume it once its go is set */
    void *ret;   /* what the thread returned, for pthread_join */
    /* its stack: where it starts, where it ends, and the deepest stop on it since it was last
     * cleared (0: clean) */
    uint64_t top, floor, low;
} g_co[SMC_MAX_THREADS];
extern int g_cur;    /* the coroutine running, -1 for the host */
extern int g_resume; /* who runs next when the current one waits: a creator whose child has
                      * announced its first event */
extern int g_exec_over, g_exec_status, g_exec_flush;
extern int g_hang_deferred; /* trap.c: the coroutine a hang signal found in the runtime */
extern int g_all_waiting; /* every thread of the execution waits: the host takes it from here */

void stack_bounds(uint64_t *lo, uint64_t *hi);
void reserve_stacks(void);
int co_setup(void);
void co_start(void);
void co_switch(int to);
void co_end(int status, int flush) __attribute__((noreturn));

/* The running coroutine waits for its go: another one runs, or the host waits for the
 * supervisor. */
static inline void co_wait(void) {
    int me = g_cur, to = g_resume;
    g_resume = -1;
    g_co[me].waiting = 1;
    co_switch(to);
    g_co[me].waiting = 0;
}

/* ---- script.c ---- */

int run_script(void);
int script_goes_on(void);

/* The script's next step, if one runs now (every thread waits): run_script's answer. */
static inline int script_step(void) {
    return LOAD(&ch->script_len) && !LOAD(&ch->running) ? run_script() : 0;
}

/* Every thread of the execution waits: let the script's next step run (1), or end the script
 * and tell the supervisor (0). `running` is 0 for a moment between two scripted steps too; the
 * supervisor takes it for a stop only once script_len is 0 again. */
static inline int go_on_or_notify(void) {
    if (script_step()) return 1;
    STORE(&ch->script_len, 0);
    notify_supervisor();
    return 0;
}

/* Every thread of the execution waits. `stopping`: the caller waits for its go next (it may
 * go on with the script itself); otherwise it leaves for the host. */
static inline void all_waiting(int stopping) {
    if (g_coroutines) {
        /* else the host goes on (co_run_ready) */
        if (!stopping || !script_goes_on()) g_all_waiting = 1;
        return;
    }
    go_on_or_notify();
}

/* ---- exits.c ---- */

extern int g_exit_for_real;
extern int g_nexit_handlers;
/* An exit handler was registered in this execution: an exit then keeps its place among the
 * other threads' events (smc_stop's addr2 of SMC_OP_PROCESS_EXIT) instead of coming last. */
extern int g_exit_handlers_registered;
void run_exit_handlers(int status);
void run_thread_local_dtors(int slot);
void run_key_dtors(void);
void keep_keys_at_main(void);
void co_thread_reset(void);

/* ---- process.c ---- */

int sys_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
void on_sys(int sig, siginfo_t *si, void *ucv);
void keep_signals_at_main(void);
void keep_clocks_at_main(void);
/* How many clock readings the running thread made in this execution (its await hash takes
 * them in: a loop that polls a clock is not waiting for a write). */
uint64_t clock_reads_of_thread(void);
void keep_cwd_at_main(void);
void keep_loader_at_main(void);
void note_output(void);
int co_reset(int captured);
void restore_if_pending(void);

/* ---- memory.c ---- */

/* Memory the runtime reads or writes for the program, in pieces (smc_access), ascending unless
 * `down`; call smc_pieces_begin first. */
void smc_load_pieces(uint64_t a, uint64_t len, void *buf, uint64_t pc, uint32_t site);
void smc_store_pieces(uint64_t a, uint64_t len, const void *buf, uint64_t pc, uint32_t site);
void smc_copy_pieces(uint64_t d, uint64_t s, uint64_t len, int down, uint64_t pc, uint32_t site);
void smc_fill_pieces(uint64_t d, uint64_t len, const uint8_t pattern[8], uint32_t period, int down, uint64_t pc,
                     uint32_t site);
void memory_init(void);
struct dl_phdr_info;
/* The lowest and highest address of an object's loaded segments. */
void object_span(const struct dl_phdr_info *info, uint64_t *lo, uint64_t *hi);
void span_of_object(uint64_t addr, uint64_t *lo, uint64_t *hi); /* the loaded object at addr */
void program_span(uint64_t *bias, uint64_t *lo, uint64_t *hi); /* the executable's bias and span */

/* ---- sync.c ---- */

extern __thread int t_atomic_depth; /* nesting of atomic sections */
extern __thread uint64_t t_atomic_begin_pc; /* a section not announced yet: where it began */
void atomic_begin(uint64_t pc);
void atomic_end(uint64_t pc);
int in_runtime(uint64_t pc); /* pc is in the runtime's own code */
/* A call the program made in an execution (not the runtime's own, nor one before main). */
static inline int program_call(uint64_t pc) { return in_execution() && !in_runtime(pc); }

/* ---- heap.c ---- */

int heap_ready(void);
void reserve_heaps(void);
void heap_reset(void);

#pragma GCC visibility pop
#endif
