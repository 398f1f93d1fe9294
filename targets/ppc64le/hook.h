/* ppc64le: every site is patched with a trap (`tw 31,0,0`, SIGTRAP); no jump hooks yet.
 * Included by one file of the runtime (trap.c). */
#ifndef SMC_HOOK_H
#define SMC_HOOK_H
#include <stdint.h>
#include <ucontext.h>

#include "arch.h"

#define SMC_HOOK_LEN 255 /* no site takes a jump (every instruction is 4 bytes) */
#define SMC_HOOK_STUB_LEN 0

__attribute__((visibility("hidden"))) void smc_hook(greg_t *gregs, uint32_t index);
__attribute__((visibility("hidden"))) uint8_t smc_hook_sse_only;

static inline void smc_hook_entry(void) {}
static inline int smc_hooks_init(void) { return 0; }
static inline int smc_reaches(uint64_t from, uint64_t to) { (void)from; (void)to; return 0; }
static inline void smc_write_stub(uint8_t *stub, uint32_t index, uint64_t entry_ptr, uint64_t copy) {
    (void)stub; (void)index; (void)entry_ptr; (void)copy;
}
static inline void smc_write_jump(uint8_t *at, uint64_t stub) { (void)at; (void)stub; }

#endif
