/* The system calls the runtime makes by number, for all of it (runtime/ and the target
 * headers): one list of them, apart from libc's functions, some of which the runtime
 * interposes for the program (sched_yield, sigprocmask, mmap).
 *
 * They go through syscall(), which the runtime interposes too (process.c): it answers
 * SYS_gettid for a coroutine thread, models the program's futex calls (not these: their
 * caller is runtime code) and passes every other number on to libc's. */
#ifndef SMC_SYS_H
#define SMC_SYS_H
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>

static inline long futex(uint32_t *w, int op, uint32_t val, const struct timespec *ts) {
    return syscall(SYS_futex, w, op, val, ts, NULL, 0);
}
static inline void futex_wake_all(uint32_t *w) { futex(w, FUTEX_WAKE, 0x7fffffff, NULL); }

static inline void __attribute__((noreturn)) die_now(int code) {
    syscall(SYS_exit_group, code);
    __builtin_unreachable();
}

/* The kernel's, not the interposed sched_yield (a visible operation in an execution). */
static inline void sys_sched_yield(void) { syscall(SYS_sched_yield); }

static inline pid_t sys_gettid(void) { return (pid_t)syscall(SYS_gettid); }

/* The kernel's sigprocmask, not the interposed one (which keeps the runtime's signals). */
static inline void sys_sigprocmask(int how, const sigset_t *set, sigset_t *old) {
    syscall(SYS_rt_sigprocmask, how, set, old, _NSIG / 8);
}

/* Unblock `sig`: left blocked by a handler that switched away instead of returning. */
static inline void sys_unblock_signal(int sig) {
    sigset_t m;
    sigemptyset(&m);
    sigaddset(&m, sig);
    sys_sigprocmask(SIG_UNBLOCK, &m, NULL);
}

/* An mmap that is not the program's (the interposed mmap keeps an execution's mappings);
 * -1 on failure. */
static inline long sys_mmap(void *addr, size_t len, int prot, int flags, int fd, long off) {
    return syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

/* The break of the heap: moved to `addr`, or asked with NULL. */
static inline char *sys_brk(void *addr) { return (char *)syscall(SYS_brk, addr); }

static inline long sys_getdents64(int fd, void *buf, size_t len) {
    return syscall(SYS_getdents64, fd, buf, len);
}

static inline void sys_close_range(unsigned lo, unsigned hi, unsigned flags) {
    syscall(SYS_close_range, lo, hi, flags);
}

static inline long sys_seccomp(unsigned op, unsigned flags, void *args) {
    return syscall(SYS_seccomp, op, flags, args);
}

#endif
