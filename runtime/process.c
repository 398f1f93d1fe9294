/* What the program must not change or do under the checker, and the reset of what it may
 * change after an execution.
 *
 * The runtime keeps its own signals (a program's handlers for them are remembered, never
 * installed), refuses to start other processes in an execution, and notes what an execution
 * changes that the worker's snapshot does not hold: signal dispositions, the mask and timers,
 * mappings, the working directory, descriptors (the descriptor watch, targets/ARCH/fdwatch.h),
 * the output written to the capture file, objects the dynamic loader loaded. After each
 * execution (co_reset, restore_if_pending) the worker puts all of it back, or ends when it
 * cannot. Also the thread ids of coroutine threads (gettid, syscall). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/random.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"
#include "fdwatch.h"
#include "snapshot.h"

/* ---- signals ---- */

static int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);

/* libc's sigaction: the runtime's own (below) keeps the program off the signals it needs */
int sys_sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
    if (!real_sigaction) real_sigaction = dlsym(RTLD_NEXT, "sigaction");
    return real_sigaction(sig, act, old);
}

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

/* The alternate signal stack is per kernel thread: coroutine threads share the worker's one,
 * and what an execution sets would stay for the next (Rust's std installs one per thread and
 * takes another one's as its own). Each coroutine thread has its own, as a real thread does, kept
 * here and never given to the kernel: the runtime's handlers report a fault whatever stack the
 * program asked for. Every execution starts with none. */
static stack_t g_altstack[SMC_MAX_THREADS];

static void reset_altstacks(void) {
    for (int i = 0; i < SMC_MAX_THREADS; i++) {
        memset(&g_altstack[i], 0, sizeof g_altstack[i]);
        g_altstack[i].ss_flags = SS_DISABLE;
    }
}

void keep_signals_at_main(void) {
    reset_altstacks();
    for (int sig = 1; sig < 65; sig++) sys_sigaction(sig, NULL, &g_act_at_main[sig]);
    memcpy(g_prog_act_at_main, prog_act, sizeof prog_act);
    sys_sigprocmask(SIG_BLOCK, NULL, &g_mask_at_main);
    g_sigs_changed = 0;
    g_mask_changed = 0;
    g_timers_set = 0;
}

/* After an execution: the dispositions it changed and the signal mask as at main, no alternate
 * signal stacks, its interval timers off (an alarm it set must not go off in a later
 * execution). */
static void restore_signals(void) {
    reset_altstacks();
    if (g_mask_changed) sys_sigprocmask(SIG_SETMASK, &g_mask_at_main, NULL);
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

EXPORT int sigaltstack(const stack_t *ss, stack_t *old) {
    /* (also in an unseen function: std's thread end gives its alternate stack back in one) */
    if (!g_coroutines || !thread_in_execution() || t_slot >= SMC_MAX_THREADS) REAL(sigaltstack, ss, old);
    stack_t *own = &g_altstack[t_slot];
    if (ss && ss->ss_flags & ~SS_DISABLE) {
        errno = EINVAL;
        return -1;
    }
    if (ss && !(ss->ss_flags & SS_DISABLE) && ss->ss_size < (size_t)MINSIGSTKSZ) {
        errno = ENOMEM;
        return -1;
    }
    if (old) *old = *own;
    if (ss) {
        *own = *ss;
        if (ss->ss_flags & SS_DISABLE) {
            memset(own, 0, sizeof *own);
            own->ss_flags = SS_DISABLE;
        }
    }
    return 0;
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

/* ---- time and randomness ----
 * Neither is an input the checker explores: a program that reads the clock or asks for random
 * bytes (Rust's test harness times each test; std's hash maps seed themselves) would run
 * differently in each execution, and no schedule would replay. In an execution the program
 * reads a virtual time instead, each clock as it read when the worker started plus 1 us per
 * reading of any clock since the execution began and 1 s per reading of time() (which the
 * schedule fixes), and gets the
 * same pseudo-random bytes in every execution. The runtime's own readings are real. */
static struct timespec g_clock_at_main[2]; /* CLOCK_REALTIME, CLOCK_MONOTONIC */
static uint64_t g_clock_reads, g_random_state, g_clock_leaps;
static uint32_t g_slot_clock_reads[SMC_MAX_THREADS];

static void reset_time_and_randomness(void) {
    g_clock_reads = 0;
    g_clock_leaps = 0;
    memset(g_slot_clock_reads, 0, sizeof g_slot_clock_reads);
    g_random_state = 0x736d632d72756e21ull; /* any constant */
}

void keep_clocks_at_main(void) {
    REAL_FN(clock_gettime)(CLOCK_REALTIME, &g_clock_at_main[0]);
    REAL_FN(clock_gettime)(CLOCK_MONOTONIC, &g_clock_at_main[1]);
    reset_time_and_randomness();
}

uint64_t clock_reads_of_thread(void) {
    return t_slot >= 0 && t_slot < SMC_MAX_THREADS ? g_slot_clock_reads[t_slot] : 0;
}

/* The virtual reading of `clock`. */
static struct timespec virtual_clock(clockid_t clock) {
    if (t_slot >= 0 && t_slot < SMC_MAX_THREADS) g_slot_clock_reads[t_slot]++;
    int realtime = clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE || clock == CLOCK_TAI;
    struct timespec t = g_clock_at_main[realtime ? 0 : 1];
    if (clock == CLOCK_PROCESS_CPUTIME_ID || clock == CLOCK_THREAD_CPUTIME_ID) t.tv_sec = t.tv_nsec = 0;
    uint64_t ns = (uint64_t)t.tv_nsec + ++g_clock_reads * 1000 + g_clock_leaps * 1000000000u;
    t.tv_sec += (time_t)(ns / 1000000000u);
    t.tv_nsec = (long)(ns % 1000000000u);
    return t;
}

EXPORT int clock_gettime(clockid_t clock, struct timespec *tp) {
    if (!program_call(CALLER_PC)) REAL(clock_gettime, clock, tp);
    *tp = virtual_clock(clock);
    return 0;
}

EXPORT int gettimeofday(struct timeval *tv, void *tz) {
    if (!program_call(CALLER_PC)) REAL(gettimeofday, tv, tz);
    struct timespec t = virtual_clock(CLOCK_REALTIME);
    tv->tv_sec = t.tv_sec;
    tv->tv_usec = t.tv_nsec / 1000;
    return 0;
}

/* A reading in seconds is a second after the one before: a wait with a deadline in seconds
 * gets there in a few rounds (at 1 us a reading it would take a million). */
EXPORT time_t time(time_t *out) {
    if (!program_call(CALLER_PC)) REAL(time, out);
    g_clock_leaps++;
    time_t now = virtual_clock(CLOCK_REALTIME).tv_sec;
    if (out) *out = now;
    return now;
}

/* splitmix64: the same bytes in every execution */
static void pseudo_random(void *buf, size_t n) {
    unsigned char *p = buf;
    for (size_t i = 0; i < n; i++) {
        if (i % 8 == 0) g_random_state += 0x9e3779b97f4a7c15ull;
        uint64_t z = g_random_state;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        p[i] = (unsigned char)(z >> (8 * (i % 8)));
    }
}

EXPORT ssize_t getrandom(void *buf, size_t n, unsigned flags) {
    if (!program_call(CALLER_PC)) REAL(getrandom, buf, n, flags);
    pseudo_random(buf, n);
    return (ssize_t)n;
}

/* ---- other processes ---- */

/* A call the checker cannot follow during an execution (another process, a futex operation or
 * a pthread call it does not model) ends the check with an error naming it. */
void refuse_call(const char *what, uint64_t pc) {
    report_error(SMC_ERR_CALL, 0, pc, 0, what);
    die_now(125);
}

/* Other processes cannot be followed: starting one during an execution is refused. Outside
 * executions (before main) the calls go through. */

EXPORT pid_t fork(void) {
    if (in_execution()) refuse_call("fork()", CALLER_PC);
    REAL(fork);
}
EXPORT pid_t vfork(void) {
    /* forwarding vfork through a wrapper would return twice into a dead frame: fork instead */
    if (in_execution()) refuse_call("vfork()", CALLER_PC);
    REAL(fork);
}
EXPORT int execve(const char *p, char *const argv[], char *const envp[]) {
    if (in_execution()) refuse_call("execve()", CALLER_PC);
    REAL(execve, p, argv, envp);
}
EXPORT int execv(const char *p, char *const argv[]) {
    if (in_execution()) refuse_call("execv()", CALLER_PC);
    REAL(execv, p, argv);
}
EXPORT int execvp(const char *p, char *const argv[]) {
    if (in_execution()) refuse_call("execvp()", CALLER_PC);
    REAL(execvp, p, argv);
}
EXPORT int execvpe(const char *p, char *const argv[], char *const envp[]) {
    if (in_execution()) refuse_call("execvpe()", CALLER_PC);
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
    if (in_execution()) refuse_call("execl()", CALLER_PC);
    char *argv[MAX_EXEC_ARGS];
    va_list ap;
    va_start(ap, arg);
    COLLECT_ARGS(arg, ap, argv);
    va_end(ap);
    return execv(p, argv);
}
EXPORT int execlp(const char *p, const char *arg, ...) {
    if (in_execution()) refuse_call("execlp()", CALLER_PC);
    char *argv[MAX_EXEC_ARGS];
    va_list ap;
    va_start(ap, arg);
    COLLECT_ARGS(arg, ap, argv);
    va_end(ap);
    return execvp(p, argv);
}
EXPORT int execle(const char *p, const char *arg, ...) {
    if (in_execution()) refuse_call("execle()", CALLER_PC);
    char *argv[MAX_EXEC_ARGS];
    va_list ap;
    va_start(ap, arg);
    COLLECT_ARGS(arg, ap, argv);
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return execve(p, argv, envp);
}
EXPORT int system(const char *cmd) {
    if (in_execution()) refuse_call("system()", CALLER_PC);
    REAL(system, cmd);
}
EXPORT FILE *popen(const char *cmd, const char *mode) {
    if (in_execution()) refuse_call("popen()", CALLER_PC);
    REAL(popen, cmd, mode);
}
EXPORT int posix_spawn(pid_t *pid, const char *p, const posix_spawn_file_actions_t *fa,
                       const posix_spawnattr_t *at, char *const argv[], char *const envp[]) {
    if (in_execution()) refuse_call("posix_spawn()", CALLER_PC);
    REAL(posix_spawn, pid, p, fa, at, argv, envp);
}
EXPORT int posix_spawnp(pid_t *pid, const char *p, const posix_spawn_file_actions_t *fa,
                        const posix_spawnattr_t *at, char *const argv[], char *const envp[]) {
    if (in_execution()) refuse_call("posix_spawnp()", CALLER_PC);
    REAL(posix_spawnp, pid, p, fa, at, argv, envp);
}

/* ---- mappings, the working directory, thread ids ---- */

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

static void input_fence(uint64_t pc);

/* The program's own munmap comes after the thread's buffered stores, as the system call does
 * on the processor: a full fence first (a store still buffered there, or shown to the thread
 * while it runs, would fault when it reaches memory). */
EXPORT int munmap(void *addr, size_t len) {
    uintptr_t lo = (uintptr_t)addr, hi = lo + len;
    input_fence(CALLER_PC);
    smc_before_unmap(lo, hi);
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

void keep_cwd_at_main(void) {
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
    return tid ? (pid_t)tid : sys_gettid();
}

/* syscall(SYS_gettid), the way to gettid before glibc 2.30, and futex (sync.c); every other
 * number goes to libc's syscall() with all six argument registers (those the call did not set
 * are ignored). */
EXPORT long syscall(long nr, ...) {
    if (nr == SYS_gettid && own_tid()) return own_tid();
    va_list ap;
    va_start(ap, nr);
    long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long);
    long d = va_arg(ap, long), e = va_arg(ap, long), f = va_arg(ap, long);
    va_end(ap);
    /* (the runtime's own futex calls, sys.h, come through here too) */
    if (nr == SYS_futex && program_call(CALLER_PC))
        return smc_futex((uint32_t *)a, (int)b, (uint32_t)c, (const struct timespec *)d, CALLER_PC);
    return REAL_FN(syscall)(nr, a, b, c, d, e, f);
}

/* ---- input into the program's memory ---- */

/* A call that writes the program's memory from outside it (a read from a descriptor, stdio
 * input) comes after the thread's buffered stores, as on the processor (its stores reach
 * memory in order, the kernel's copy last): under store buffers it is a full fence first, or a
 * store still buffered would land over what the call wrote. */
static void input_fence(uint64_t pc) {
    if (program_call(pc) && (ch->flags & SMC_FLAG_FENCES_VISIBLE))
        smc_stop(SMC_OP_FENCE, 0, 0, 0, 1, pc, 0, 0);
}

EXPORT ssize_t read(int fd, void *buf, size_t n) {
    input_fence(CALLER_PC);
    REAL(read, fd, buf, n);
}
EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off) {
    input_fence(CALLER_PC);
    REAL(pread, fd, buf, n, off);
}
EXPORT ssize_t pread64(int fd, void *buf, size_t n, off_t off) {
    input_fence(CALLER_PC);
    REAL(pread64, fd, buf, n, off);
}
EXPORT ssize_t readv(int fd, const struct iovec *iov, int n) {
    input_fence(CALLER_PC);
    REAL(readv, fd, iov, n);
}
EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags) {
    input_fence(CALLER_PC);
    REAL(recv, fd, buf, n, flags);
}
EXPORT ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *a, socklen_t *l) {
    input_fence(CALLER_PC);
    REAL(recvfrom, fd, buf, n, flags, a, l);
}
EXPORT ssize_t recvmsg(int fd, struct msghdr *m, int flags) {
    input_fence(CALLER_PC);
    REAL(recvmsg, fd, m, flags);
}
EXPORT size_t fread(void *buf, size_t size, size_t n, FILE *f) {
    input_fence(CALLER_PC);
    REAL(fread, buf, size, n, f);
}
EXPORT char *fgets(char *s, int n, FILE *f) {
    input_fence(CALLER_PC);
    REAL(fgets, s, n, f);
}

/* ---- descriptors and the output ---- */

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

void on_sys(int sig, siginfo_t *si, void *ucv) {
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

/* Bytes the execution wrote to the capture file (fds 1 and 2 share its offset); the next
 * execution writes from its start (the checker reads these bytes before it begins). */
void note_output(void) {
    /* with the output watched, no call it stopped means the offset is still 0 */
    off_t end = g_output_watched && !g_fds_touched ? 0 : lseek(1, 0, SEEK_CUR);
    g_output_seen |= end != 0;
    STORE(&ch->out_len, end < 0 ? 0 : (uint64_t)end);
    if (end != 0) lseek(1, 0, SEEK_SET);
}

/* ---- the dynamic loader ---- */

/* How many objects the dynamic loader has loaded and unloaded so far (one callback). */
static int loader_counts(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    uint64_t *out = data;
    out[0] = info->dlpi_adds;
    out[1] = info->dlpi_subs;
    return 1;
}

static uint64_t g_loader_counts[2]; /* at the snapshot */

void keep_loader_at_main(void) { dl_iterate_phdr(loader_counts, g_loader_counts); }

/* Whether an execution loaded or unloaded an object (dlopen, dlclose): the loader's state is
 * not put back, only the heap it points into, so this worker must not run another. */
static int loader_changed(void) {
    uint64_t now[2] = {0, 0};
    dl_iterate_phdr(loader_counts, now);
    return now[0] != g_loader_counts[0] || now[1] != g_loader_counts[1];
}

/* ---- after an execution ---- */

/* After an execution: note its output and put the process back as the snapshot has it.
 * 0 when this worker cannot run another execution. */
int co_reset(int captured) {
    if (captured) note_output();
    int last = loader_changed() || !unmap_execution_maps() || !restore_cwd();
    restore_signals();
    reset_time_and_randomness();
    g_restore_pending = !last;
    return !last;
}

/* The memory restore of co_reset, put off until the next execution starts: the engine's work
 * between two executions (the end's analysis, the next branch, a checkpoint) then finds its
 * state still in the cache, which the restore's ~100 KB of copies and checks would have
 * evicted. Neither the engine nor the runtime reads the program's memory in between. */
void restore_if_pending(void) {
    if (!g_restore_pending) return;
    g_restore_pending = 0;
    smc_snapshot_restore(!g_fdwatch_on || g_fds_touched);
    g_fds_touched = 0;
    fdwatch_count_down();
}

