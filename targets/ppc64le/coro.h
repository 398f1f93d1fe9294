/* ppc64le coroutines: the program's threads as coroutines of one OS thread (glibc, ELFv2).
 *
 * A switch saves what a called function must preserve (r2, r14-r31, f14-f31, v20-v31, the
 * condition register, the link register, and FPSCR, which is per thread under real pthreads)
 * and loads the other coroutine's, together with its thread pointer: r13, an ordinary
 * register, so a switch costs no system call (under qemu-user nothing else holds it). Each
 * coroutine but the first gets a copy of the main thread's thread descriptor and static TLS
 * blocks (runtime/tls.h), so that __thread variables, errno and pthread_self() are its own.
 *
 * Defines the switch and the TLS layout's state: included by one file of the runtime
 * (threads.c). */
#ifndef SMC_CORO_H
#define SMC_CORO_H
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "arch.h"

/* The switch's frame: the ABI's header (back chain, CR, LR and TOC slots of the caller), then
 * what it saves. Vector registers need 16-byte-aligned slots. */
#define SMC_CORO_FRAME 544
#define SMC_CORO_R2 32
#define SMC_CORO_GPR 40 /* r14..r31 */
#define SMC_CORO_CR 184
#define SMC_CORO_LR 192
#define SMC_CORO_FPSCR 200
#define SMC_CORO_FPR 208 /* f14..f31 */
#define SMC_CORO_VR 352  /* v20..v31 */

/* smc_coro_switch(&save_sp, load_sp, load_tp, program): suspends the caller, resumes the other
 * one (`program` is for x86-64's vector state; POWER's needs nothing). */
__asm__(".text\n"
        ".globl smc_coro_switch\n"
        ".hidden smc_coro_switch\n"
        ".type smc_coro_switch,@function\n"
        "smc_coro_switch:\n"
        "  mflr 0\n"
        "  mfcr 12\n"
        "  stdu 1,-" SMC_STR(SMC_CORO_FRAME) "(1)\n"
        "  std 0," SMC_STR(SMC_CORO_LR) "(1)\n"
        "  std 12," SMC_STR(SMC_CORO_CR) "(1)\n"
        "  std 2," SMC_STR(SMC_CORO_R2) "(1)\n"
        "  .irp r,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n"
        "  std \\r," SMC_STR(SMC_CORO_GPR) "-112+\\r*8(1)\n"
        "  stfd \\r," SMC_STR(SMC_CORO_FPR) "-112+\\r*8(1)\n"
        "  .endr\n"
        "  mffs 0\n"
        "  stfd 0," SMC_STR(SMC_CORO_FPSCR) "(1)\n"
        "  .irp v,20,21,22,23,24,25,26,27,28,29,30,31\n"
        "  li 0," SMC_STR(SMC_CORO_VR) "-320+\\v*16\n"
        "  stvx \\v,1,0\n"
        "  .endr\n"
        "  std 1,0(3)\n"
        "  mr 1,4\n"
        "  mr 13,5\n"
        "  .irp v,20,21,22,23,24,25,26,27,28,29,30,31\n"
        "  li 0," SMC_STR(SMC_CORO_VR) "-320+\\v*16\n"
        "  lvx \\v,1,0\n"
        "  .endr\n"
        "  lfd 0," SMC_STR(SMC_CORO_FPSCR) "(1)\n"
        "  mtfsf 0xff,0\n"
        "  .irp r,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n"
        "  ld \\r," SMC_STR(SMC_CORO_GPR) "-112+\\r*8(1)\n"
        "  lfd \\r," SMC_STR(SMC_CORO_FPR) "-112+\\r*8(1)\n"
        "  .endr\n"
        "  ld 2," SMC_STR(SMC_CORO_R2) "(1)\n"
        "  ld 0," SMC_STR(SMC_CORO_LR) "(1)\n"
        "  ld 12," SMC_STR(SMC_CORO_CR) "(1)\n"
        "  mtlr 0\n"
        "  mtcrf 0xff,12\n"
        "  addi 1,1," SMC_STR(SMC_CORO_FRAME) "\n"
        /* leave nothing of the other coroutine in the volatile registers: the await-loop hash
         * of a load reads the registers the program did not set since its last call */
        "  .irp r,0,3,4,5,6,7,8,9,10,11,12\n"
        "  li \\r,0\n"
        "  .endr\n"
        "  blr\n"
        ".size smc_coro_switch, .-smc_coro_switch\n"
        /* A new coroutine's first switch returns here, with its entry function in r14. */
        ".globl smc_coro_start\n"
        ".hidden smc_coro_start\n"
        ".type smc_coro_start,@function\n"
        "smc_coro_start:\n"
        "  .cfi_startproc\n"
        "  .cfi_undefined 65\n" /* the link register: unwinders stop here */
        "  mr 12,14\n"
        "  mtctr 12\n"
        "  bctrl\n"
        "  trap\n"
        "  .cfi_endproc\n"
        ".size smc_coro_start, .-smc_coro_start\n");
void smc_coro_switch(uint64_t *save_sp, uint64_t load_sp, uint64_t load_tp, int program);
void smc_coro_start(void);

/* The stack pointer a new coroutine starts with: a frame smc_coro_switch pops into
 * smc_coro_start, which calls `entry` (it must not return) with a minimal frame header above
 * its stack pointer and a null back chain. */
static inline uint64_t smc_coro_frame(uint64_t stack_hi, void (*entry)(void)) {
    uint64_t start_sp = (stack_hi & ~15ULL) - 64;
    *(uint64_t *)(uintptr_t)start_sp = 0;
    uint64_t sp = start_sp - SMC_CORO_FRAME;
    char *f = (char *)(uintptr_t)sp;
    memset(f, 0, SMC_CORO_FRAME);
    *(uint64_t *)(uintptr_t)f = start_sp; /* back chain */
    uint64_t toc;
    __asm__("mr %0,2" : "=r"(toc));
    *(uint64_t *)(f + SMC_CORO_R2) = toc;
    *(uint64_t *)(f + SMC_CORO_GPR) = (uint64_t)(uintptr_t)entry; /* r14 */
    *(uint64_t *)(f + SMC_CORO_LR) = (uint64_t)(uintptr_t)smc_coro_start;
    return sp;
}

static inline uint64_t smc_thread_pointer(void) {
    uint64_t tp;
    __asm__ volatile("mr %0,13" : "=r"(tp));
    return tp;
}

/* glibc's static TLS layout on POWER (variant I): the thread pointer is 0x7000 past the start
 * of the static TLS blocks; right below that start lies tcbhead_t, whose last member is the
 * DTV, and below it the descriptor `struct pthread` (pthread_self()). */
#define SMC_TLS_TCB_OFFSET 0x7000
#define SMC_TLS_DTV_SLOT(tp) ((smc_dtv_t **)(uintptr_t)((tp) - SMC_TLS_TCB_OFFSET - 8))
#include "tls.h"

/* Learn the layout; 0 when coroutines cannot have TLS of their own here. */
static inline int smc_tls_init(void) {
    void (*info)(size_t *, size_t *) = (void (*)(size_t *, size_t *))dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info");
    const unsigned *tcb_size = dlsym(RTLD_DEFAULT, "_thread_db_sizeof_pthread");
    if (!info || !tcb_size) return 0;
    size_t static_size = 0;
    info(&static_size, &smc_tls.align);
    smc_tls.main_tp = smc_thread_pointer();
    smc_tls.main_self = (char *)pthread_self();
    char *blocks = (char *)(uintptr_t)(smc_tls.main_tp - SMC_TLS_TCB_OFFSET);
    if (smc_tls.main_self + *tcb_size > blocks) return 0;
    smc_tls.lo = smc_tls.main_self;
    smc_tls.hi = blocks + static_size;
    return smc_tls_learn(*tcb_size);
}

/* Nothing in tcbhead_t points at itself on POWER (the stack and pointer guards stay). */
static inline void smc_tls_fix_tcb(uint64_t tp) { (void)tp; }

#endif
