/* x86-64 coroutines: the program's threads as coroutines of one OS thread (glibc, SysV ABI).
 *
 * A switch saves what a called function must preserve (rbx, rbp, r12-r15, the stack pointer,
 * and the MXCSR and x87 control words, which are per thread under real pthreads) and loads the
 * other coroutine's, together with its thread pointer (fs base, by wrfsbase: a system call per
 * switch would cost more than the rest of an execution). Each coroutine but the first gets a
 * copy of the main thread's static TLS block and thread control block, so that __thread
 * variables, errno and pthread_self() are its own.
 *
 * Defines the switch and the TLS layout's state: included by one file of the runtime
 * (threads.c). */
#ifndef SMC_CORO_H
#define SMC_CORO_H
#include <stdint.h>
#include <sys/auxv.h>

#include "arch.h" /* SMC_VECTOR_INIT */

#ifndef HWCAP2_FSGSBASE
#define HWCAP2_FSGSBASE (1 << 1)
#endif

/* smc_coro_switch(&save_sp, load_sp, load_fs, program): suspends the caller, resumes the other
 * one (`program`: a thread of the program, not the host, whose wide vector state is put back in
 * its initial state; co_switch passes 0 for a program that uses none, smc_hook_sse_only). */
__asm__(".text\n"
        ".globl smc_coro_switch\n"
        ".hidden smc_coro_switch\n"
        ".type smc_coro_switch,@function\n"
        "smc_coro_switch:\n"
        "  push %rbp\n push %rbx\n push %r12\n push %r13\n push %r14\n push %r15\n"
        "  sub $8,%rsp\n"
        "  stmxcsr (%rsp)\n"
        "  fnstcw 4(%rsp)\n"
        "  mov (%rsp),%r8d\n"
        "  movzwl 4(%rsp),%r9d\n"
        "  mov %rsp,(%rdi)\n"
        "  mov %rsi,%rsp\n"
        "  wrfsbase %rdx\n"
        /* resuming a program thread (rcx): vector registers are the caller's to save across a
         * call, so they are left in their initial state, and the thread does not carry the
         * host's (AVX-512 memcpy) into its next hook, which would then have to save them all */
        "  test %ecx,%ecx\n"
        "  jz 22f\n"
        SMC_VECTOR_INIT
        "22:\n"
        /* (loading a control word costs more than comparing it: most switches keep both) */
        "  cmp (%rsp),%r8d\n"
        "  jne 23f\n"
        "  cmp 4(%rsp),%r9w\n"
        "  je 24f\n"
        "23:\n"
        "  ldmxcsr (%rsp)\n"
        "  fldcw 4(%rsp)\n"
        "24:\n"
        "  add $8,%rsp\n"
        "  pop %r15\n pop %r14\n pop %r13\n pop %r12\n pop %rbx\n pop %rbp\n"
        /* leave nothing of the other coroutine in the scratch registers: the await-loop hash
         * of a load reads the registers the program did not set since its last call */
        "  xor %eax,%eax\n xor %ecx,%ecx\n xor %edx,%edx\n xor %esi,%esi\n xor %edi,%edi\n"
        "  xor %r8d,%r8d\n xor %r9d,%r9d\n xor %r10d,%r10d\n xor %r11d,%r11d\n"
        "  ret\n"
        ".size smc_coro_switch, .-smc_coro_switch\n"
        /* A new coroutine's first switch returns here, with its entry function in r12. */
        ".globl smc_coro_start\n"
        ".hidden smc_coro_start\n"
        ".type smc_coro_start,@function\n"
        "smc_coro_start:\n"
        "  .cfi_startproc\n"
        "  .cfi_undefined rip\n" /* unwinders stop here */
        "  xor %ebp,%ebp\n"
        "  call *%r12\n"
        "  ud2\n"
        "  .cfi_endproc\n"
        ".size smc_coro_start, .-smc_coro_start\n");
void smc_coro_switch(uint64_t *save_sp, uint64_t load_sp, uint64_t load_fs, int program);
void smc_coro_start(void);

/* The stack pointer a new coroutine starts with: a frame smc_coro_switch pops into
 * smc_coro_start, which calls `entry` (it must not return) with the stack 16-byte aligned. */
static inline uint64_t smc_coro_frame(uint64_t stack_hi, void (*entry)(void)) {
    uint64_t *sp = (uint64_t *)(uintptr_t)(stack_hi & ~15ULL); /* rsp after the ret */
    *--sp = (uint64_t)(uintptr_t)smc_coro_start;
    *--sp = 0;                               /* rbp */
    *--sp = 0;                               /* rbx */
    *--sp = (uint64_t)(uintptr_t)entry;      /* r12 */
    *--sp = 0;                               /* r13 */
    *--sp = 0;                               /* r14 */
    *--sp = 0;                               /* r15 */
    *--sp = 0x1f80 | (0x037fULL << 32);      /* MXCSR and x87 control word of a new thread */
    return (uint64_t)(uintptr_t)sp;
}

static inline uint64_t smc_thread_pointer(void) {
    uint64_t tp;
    __asm__ volatile("mov %%fs:0,%0" : "=r"(tp));
    return tp;
}

/* glibc's static TLS layout (variant II: the blocks lie below the thread pointer, the thread
 * descriptor `struct pthread` at it, beginning with tcbhead_t: tcb, dtv, self). */
#define SMC_TLS_DTV_SLOT(tp) ((smc_dtv_t **)(uintptr_t)((tp) + 8))
#include "tls.h"

/* Learn the layout; 0 when coroutines cannot have TLS of their own here. */
static inline int smc_tls_init(void) {
    if (!(getauxval(AT_HWCAP2) & HWCAP2_FSGSBASE)) return 0;
    void (*info)(size_t *, size_t *) = (void (*)(size_t *, size_t *))dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info");
    const unsigned *tcb_size = dlsym(RTLD_DEFAULT, "_thread_db_sizeof_pthread");
    if (!info || !tcb_size) return 0;
    size_t static_size = 0;
    info(&static_size, &smc_tls.align);
    smc_tls.main_tp = smc_thread_pointer();
    smc_tls.main_self = (char *)(uintptr_t)smc_tls.main_tp;
    smc_tls.lo = (char *)(uintptr_t)smc_tls.main_tp + *tcb_size - static_size;
    smc_tls.hi = (char *)(uintptr_t)smc_tls.main_tp + *tcb_size;
    return smc_tls_learn(*tcb_size);
}

/* The copy's tcbhead_t: its tcb and self pointers. */
static inline void smc_tls_fix_tcb(uint64_t tp) {
    uint64_t *tcb = (uint64_t *)(uintptr_t)tp;
    tcb[0] = tp; /* tcbhead_t.tcb */
    tcb[2] = tp; /* tcbhead_t.self: pthread_self() */
}

#endif
