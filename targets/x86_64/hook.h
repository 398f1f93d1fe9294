/* x86-64 jump hooks: a site whose instruction is at least 5 bytes long is patched with a
 * `jmp rel32` to a stub of its own instead of int3, which costs a kernel entry and a signal
 * frame (~4 us here) per event. The stub calls smc_hook(gregs, site index) through a common
 * entry that saves what the interrupted code may hold (general registers, flags, and the x87,
 * SSE, AVX and AVX-512 state, since the hook calls libc), then runs the site's relocated copy,
 * which jumps back after the instruction.
 *
 * Stub (32 bytes, in the trampoline next to the copies):
 *   lea -128(%rsp),%rsp      skip the interrupted code's red zone
 *   push $index
 *   call *entry(%rip)        the common entry, through a pointer at the start of the stubs
 *   lea 136(%rsp),%rsp       drop the index and the red-zone gap (lea keeps the flags)
 *   jmp copy
 *
 * Defines the common entry and the hooks' state: included by one file of the runtime (trap.c).
 */
#ifndef SMC_HOOK_H
#define SMC_HOOK_H
#include <cpuid.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>

#include "arch.h" /* SMC_VECTOR_INIT, the declarations of the state below */

#define SMC_HOOK_LEN 5       /* bytes a site must have to take a jump */
#define SMC_HOOK_STUB_LEN 32 /* bytes per stub */

/* The hook the stubs call: `gregs` is laid out as ucontext's gregs (REG_R8 ... REG_EFL), with
 * RSP as the interrupted code had it; `index` is the site's index in the site table. */
__attribute__((visibility("hidden"))) void smc_hook(greg_t *gregs, uint32_t index);

/* Components XSAVE saves around the hook: x87, SSE, AVX, AVX-512 (what libc may touch), as
 * far as the OS enabled them; 0 when the CPU has no XSAVE (then int3 serves every site). */
__attribute__((visibility("hidden"))) uint64_t smc_xsave_mask;
/* XGETBV can read XINUSE (which components are not in their initial state). */
__attribute__((visibility("hidden"))) uint8_t smc_xinuse_ok;
/* The program's code uses no x87, MMX, AVX or AVX-512 instruction (SMC_FLAG_SSE_ONLY): at a
 * site it holds nothing there (the ABI has callers keep nothing there across a call), so the
 * hook saves xmm0-15 and MXCSR without asking XINUSE (xgetbv was the costliest instruction of
 * an exploration) and leaves the rest as the hook's own code leaves it. Bit 1 (tests,
 * SMC_HOOK_SCRAMBLE): it then puts the rest in its initial state on the way out, as a hook
 * whose own code used it might leave it, to show that such a program does not mind. */
__attribute__((visibility("hidden"))) uint8_t smc_hook_sse_only;

/* Common entry. On entry: [rsp] return into the stub, [rsp+8] the index, the interrupted rsp is
 * rsp + 16 + 128. Builds gregs (pushed from REG_EFL down to REG_R8), saves the extended state
 * in a 64-byte aligned area below (3072 bytes hold AVX-512's 2696; 272 for SSE-only programs),
 * calls the hook, restores. */
__asm__(".text\n"
        ".globl smc_hook_entry\n"
        ".hidden smc_hook_entry\n"
        ".type smc_hook_entry,@function\n"
        "smc_hook_entry:\n"
        "  pushfq\n"                 /* REG_EFL */
        "  push $0\n"                /* REG_RIP: the hook knows the site */
        "  push $0\n"                /* REG_RSP: filled in below */
        "  push %rcx\n push %rax\n push %rdx\n push %rbx\n push %rbp\n push %rsi\n push %rdi\n"
        "  push %r15\n push %r14\n push %r13\n push %r12\n push %r11\n push %r10\n push %r9\n"
        "  push %r8\n"
        "  lea 288(%rsp),%rax\n"     /* 18 slots + return + index + red zone */
        "  mov %rax,120(%rsp)\n"     /* REG_RSP = 15 */
        "  mov %rsp,%rbx\n"
        /* Only SSE state in use (no x87, AVX or AVX-512 state, XINUSE; or none other used by
         * the program at all, smc_hook_sse_only): save xmm0-15 and MXCSR by hand, r12 = 1 (it
         * is in gregs already; the hook preserves it). XSAVE and XRSTOR cost about the same
         * whatever they carry (~25% of an exploration's time). With smc_hook_sse_only the area
         * is only as large as that (272 bytes, not 3136): the stack a stop uses, which every
         * execution's start clears, is then ~2.8 KB shorter. */
        "  xor %r12d,%r12d\n"
        "  testb $1,smc_hook_sse_only(%rip)\n"
        "  jz 17f\n"
        "  sub $272,%rsp\n"
        "  and $-64,%rsp\n"
        "  jmp 15f\n"
        "17:\n"
        "  sub $3136,%rsp\n"
        "  and $-64,%rsp\n"
        "  testb $1,smc_xinuse_ok(%rip)\n"
        "  jz 10f\n"
        "  mov $1,%ecx\n"
        "  xgetbv\n"
        "  and smc_xsave_mask(%rip),%eax\n"
        "  test $0xe5,%eax\n"
        "  jnz 10f\n"
        "15:\n"
"  movdqa %xmm0,0(%rsp)\n" "  movdqa %xmm1,16(%rsp)\n" "  movdqa %xmm2,32(%rsp)\n" "  movdqa %xmm3,48(%rsp)\n"
"  movdqa %xmm4,64(%rsp)\n" "  movdqa %xmm5,80(%rsp)\n" "  movdqa %xmm6,96(%rsp)\n" "  movdqa %xmm7,112(%rsp)\n"
"  movdqa %xmm8,128(%rsp)\n" "  movdqa %xmm9,144(%rsp)\n" "  movdqa %xmm10,160(%rsp)\n" "  movdqa %xmm11,176(%rsp)\n"
"  movdqa %xmm12,192(%rsp)\n" "  movdqa %xmm13,208(%rsp)\n" "  movdqa %xmm14,224(%rsp)\n" "  movdqa %xmm15,240(%rsp)\n"
        "  stmxcsr 256(%rsp)\n"
        "  mov $1,%r12d\n"
        "  jmp 11f\n"
        "10:\n"
        "  xor %eax,%eax\n"          /* XRSTOR wants a clean header */
        "  mov %rax,512(%rsp)\n mov %rax,520(%rsp)\n mov %rax,528(%rsp)\n mov %rax,536(%rsp)\n"
        "  mov %rax,544(%rsp)\n mov %rax,552(%rsp)\n mov %rax,560(%rsp)\n mov %rax,568(%rsp)\n"
        "  mov smc_xsave_mask(%rip),%eax\n"
        "  xor %edx,%edx\n"
        "  xsave64 (%rsp)\n"
        "11:\n"
        "  cld\n"
        "  mov %rbx,%rdi\n"
        "  mov 152(%rbx),%esi\n"     /* the index: 18 slots + return address above gregs */
        "  call smc_hook\n"
        "  test %r12d,%r12d\n"
        "  jz 12f\n"
        "  testb $1,smc_hook_sse_only(%rip)\n"
        "  jz 16f\n"
        "  testb $2,smc_hook_sse_only(%rip)\n"
        "  jz 13f\n"
        SMC_VECTOR_INIT
        "  fninit\n"
        "  jmp 13f\n"
        "16:\n"
        /* back to the state saved by hand: AVX, AVX-512 and x87 state initial again (zeroed
         * registers count as initial), then xmm0-15 and MXCSR. x87 state was initial on the
         * way in; what code using it between leaves behind is its status word (the stack is
         * empty across calls): reset only if that is not clear (fnstsw costs half of asking
         * XINUSE with xgetbv here) */
        SMC_VECTOR_INIT
        "  fnstsw %ax\n"
        "  test %ax,%ax\n"
        "  jz 13f\n"
        "  fninit\n"
        "13:\n"
"  movdqa 0(%rsp),%xmm0\n" "  movdqa 16(%rsp),%xmm1\n" "  movdqa 32(%rsp),%xmm2\n" "  movdqa 48(%rsp),%xmm3\n"
"  movdqa 64(%rsp),%xmm4\n" "  movdqa 80(%rsp),%xmm5\n" "  movdqa 96(%rsp),%xmm6\n" "  movdqa 112(%rsp),%xmm7\n"
"  movdqa 128(%rsp),%xmm8\n" "  movdqa 144(%rsp),%xmm9\n" "  movdqa 160(%rsp),%xmm10\n" "  movdqa 176(%rsp),%xmm11\n"
"  movdqa 192(%rsp),%xmm12\n" "  movdqa 208(%rsp),%xmm13\n" "  movdqa 224(%rsp),%xmm14\n" "  movdqa 240(%rsp),%xmm15\n"
        "  ldmxcsr 256(%rsp)\n"
        "  jmp 14f\n"
        "12:\n"
        "  mov smc_xsave_mask(%rip),%eax\n"
        "  xor %edx,%edx\n"
        "  xrstor64 (%rsp)\n"
        "14:\n"
        "  mov %rbx,%rsp\n"
        "  pop %r8\n pop %r9\n pop %r10\n pop %r11\n pop %r12\n pop %r13\n pop %r14\n pop %r15\n"
        "  pop %rdi\n pop %rsi\n pop %rbp\n pop %rbx\n pop %rdx\n pop %rax\n pop %rcx\n"
        "  lea 16(%rsp),%rsp\n"      /* REG_RSP, REG_RIP */
        "  popfq\n"
        "  ret\n"
        ".size smc_hook_entry, .-smc_hook_entry\n");
void smc_hook_entry(void);

/* Whether jump hooks can be used (XSAVE enabled by the OS); sets smc_xsave_mask. */
static inline int smc_hooks_init(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE)) return 0;
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    smc_xsave_mask = lo & 0xe7; /* x87, SSE, AVX, opmask, ZMM_Hi256, Hi16_ZMM */
    smc_xinuse_ok = __get_cpuid_count(0xd, 1, &a, &b, &c, &d) && (a & 4);
    return 1;
}

static inline void smc_put_rel32(uint8_t *at, uint64_t next, uint64_t to) {
    int32_t rel = (int32_t)(int64_t)(to - next);
    memcpy(at, &rel, 4);
}

/* Can a `jmp rel32` at `at` reach `to`? */
static inline int smc_reaches(uint64_t at, uint64_t to) {
    int64_t d = (int64_t)(to - (at + 5));
    return d == (int32_t)d;
}

/* Write the stub of site `index` at `stub`; `entry_ptr` holds smc_hook_entry's address. */
static inline void smc_write_stub(uint8_t *stub, uint32_t index, uint64_t entry_ptr, uint64_t copy) {
    static const uint8_t lea_down[8] = {0x48, 0x8d, 0xa4, 0x24, 0x80, 0xff, 0xff, 0xff};
    static const uint8_t lea_up[8] = {0x48, 0x8d, 0xa4, 0x24, 0x88, 0x00, 0x00, 0x00};
    uint64_t at = (uint64_t)(uintptr_t)stub;
    memcpy(stub, lea_down, 8);
    stub[8] = 0x68; /* push imm32 */
    memcpy(stub + 9, &index, 4);
    stub[13] = 0xff; /* call *rel32(%rip) */
    stub[14] = 0x15;
    smc_put_rel32(stub + 15, at + 19, entry_ptr);
    memcpy(stub + 19, lea_up, 8);
    stub[27] = 0xe9; /* jmp rel32 */
    smc_put_rel32(stub + 28, at + 32, copy);
}

/* Patch the instruction at `at` (at least SMC_HOOK_LEN bytes long) to jump to `stub`. */
static inline void smc_write_jump(uint8_t *at, uint64_t stub) {
    at[0] = 0xe9;
    smc_put_rel32(at + 1, (uint64_t)(uintptr_t)at + 5, stub);
}

#endif
