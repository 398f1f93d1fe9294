/* ppc64le: no descriptor watch (qemu-user does not run a guest's seccomp filters); the worker
 * closes descriptors after every execution instead. Included by one file (process.c). */
#ifndef SMC_FDWATCH_H
#define SMC_FDWATCH_H
#include <signal.h>
#include <ucontext.h>

static int smc_fdwatch_install(int output) { (void)output; return 0; }
static inline int smc_fdwatch_ours(const siginfo_t *si) { (void)si; return 0; }
static inline void smc_fdwatch_make_call(const siginfo_t *si, greg_t *g) { (void)si; (void)g; }

#endif
