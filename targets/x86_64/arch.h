/* x86-64 facts the runtime needs: the trap instruction and register access in a ucontext.
 * Register numbers are the hardware encoding order used by src/decode (0 = rax ... 15 = r15). */
#ifndef SMC_ARCH_H
#define SMC_ARCH_H
#include <stdint.h>
#include <ucontext.h>

#define SMC_ARCH_NAME "x86_64"
#define SMC_TRAP_BYTE 0xCC /* int3 */
#define SMC_TRAP_LEN 1     /* the trap leaves the pc this far past the instruction start */
#define SMC_RED_ZONE 128

static const int smc_greg_index[16] = {
    REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
    REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15,
};

/* Registers as saved in a ucontext's gregs (by the kernel for a trap, by the hook entry for a
 * jump hook). */
static inline uint64_t smc_reg(const greg_t *g, int n) { return (uint64_t)g[smc_greg_index[n]]; }
static inline uint64_t smc_pc(const greg_t *g) { return (uint64_t)g[REG_RIP]; }
static inline void smc_set_pc(greg_t *g, uint64_t pc) { g[REG_RIP] = (greg_t)pc; }
static inline uint64_t smc_sp(const greg_t *g) { return smc_reg(g, 4); }
/* The accumulator: the expected value of cmpxchg (rax) and its high half for cmpxchg16b (rdx). */
static inline uint64_t smc_acc(const greg_t *g) { return smc_reg(g, 0); }
static inline uint64_t smc_acc_hi(const greg_t *g) { return smc_reg(g, 2); }
static inline greg_t *smc_gregs(ucontext_t *uc) { return uc->uc_mcontext.gregs; }
#define SMC_NGPR 16

#endif
