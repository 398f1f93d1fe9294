/* x86-64: knowing without a system call whether an execution may have opened a descriptor.
 *
 * The worker closes what an execution opened with close_range after it, and the kernel walks
 * the whole descriptor table for that (~1 us here, a tenth of a small execution). Instead, a
 * seccomp filter lets through every system call that cannot create a descriptor, and the
 * kernel caches that answer per call number (no filter runs for them). Every other call
 * (open, socket, dup, fcntl's F_DUPFD, ioctl, recvmsg, and any call the list does not know)
 * raises SIGSYS: the handler notes that descriptors may have been opened and makes the call
 * itself, through a gate whose address the filter lets through, so the program sees the call's
 * result as it would have. Calls that cannot be made from inside a handler (a clone sharing
 * memory or on a new stack) get ENOSYS, as from a kernel without them (glibc falls back).
 *
 * It can watch the output too: the calls that write through, read through or move the
 * offset of descriptors 1 and 2 (the capture file's, which the worker asks with lseek after
 * every execution otherwise) then raise SIGSYS as well; for other descriptors they go
 * through, after a look at the descriptor.
 *
 * Defines the gates and the filter's code: included by one file of the runtime (process.c). */
#ifndef SMC_FDWATCH_H
#define SMC_FDWATCH_H
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "sys.h"

#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1
#endif

/* In si_errno of the SIGSYS this filter raises (a program's own filter raises others). */
#define SMC_FDWATCH_DATA 0x5ec

/* smc_fdwatch_gate(nr, a1..a6): the system call, as the 64-bit ABI makes it; returns what the
 * kernel returned. smc_fdwatch_gate32(nr, a1..a6): the same through int $0x80 (i386 ABI). */
__asm__(".text\n"
        ".type smc_fdwatch_gate,@function\n"
        "smc_fdwatch_gate:\n"
        "  mov %rdi,%rax\n mov %rsi,%rdi\n mov %rdx,%rsi\n mov %rcx,%rdx\n"
        "  mov %r8,%r10\n mov %r9,%r8\n mov 8(%rsp),%r9\n"
        "  syscall\n"
        "smc_fdwatch_gate_end:\n"
        "  ret\n"
        ".size smc_fdwatch_gate, .-smc_fdwatch_gate\n"
        ".type smc_fdwatch_gate32,@function\n"
        "smc_fdwatch_gate32:\n"
        "  push %rbx\n push %rbp\n"
        "  mov %rdi,%rax\n mov %rsi,%rbx\n xchg %rcx,%rdx\n"
        "  mov %r8,%rsi\n mov %r9,%rdi\n mov 24(%rsp),%rbp\n"
        "  int $0x80\n"
        "smc_fdwatch_gate32_end:\n"
        "  pop %rbp\n pop %rbx\n"
        "  ret\n"
        ".size smc_fdwatch_gate32, .-smc_fdwatch_gate32\n");
long smc_fdwatch_gate(long nr, long a1, long a2, long a3, long a4, long a5, long a6);
long smc_fdwatch_gate32(long nr, long a1, long a2, long a3, long a4, long a5, long a6);
extern const char smc_fdwatch_gate_end[], smc_fdwatch_gate32_end[];

/* Calls that cannot create a descriptor (nor replace one), let through without a look. */
static const int smc_fdwatch_harmless[] = {
    SYS_read, SYS_write, SYS_close, SYS_fstat, SYS_stat, SYS_lstat, SYS_newfstatat, SYS_statx,
    SYS_lseek, SYS_mmap, SYS_mprotect, SYS_munmap, SYS_brk, SYS_mremap, SYS_msync, SYS_mincore,
    SYS_madvise, SYS_mlock, SYS_munlock, SYS_rt_sigaction, SYS_rt_sigprocmask, SYS_rt_sigreturn,
    SYS_rt_sigpending, SYS_rt_sigtimedwait, SYS_rt_sigsuspend, SYS_sigaltstack, SYS_pread64,
    SYS_pwrite64, SYS_readv, SYS_writev, SYS_preadv, SYS_pwritev, SYS_preadv2, SYS_pwritev2,
    SYS_access, SYS_faccessat, SYS_faccessat2, SYS_readlink, SYS_readlinkat, SYS_getcwd,
    SYS_chdir, SYS_fchdir, SYS_getdents64, SYS_fsync, SYS_fdatasync, SYS_ftruncate,
    SYS_sched_yield, SYS_sched_getaffinity, SYS_sched_setaffinity, SYS_nanosleep,
    SYS_clock_nanosleep, SYS_clock_gettime, SYS_clock_getres, SYS_gettimeofday, SYS_time,
    SYS_times, SYS_getpid, SYS_getppid, SYS_gettid, SYS_getuid, SYS_geteuid, SYS_getgid,
    SYS_getegid, SYS_getpgrp, SYS_getrlimit, SYS_prlimit64, SYS_getrusage, SYS_sysinfo,
    SYS_uname, SYS_getrandom, SYS_kill, SYS_tgkill, SYS_tkill, SYS_pause, SYS_futex,
    SYS_set_robust_list, SYS_get_robust_list, SYS_set_tid_address, SYS_rseq, SYS_restart_syscall,
    SYS_exit, SYS_exit_group, SYS_poll, SYS_ppoll, SYS_select, SYS_pselect6, SYS_getitimer,
    SYS_setitimer, SYS_alarm, SYS_close_range, SYS_membarrier, SYS_umask, SYS_fork, SYS_vfork,
    SYS_arch_prctl, SYS_wait4, SYS_waitid, SYS_unlink, SYS_unlinkat, SYS_mkdir, SYS_mkdirat,
    SYS_rmdir, SYS_rename, SYS_renameat, SYS_fadvise64, SYS_getpriority, SYS_setpriority,
    SYS_sched_getparam, SYS_sched_getscheduler, SYS_sched_get_priority_max,
    SYS_sched_get_priority_min,
};
#define SMC_FDWATCH_NHARMLESS (sizeof smc_fdwatch_harmless / sizeof smc_fdwatch_harmless[0])

/* Harmless calls that use a descriptor's offset or write to it: what watching the output
 * looks at (descriptors 1 and 2). Others that could (sendfile, splice, copy_file_range, tee,
 * io_uring) are not harmless anyway. */
static const int smc_fdwatch_positioned[] = {
    SYS_read,  SYS_write,  SYS_lseek,   SYS_readv,  SYS_writev,  SYS_pread64,
    SYS_pwrite64, SYS_preadv, SYS_pwritev, SYS_preadv2, SYS_pwritev2,
};
#define SMC_FDWATCH_NPOSITIONED (sizeof smc_fdwatch_positioned / sizeof smc_fdwatch_positioned[0])

/* A filter program with forward jumps to labels, resolved when it is done. */
#define SMC_BPF_MAX (SMC_FDWATCH_NHARMLESS * 2 + 64)
#define SMC_BPF_LABELS 128
struct smc_bpf {
    struct sock_filter f[SMC_BPF_MAX];
    unsigned n;
    /* per instruction: labels its true and false branches go to (-1: the next one) */
    short jt[SMC_BPF_MAX], jf[SMC_BPF_MAX];
    unsigned at[SMC_BPF_LABELS]; /* where each label is */
    int labels;                  /* labels handed out */
};

static void smc_bpf_ld(struct smc_bpf *b, uint32_t off) {
    b->jt[b->n] = b->jf[b->n] = -1;
    b->f[b->n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, off);
}
static void smc_bpf_ret(struct smc_bpf *b, uint32_t v) {
    b->jt[b->n] = b->jf[b->n] = -1;
    b->f[b->n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, v);
}
/* if (A op k) goto label t else goto label f (-1: the next instruction) */
static void smc_bpf_jump(struct smc_bpf *b, uint16_t op, uint32_t k, int t, int f) {
    b->jt[b->n] = (short)t;
    b->jf[b->n] = (short)f;
    b->f[b->n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | op | BPF_K, k, 0, 0);
}
static void smc_bpf_label(struct smc_bpf *b, int label) { b->at[label] = b->n; }
/* 0 when a jump is too long for the 8-bit offsets. */
static int smc_bpf_resolve(struct smc_bpf *b) {
    if (b->labels > SMC_BPF_LABELS) return 0;
    for (unsigned i = 0; i < b->n; i++) {
        if (BPF_CLASS(b->f[i].code) != BPF_JMP) continue;
        unsigned t = b->jt[i] >= 0 ? b->at[b->jt[i]] - i - 1 : 0;
        unsigned f = b->jf[i] >= 0 ? b->at[b->jf[i]] - i - 1 : 0;
        if (BPF_OP(b->f[i].code) == BPF_JA) { /* unconditional: the offset is k */
            b->f[i].k = t;
            continue;
        }
        if (t > 255 || f > 255) return 0;
        b->f[i].jt = (uint8_t)t;
        b->f[i].jf = (uint8_t)f;
    }
    return 1;
}

#define SMC_SD(field) ((uint32_t)offsetof(struct seccomp_data, field))

/* Jump to `yes` if the call number (in A) is one of nums[0..n) (sorted), else fall through:
 * a search tree, so that a call is sorted out in a few comparisons (and the kernel's check of
 * the filter per call number, when it is installed, stays short). */
static void smc_bpf_one_of(struct smc_bpf *b, const int *nums, unsigned n, int yes) {
    if (n <= 4) {
        for (unsigned i = 0; i < n; i++) smc_bpf_jump(b, BPF_JEQ, (uint32_t)nums[i], yes, -1);
        return;
    }
    int right = b->labels++, done = b->labels++;
    unsigned mid = n / 2;
    smc_bpf_jump(b, BPF_JGE, (uint32_t)nums[mid], right, -1);
    smc_bpf_one_of(b, nums, mid, yes);
    smc_bpf_jump(b, BPF_JA, 0, done, done); /* BPF_JA takes its offset from k, see resolve */
    smc_bpf_label(b, right);
    smc_bpf_one_of(b, nums + mid, n - mid, yes);
    smc_bpf_label(b, done);
}

/* Jump to `yes` if the call was made at `ip` (after its instruction: a gate's end), else to
 * `no`. */
static void smc_bpf_ip_is(struct smc_bpf *b, uint64_t ip, int yes, int no) {
    smc_bpf_ld(b, SMC_SD(instruction_pointer));
    smc_bpf_jump(b, BPF_JEQ, (uint32_t)ip, -1, no);
    smc_bpf_ld(b, SMC_SD(instruction_pointer) + 4);
    smc_bpf_jump(b, BPF_JEQ, (uint32_t)(ip >> 32), yes, no);
}

static int smc_int_cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* smc_bpf_one_of for call numbers in any order (at most SMC_FDWATCH_NHARMLESS of them). */
static void smc_bpf_one_of_list(struct smc_bpf *b, const int *list, unsigned n, int yes) {
    int nums[SMC_FDWATCH_NHARMLESS];
    memcpy(nums, list, n * sizeof nums[0]);
    qsort(nums, n, sizeof nums[0], smc_int_cmp);
    smc_bpf_one_of(b, nums, n, yes);
}

/* Install the filter (for this process, for good), watching the output too if `output`. 1
 * when it is on. The harmless calls come first and look at nothing but the ABI and the
 * number, so that the kernel caches them (all but the positioned ones, when the output is
 * watched). */
static int smc_fdwatch_install(int output) {
    enum { GATES, ARGS, ALLOW, TRAP, GATE32, CLONE, HARMLESS, POSITIONED, OUT_FD, OUT_ALLOW, OUT_TRAP };
    static struct smc_bpf b; /* too large for a thread's stack frame to be comfortable */
    b.n = 0;
    b.labels = OUT_TRAP + 1;
    const uint32_t trap = SECCOMP_RET_TRAP | SMC_FDWATCH_DATA;
    uint64_t gate = (uint64_t)(uintptr_t)smc_fdwatch_gate_end;
    uint64_t gate32 = (uint64_t)(uintptr_t)smc_fdwatch_gate32_end;
    smc_bpf_ld(&b, SMC_SD(arch));
    smc_bpf_jump(&b, BPF_JEQ, AUDIT_ARCH_X86_64, -1, GATES);
    smc_bpf_ld(&b, SMC_SD(nr));
    if (output) {
        smc_bpf_one_of_list(&b, smc_fdwatch_positioned, SMC_FDWATCH_NPOSITIONED, POSITIONED);
        smc_bpf_jump(&b, BPF_JA, 0, HARMLESS, HARMLESS);
        /* the descriptor is an int: the low word of the argument; the handler's own calls
         * through the gate go through (the answers are here: the ones at the end are too far
         * for a jump) */
        smc_bpf_label(&b, POSITIONED);
        smc_bpf_ld(&b, SMC_SD(args[0]));
        smc_bpf_jump(&b, BPF_JEQ, 1, OUT_FD, -1);
        smc_bpf_jump(&b, BPF_JEQ, 2, OUT_FD, OUT_ALLOW);
        smc_bpf_label(&b, OUT_FD);
        smc_bpf_ip_is(&b, gate, OUT_ALLOW, OUT_TRAP);
        smc_bpf_label(&b, OUT_ALLOW);
        smc_bpf_ret(&b, SECCOMP_RET_ALLOW);
        smc_bpf_label(&b, OUT_TRAP);
        smc_bpf_ret(&b, trap);
        smc_bpf_label(&b, HARMLESS);
    }
    smc_bpf_one_of_list(&b, smc_fdwatch_harmless, SMC_FDWATCH_NHARMLESS, ALLOW);
    /* the handler's own calls */
    smc_bpf_label(&b, GATES);
    smc_bpf_ip_is(&b, gate, ALLOW, GATE32);
    smc_bpf_label(&b, GATE32);
    smc_bpf_ip_is(&b, gate32, ALLOW, ARGS);
    /* fcntl but F_DUPFD and F_DUPFD_CLOEXEC; clone without CLONE_PIDFD; other ABIs and the
     * rest: the handler */
    smc_bpf_label(&b, ARGS);
    smc_bpf_ld(&b, SMC_SD(arch));
    smc_bpf_jump(&b, BPF_JEQ, AUDIT_ARCH_X86_64, -1, TRAP);
    smc_bpf_ld(&b, SMC_SD(nr));
    smc_bpf_jump(&b, BPF_JEQ, SYS_fcntl, -1, CLONE);
    smc_bpf_ld(&b, SMC_SD(args[1]));
    smc_bpf_jump(&b, BPF_JEQ, F_DUPFD, TRAP, -1);
    smc_bpf_jump(&b, BPF_JEQ, F_DUPFD_CLOEXEC, TRAP, ALLOW);
    smc_bpf_label(&b, CLONE);
    smc_bpf_jump(&b, BPF_JEQ, SYS_clone, -1, TRAP);
    smc_bpf_ld(&b, SMC_SD(args[0]));
    smc_bpf_jump(&b, BPF_JSET, CLONE_PIDFD, TRAP, ALLOW);
    smc_bpf_label(&b, ALLOW);
    smc_bpf_ret(&b, SECCOMP_RET_ALLOW);
    smc_bpf_label(&b, TRAP);
    smc_bpf_ret(&b, trap);
    if (!smc_bpf_resolve(&b)) return 0;
    struct sock_fprog prog = {(unsigned short)b.n, b.f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return 0;
    return sys_seccomp(SECCOMP_SET_MODE_FILTER, 0, &prog) == 0;
}

/* Whether a SIGSYS is this filter's (a program's own filter raises others). */
static inline int smc_fdwatch_ours(const siginfo_t *si) {
    return si->si_code == SYS_SECCOMP && si->si_errno == SMC_FDWATCH_DATA;
}

/* Make the call the filter stopped, from its handler, as the program made it: the result is
 * where the kernel would have put it (rax), and the program goes on after the call. clone3,
 * and a clone sharing memory or on a stack of its own (the child would return into this
 * handler), get ENOSYS. */
static void smc_fdwatch_make_call(const siginfo_t *si, greg_t *g) {
    long nr = si->si_syscall;
    if (si->si_arch != AUDIT_ARCH_X86_64) {
        g[REG_RAX] = smc_fdwatch_gate32(nr, g[REG_RBX], g[REG_RCX], g[REG_RDX], g[REG_RSI],
                                        g[REG_RDI], g[REG_RBP]);
        return;
    }
    if (nr == SYS_clone3 ||
        (nr == SYS_clone && ((g[REG_RDI] & (CLONE_VM | CLONE_VFORK)) || g[REG_RSI] != 0))) {
        g[REG_RAX] = -ENOSYS;
        return;
    }
    g[REG_RAX] = smc_fdwatch_gate(nr, g[REG_RDI], g[REG_RSI], g[REG_RDX], g[REG_R10], g[REG_R8],
                                  g[REG_R9]);
}

#endif
