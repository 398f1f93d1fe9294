/* ppc64le: no coroutines yet (each execution is a process of its own, with real threads);
 * smc_tls_init declines, so co_setup fails and the fork server forks a process per execution.
 * Included by one file of the runtime (threads.c). */
#ifndef SMC_CORO_H
#define SMC_CORO_H
#include <stdint.h>
#include <stdlib.h>

#include "arch.h"

static struct smc_tls {
    uint64_t main_tp;
    char *lo, *hi;
    char *rseq_lo, *rseq_hi;
    const void *skip;
} smc_tls;

static inline int smc_tls_init(void) { return 0; }
static inline void smc_coro_switch(uint64_t *save_sp, uint64_t load_sp, uint64_t load_fs, int program) {
    (void)save_sp; (void)load_sp; (void)load_fs; (void)program;
    abort();
}
static inline uint64_t smc_coro_frame(uint64_t stack_hi, void (*entry)(void)) {
    (void)stack_hi; (void)entry;
    return 0;
}
static inline size_t smc_tls_area_size(void) { return 0; }
static inline uint64_t smc_tls_new(char *area) { (void)area; return 0; }

#endif
