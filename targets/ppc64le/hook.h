/* ppc64le jump hooks: a site is patched with a relative branch (`b`, +-32 MiB) to a stub of its
 * own instead of `tw 31,0,0`, whose signal costs qemu-user a dozen host system calls (signal
 * masks on the way in and out) per event. The stub calls smc_hook(gregs, site index) through a
 * common entry that saves what the interrupted code may hold (every general register, CR,
 * XER, CTR, LR, all 64 VSX registers, FPSCR and VSCR: the hook calls libc, and the ABI lets it
 * change the volatile halves of the vector registers), then runs the site's relocated copy,
 * which branches back after the instruction. The store-conditional sites keep the trap: their
 * hook sets the pc (the runtime carries the instruction out), and a stub always goes on to the
 * copy.
 *
 * Stub (96 bytes, in the trampoline next to the copies; r0 is free once saved):
 *   stdu 1,-336(1)           a 48-byte frame below the interrupted code's 288-byte red zone
 *   std 0,8(1); mflr 0; std 0,16(1); mfctr 0; std 0,24(1)     r0, LR, CTR
 *   lis 0,index@h; ori 0,0,index@l; std 0,32(1)
 *   lis/ori/sldi/oris/ori 0 = smc_hook_entry; mtctr 0; bctrl
 *   ld 0,24(1); mtctr 0; ld 0,16(1); mtlr 0; ld 0,8(1)       as the hook left them
 *   addi 1,1,336
 *   b copy
 *
 * Defines the common entry and the hooks' state: included by one file of the runtime (trap.c).
 */
#ifndef SMC_HOOK_H
#define SMC_HOOK_H
#include <stdint.h>
#include <string.h>
#include <ucontext.h>

#include "arch.h"

#define SMC_HOOK_LEN 4        /* every instruction can take the branch */
#define SMC_HOOK_STUB_LEN 96  /* bytes per stub */
#define SMC_HOOK_STUB_FRAME 336 /* the red zone and the stub's 48 bytes */

__attribute__((visibility("hidden"))) void smc_hook(greg_t *gregs, uint32_t index);
__attribute__((visibility("hidden"))) uint8_t smc_hook_sse_only;

/* Common entry's frame: the ABI's header and a parameter save area (96), gregs as a ucontext
 * lays them out (48 slots), the return into the stub, FPSCR, VSCR, then vs0-vs63. */
#define SMC_HOOK_FRAME 1552
#define SMC_HOOK_GREGS 96
#define SMC_HOOK_RET 480
#define SMC_HOOK_FPSCR 496
#define SMC_HOOK_VSCR 512
#define SMC_HOOK_VSX 528
#define SMC_HK_G(n) SMC_STR(SMC_HOOK_GREGS) "+" #n "*8(1)"
/* the stub's slots, seen from the common entry's frame */
#define SMC_HK_STUB(off) SMC_STR(SMC_HOOK_FRAME) "+" #off "(1)"

__asm__(".text\n"
        ".globl smc_hook_entry\n"
        ".hidden smc_hook_entry\n"
        ".type smc_hook_entry,@function\n"
        "smc_hook_entry:\n"
        "  mflr 0\n"
        "  stdu 1,-" SMC_STR(SMC_HOOK_FRAME) "(1)\n"
        "  std 0," SMC_STR(SMC_HOOK_RET) "(1)\n"
        "  .irp r,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n"
        "  std \\r," SMC_STR(SMC_HOOK_GREGS) "+\\r*8(1)\n"
        "  .endr\n"
        "  ld 3," SMC_HK_STUB(8) "\n"
        "  std 3," SMC_HK_G(0) "\n"
        "  addi 3,1," SMC_STR(SMC_HOOK_FRAME) "+" SMC_STR(SMC_HOOK_STUB_FRAME) "\n"
        "  std 3," SMC_HK_G(1) "\n"
        "  li 3,0\n"
        "  std 3," SMC_HK_G(32) "\n" /* PT_NIP: the hook knows the site */
        "  ld 3," SMC_HK_STUB(24) "\n"
        "  std 3," SMC_HK_G(35) "\n" /* PT_CTR */
        "  ld 3," SMC_HK_STUB(16) "\n"
        "  std 3," SMC_HK_G(36) "\n" /* PT_LNK */
        "  mfxer 3\n"
        "  std 3," SMC_HK_G(37) "\n"
        "  mfcr 3\n"
        "  std 3," SMC_HK_G(38) "\n"
        "  li 4," SMC_STR(SMC_HOOK_VSX) "\n"
        "  .irp v,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,"
        "32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63\n"
        "  stxvd2x \\v,1,4\n"
        "  addi 4,4,16\n"
        "  .endr\n"
        "  mffs 0\n"
        "  stfd 0," SMC_STR(SMC_HOOK_FPSCR) "(1)\n"
        "  mfvscr 0\n"
        "  li 4," SMC_STR(SMC_HOOK_VSCR) "\n"
        "  stvx 0,1,4\n"
        /* the runtime's TOC */
        "  bcl 20,31,1f\n"
        "1:\n"
        "  mflr 2\n"
        "  addis 2,2,(.TOC.-1b)@ha\n"
        "  addi 2,2,(.TOC.-1b)@l\n"
        "  addi 3,1," SMC_STR(SMC_HOOK_GREGS) "\n"
        "  lwz 4," SMC_HK_STUB(32) "\n"
        "  bl smc_hook\n"
        "  nop\n"
        "  li 4," SMC_STR(SMC_HOOK_VSCR) "\n"
        "  lvx 0,1,4\n"
        "  mtvscr 0\n"
        "  lfd 0," SMC_STR(SMC_HOOK_FPSCR) "(1)\n"
        "  mtfsf 0xff,0\n"
        "  li 4," SMC_STR(SMC_HOOK_VSX) "\n"
        "  .irp v,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,"
        "32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63\n"
        "  lxvd2x \\v,1,4\n"
        "  addi 4,4,16\n"
        "  .endr\n"
        "  ld 3," SMC_HK_G(37) "\n"
        "  mtxer 3\n"
        "  ld 3," SMC_HK_G(38) "\n"
        "  mtcr 3\n"
        /* r0, LR and CTR go back through the stub's slots: the stub restores them */
        "  ld 3," SMC_HK_G(0) "\n"
        "  std 3," SMC_HK_STUB(8) "\n"
        "  ld 3," SMC_HK_G(36) "\n"
        "  std 3," SMC_HK_STUB(16) "\n"
        "  ld 3," SMC_HK_G(35) "\n"
        "  std 3," SMC_HK_STUB(24) "\n"
        "  ld 0," SMC_STR(SMC_HOOK_RET) "(1)\n"
        "  mtlr 0\n"
        "  .irp r,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n"
        "  ld \\r," SMC_STR(SMC_HOOK_GREGS) "+\\r*8(1)\n"
        "  .endr\n"
        "  addi 1,1," SMC_STR(SMC_HOOK_FRAME) "\n"
        "  blr\n"
        ".size smc_hook_entry, .-smc_hook_entry\n");
void smc_hook_entry(void);

/* qemu-user runs the stubs as any code: nothing to ask of the CPU. */
static inline int smc_hooks_init(void) { return 1; }

/* Can a `b` at `at` reach `to`? (I-form: a signed 26-bit byte displacement) */
static inline int smc_reaches(uint64_t at, uint64_t to) {
    int64_t d = (int64_t)(to - at);
    return d >= -(1LL << 25) && d < (1LL << 25) && (d & 3) == 0;
}

static inline uint32_t smc_branch_to(uint64_t at, uint64_t to) {
    return (18u << 26) | ((uint32_t)(to - at) & 0x03fffffcu);
}

/* Write the stub of site `index` at `stub`: it calls the common entry (at the address held at
 * `entry_ptr`), then branches to `copy`. */
static inline void smc_write_stub(uint8_t *stub, uint32_t index, uint64_t entry_ptr, uint64_t copy) {
    uint64_t e;
    memcpy(&e, (const void *)(uintptr_t)entry_ptr, 8);
    const uint32_t std_r0 = (62u << 26) | (1u << 16), ld_r0 = (58u << 26) | (1u << 16);
    const uint32_t w[23] = {
        (62u << 26) | (1u << 21) | (1u << 16) | ((uint32_t)-SMC_HOOK_STUB_FRAME & 0xfffc) | 1, /* stdu */
        std_r0 | 8,
        0x7c0802a6, /* mflr 0 */
        std_r0 | 16,
        0x7c0902a6, /* mfctr 0 */
        std_r0 | 24,
        (15u << 26) | (index >> 16),            /* lis 0 */
        (24u << 26) | (index & 0xffff),         /* ori 0,0 */
        std_r0 | 32,
        (15u << 26) | (uint32_t)(e >> 48),      /* lis 0 */
        (24u << 26) | (uint32_t)(e >> 32 & 0xffff), /* ori 0,0 */
        0x780007c6,                             /* sldi 0,0,32 */
        (25u << 26) | (uint32_t)(e >> 16 & 0xffff), /* oris 0,0 */
        (24u << 26) | (uint32_t)(e & 0xffff),   /* ori 0,0 */
        0x7c0903a6,                             /* mtctr 0 */
        0x4e800421,                             /* bctrl */
        ld_r0 | 24,
        0x7c0903a6, /* mtctr 0 */
        ld_r0 | 16,
        0x7c0803a6, /* mtlr 0 */
        ld_r0 | 8,
        (14u << 26) | (1u << 21) | (1u << 16) | SMC_HOOK_STUB_FRAME, /* addi 1,1 */
        smc_branch_to((uint64_t)(uintptr_t)stub + 88, copy),
    };
    memcpy(stub, w, sizeof w);
    __builtin___clear_cache((char *)stub, (char *)stub + sizeof w);
}

/* Patch the instruction at `at` to branch to `stub` (smc_reaches said it can). */
static inline void smc_write_jump(uint8_t *at, uint64_t stub) {
    uint32_t w = smc_branch_to((uint64_t)(uintptr_t)at, stub);
    memcpy(at, &w, 4);
    __builtin___clear_cache((char *)at, (char *)at + 4);
}

#endif
