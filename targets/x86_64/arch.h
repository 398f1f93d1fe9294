/* x86-64 facts the runtime needs: the trap instruction and register access in a ucontext.
 * Register numbers are the hardware encoding order used by src/decode (0 = rax ... 15 = r15).
 *
 * Any file of the runtime may include this one: declarations and static inline functions only.
 * hook.h, coro.h and fdwatch.h define code and state (top-level asm, variables), so each is
 * included by one file (trap.c, threads.c, process.c); what another file needs of them is
 * here. */
#ifndef SMC_ARCH_H
#define SMC_ARCH_H
#include <cpuid.h>
#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

#define SMC_ARCH_NAME "x86_64"
#define SMC_TRAP_BYTE 0xCC /* int3 */
#define SMC_TRAP_LEN 1     /* the trap leaves the pc this far past the instruction start */
#define SMC_RED_ZONE 128
#define SMC_CALL_BACK 1 /* a return address minus this is inside the call */
/* rip-relative operands of the relocated copies reach +-2 GiB (the trampoline is mapped
 * within 1 GiB of the text) */
#define SMC_TRAMP_REACH (1ULL << 30)

static inline void smc_write_trap(uint8_t *at) { *at = SMC_TRAP_BYTE; }

static const int smc_greg_index[16] = {
    REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
    REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15,
};

/* Registers as saved in a ucontext's gregs (by the kernel for a trap, by the hook entry for a
 * jump hook). */
static inline uint64_t smc_reg(const greg_t *g, int n) { return (uint64_t)g[smc_greg_index[n]]; }
static inline void smc_set_reg(greg_t *g, int n, uint64_t v) { g[smc_greg_index[n]] = (greg_t)v; }
static inline uint64_t smc_pc(const greg_t *g) { return (uint64_t)g[REG_RIP]; }
static inline void smc_set_pc(greg_t *g, uint64_t pc) { g[REG_RIP] = (greg_t)pc; }
static inline uint64_t smc_sp(const greg_t *g) { return smc_reg(g, 4); }
/* At a function's first instruction: where it returns to (0 if unreadable). */
/* A function's first argument, at its entry (rdi). */
static inline uint64_t smc_arg0(const greg_t *g) { return smc_reg(g, 7); }
static inline uint64_t smc_entry_return_address(const greg_t *g) {
    uint64_t sp = smc_sp(g), ret = 0;
    if (sp >= 4096) __builtin_memcpy(&ret, (const void *)(uintptr_t)sp, 8);
    return ret;
}
/* The calling thread's fs base (the thread pointer: glibc's TCB starts with a pointer to
 * itself), which an fs-based operand adds to its address. */
static inline uint64_t smc_fs_base(void) {
    uint64_t tp;
    __asm__("mov %%fs:0, %0" : "=r"(tp));
    return tp;
}
/* The accumulator: the expected value of cmpxchg (rax) and its high half for cmpxchg16b (rdx). */
static inline uint64_t smc_acc(const greg_t *g) { return smc_reg(g, 0); }
static inline uint64_t smc_acc_hi(const greg_t *g) { return smc_reg(g, 2); }
/* What `cmpxchg` (0F B0/B1; `insn` its bytes, prefixes first) writes if memory holds the
 * accumulator: its register operand, of `size` bytes. 0 where `insn` is not one (cmpxchg8b
 * and cmpxchg16b write rcx:rbx, read otherwise). */
static inline int smc_cmpxchg_source(const uint8_t *insn, const greg_t *g, uint64_t size, uint64_t *out) {
    unsigned i = 0, rex = 0;
    while (i < 14 && (insn[i] == 0xf0 || insn[i] == 0x66 || insn[i] == 0x67 || insn[i] == 0xf2 ||
                      insn[i] == 0xf3 || insn[i] == 0x2e || insn[i] == 0x36 || insn[i] == 0x3e ||
                      insn[i] == 0x26 || insn[i] == 0x64 || insn[i] == 0x65))
        i++;
    if ((insn[i] & 0xf0) == 0x40) rex = insn[i++];
    if (insn[i] != 0x0f || (insn[i + 1] != 0xb0 && insn[i + 1] != 0xb1)) return 0;
    int reg = ((insn[i + 2] >> 3) & 7) | ((rex & 4) ? 8 : 0);
    uint64_t v = smc_reg(g, reg);
    /* (a byte operand without REX: 4-7 are ah, ch, dh, bh) */
    if (size == 1 && !rex && reg >= 4) v = smc_reg(g, reg - 4) >> 8;
    *out = size >= 8 ? v : v & ((1ull << (8 * size)) - 1);
    return 1;
}
static inline greg_t *smc_gregs(ucontext_t *uc) { return uc->uc_mcontext.gregs; }
#define SMC_NGPR 16

/* Whether [p, p + n) is all zero, 32 bytes at a time: the restore reads most of libc's .bss
 * after every execution, and AVX2 reads it in about half the time of SSE2 here. Only where
 * smc_wide_zero_usable() says so (the runtime is built for baseline x86-64). */
#define SMC_HAVE_WIDE_ZERO 1
typedef long long smc_v4 __attribute__((vector_size(32), aligned(1)));
__attribute__((target("avx2"))) static inline int smc_all_zero_wide(const char *p, size_t n) {
    smc_v4 a = {0}, b = {0}, c = {0}, d = {0};
    size_t i = 0;
    for (; i + 128 <= n; i += 128) {
        a |= *(const smc_v4 *)(p + i);
        b |= *(const smc_v4 *)(p + i + 32);
        c |= *(const smc_v4 *)(p + i + 64);
        d |= *(const smc_v4 *)(p + i + 96);
    }
    for (; i + 32 <= n; i += 32) a |= *(const smc_v4 *)(p + i);
    a |= b | c | d;
    int z = __builtin_ia32_ptestz256(a, a);
    for (; i < n; i++) z &= p[i] == 0;
    return z;
}

/* AVX2 in the processor and its YMM state enabled by the OS. */
static inline int smc_wide_zero_usable(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) || !(c & bit_AVX)) return 0;
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & 6) != 6) return 0; /* SSE and AVX state */
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX2);
}

/* The state of the jump hooks, defined by the hook entry (hook.h, see there) and read by the
 * coroutine switch (coro.h, co_switch). */
extern __attribute__((visibility("hidden"))) uint64_t smc_xsave_mask;
extern __attribute__((visibility("hidden"))) uint8_t smc_hook_sse_only;

/* Put the AVX and AVX-512 registers in their initial state, as far as smc_xsave_mask says
 * the OS enabled them: vzeroupper, and zeroed zmm16-31 and k0-7 (which this processor
 * counts as initial: the hook's XINUSE test then takes its fast path). Clobbers eax. */
#define SMC_VECTOR_INIT                                                                           \
    "  mov smc_xsave_mask(%rip),%eax\n"                                                          \
    "  test $4,%eax\n"                                                                           \
    "  jz 20f\n"                                                                                 \
    "  vzeroupper\n"                                                                             \
    "  test $0xe0,%eax\n"                                                                        \
    "  jz 20f\n"                                                                                 \
    "  vpxord %zmm16,%zmm16,%zmm16\n vpxord %zmm17,%zmm17,%zmm17\n"                               \
    "  vpxord %zmm18,%zmm18,%zmm18\n vpxord %zmm19,%zmm19,%zmm19\n"                               \
    "  vpxord %zmm20,%zmm20,%zmm20\n vpxord %zmm21,%zmm21,%zmm21\n"                               \
    "  vpxord %zmm22,%zmm22,%zmm22\n vpxord %zmm23,%zmm23,%zmm23\n"                               \
    "  vpxord %zmm24,%zmm24,%zmm24\n vpxord %zmm25,%zmm25,%zmm25\n"                               \
    "  vpxord %zmm26,%zmm26,%zmm26\n vpxord %zmm27,%zmm27,%zmm27\n"                               \
    "  vpxord %zmm28,%zmm28,%zmm28\n vpxord %zmm29,%zmm29,%zmm29\n"                               \
    "  vpxord %zmm30,%zmm30,%zmm30\n vpxord %zmm31,%zmm31,%zmm31\n"                               \
    "  kxorw %k0,%k0,%k0\n kxorw %k1,%k1,%k1\n kxorw %k2,%k2,%k2\n kxorw %k3,%k3,%k3\n"           \
    "  kxorw %k4,%k4,%k4\n kxorw %k5,%k5,%k5\n kxorw %k6,%k6,%k6\n kxorw %k7,%k7,%k7\n"           \
    "20:\n"

/* Zero the 256 bytes below the stack pointer: what the calls of a function that is not a leaf
 * left there (nothing live lies there). A stop's own calls write 64 bytes below smc_stop's
 * frame, whichever way it waits (measured); 16-byte stores, as a `rep stos` costs more to
 * start than this takes. */
static inline __attribute__((always_inline)) void smc_clear_below_sp(void) {
    __asm__ volatile("pxor %%xmm0,%%xmm0\n"
                     ".irp off,16,32,48,64,80,96,112,128,144,160,176,192,208,224,240,256\n"
                     "movups %%xmm0,-\\off(%%rsp)\n"
                     ".endr\n"
                     :
                     :
                     : "xmm0", "memory");
}

#endif
