/* ppc64le facts the runtime needs: the trap instruction and register access in a ucontext.
 * Register numbers are the general registers' own (0 = r0 ... 31 = r31); the thread pointer
 * is r13 and the stack pointer r1, so a TLS or stack operand is an ordinary base register.
 *
 * Any file of the runtime may include this one: declarations and static inline functions only.
 * hook.h, coro.h and fdwatch.h define code and state, each included by one file. Under
 * qemu-user, sites are patched with `tw 31,0,0` only and the descriptor watch is off
 * (fdwatch.h). */
#ifndef SMC_ARCH_H
#define SMC_ARCH_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>
#include <asm/ptrace.h>

/* glibc names no type for one saved register on POWER (x86's ucontext has greg_t) */
typedef unsigned long greg_t;

#define SMC_ARCH_NAME "ppc64le"
#define SMC_TRAP_WORD 0x7fe00008u /* tw 31,0,0 */
#define SMC_TRAP_LEN 0            /* the trap leaves the pc at the trapping instruction */
#define SMC_RED_ZONE 288          /* ELFv2's protected zone below r1 */
#define SMC_CALL_BACK 4           /* a return address minus this is the `bl` */
/* The hang signal (rt.h): qemu-user shifts real-time signals between host and guest (7.2: the
 * host's SIGRTMAX is the guest's SIGRTMAX - 2, and the guest's top two do not exist), so the
 * checker sends a standard signal nothing else uses, which arrives as itself. */
#define SMC_HANG_SIGNAL SIGSTKFLT
/* The relocated copies end with a relative branch back: I-form, +-32 MiB. */
#define SMC_TRAMP_REACH (1ULL << 25)

/* A constant as text, for the offsets in assembly (coro.h, hook.h). */
#define SMC_STR_(x) #x
#define SMC_STR(x) SMC_STR_(x)

static inline void smc_write_trap(uint8_t *at) {
    uint32_t w = SMC_TRAP_WORD;
    memcpy(at, &w, 4);
    __builtin___clear_cache((char *)at, (char *)at + 4);
}

static inline uint64_t smc_reg(const greg_t *g, int n) { return (uint64_t)g[n]; }
static inline void smc_set_reg(greg_t *g, int n, uint64_t v) { g[n] = (greg_t)v; }
static inline uint64_t smc_pc(const greg_t *g) { return (uint64_t)g[PT_NIP]; }
static inline void smc_set_pc(greg_t *g, uint64_t pc) { g[PT_NIP] = (greg_t)pc; }
static inline uint64_t smc_sp(const greg_t *g) { return (uint64_t)g[1]; }
/* At a function's first instruction: where it returns to (the link register). */
static inline uint64_t smc_entry_return_address(const greg_t *g) { return (uint64_t)g[PT_LNK]; }
/* A function's first argument, at its entry (r3). */
static inline uint64_t smc_arg0(const greg_t *g) { return smc_reg(g, 3); }
/* No operand adds a segment base on POWER (r13 is a base register like any other). */
static inline uint64_t smc_fs_base(void) { return 0; }
/* No compare-exchange instruction: a larx/stcx. pair is decoded otherwise. */
static inline uint64_t smc_acc(const greg_t *g) { (void)g; return 0; }
static inline uint64_t smc_acc_hi(const greg_t *g) { (void)g; return 0; }
static inline int smc_cmpxchg_source(const uint8_t *insn, const greg_t *g, uint64_t size, uint64_t *out) {
    (void)insn, (void)g, (void)size, (void)out;
    return 0;
}
static inline greg_t *smc_gregs(ucontext_t *uc) { return uc->uc_mcontext.gp_regs; }
#define SMC_NGPR 32

/* glibc's __libc_start_main on POWER takes main in this structure (sysdeps/.../powerpc/
 * libc-start.c), not as its first argument. */
#define SMC_START_MAIN_STARTUP_INFO 1
struct smc_startup_info {
    void *sda_base;
    void *main;
    void *init;
    void *fini;
};

/* Load-reserve/store-conditional pairs: the runtime carries out a store-conditional itself
 * (trap.c, at_reserve_site). `insn` is the instruction (stbcx., sthcx., stwcx. or stdcx.):
 * when `holds`, its source register's low `size` bytes go to `ea`; CR0 becomes 0b00, holds,
 * XER[SO]. */
#define SMC_HAS_RESERVATIONS 1
static inline void smc_store_conditional(uint32_t insn, greg_t *g, uint64_t ea, uint64_t size, int holds) {
    uint64_t rs = g[(insn >> 21) & 31];
    if (holds) memcpy((void *)(uintptr_t)ea, &rs, size); /* little-endian: the low bytes first */
    uint64_t so = (g[PT_XER] >> 31) & 1;
    uint64_t cr0 = ((uint64_t)(holds ? 2 : 0) | so) << 28;
    g[PT_CCR] = (g[PT_CCR] & ~0xf0000000ULL) | cr0;
}

/* Zero the 256 bytes below the stack pointer: what the calls of a function that is not a leaf
 * left there (nothing live lies there), so that a coroutine's await hash does not see what
 * another's stop left (x86-64's arch.h says more). */
static inline __attribute__((always_inline)) void smc_clear_below_sp(void) {
    __asm__ volatile("li 0,0\n"
                     ".irp off,8,16,24,32,40,48,56,64,72,80,88,96,104,112,120,128,136,144,152,160,168,176,"
                     "184,192,200,208,216,224,232,240,248,256\n"
                     "std 0,-\\off(1)\n"
                     ".endr\n"
                     :
                     :
                     : "r0", "memory");
}

/* Whether [p, p + n) is all zero, 16 doublewords or'd per 128 bytes: the restore reads most of
 * libc's .bss after every execution, and under qemu-user (which keeps vector registers in
 * memory) this takes half the time of VSX loads. */
#define SMC_HAVE_WIDE_ZERO 1
typedef uint64_t smc_u64_unaligned __attribute__((aligned(1), may_alias));
static inline int smc_all_zero_wide(const char *p, size_t n) {
    size_t i = 0;
    for (; i + 128 <= n; i += 128) {
        const smc_u64_unaligned *q = (const smc_u64_unaligned *)(p + i);
        if (q[0] | q[1] | q[2] | q[3] | q[4] | q[5] | q[6] | q[7] | q[8] | q[9] | q[10] | q[11] | q[12] | q[13] |
            q[14] | q[15])
            return 0;
    }
    for (; i < n; i++)
        if (p[i]) return 0;
    return 1;
}
static inline int smc_wide_zero_usable(void) { return 1; }

extern __attribute__((visibility("hidden"))) uint8_t smc_hook_sse_only;

#endif
