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

static inline uint64_t smc_reg(const ucontext_t *uc, int n) {
    return (uint64_t)uc->uc_mcontext.gregs[smc_greg_index[n]];
}
static inline uint64_t smc_pc(const ucontext_t *uc) { return (uint64_t)uc->uc_mcontext.gregs[REG_RIP]; }
static inline void smc_set_pc(ucontext_t *uc, uint64_t pc) { uc->uc_mcontext.gregs[REG_RIP] = (greg_t)pc; }
static inline uint64_t smc_sp(const ucontext_t *uc) { return smc_reg(uc, 4); }
/* The accumulator: the expected value of cmpxchg (rax) and its high half for cmpxchg16b (rdx). */
static inline uint64_t smc_acc(const ucontext_t *uc) { return smc_reg(uc, 0); }
static inline uint64_t smc_acc_hi(const ucontext_t *uc) { return smc_reg(uc, 2); }
#define SMC_NGPR 16

#endif
