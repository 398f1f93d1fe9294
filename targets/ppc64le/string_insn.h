/* ppc64le has no string instructions: no site is of kind SMC_SITE_STRING. Included by one file
 * (trap.c). */
#ifndef SMC_STRING_INSN_H
#define SMC_STRING_INSN_H
#include <stdint.h>
#include <ucontext.h>

static inline void smc_string_insn(const struct smc_site *st, uint64_t pc, greg_t *g, uint32_t site) {
    (void)st; (void)pc; (void)g; (void)site;
}

#endif
