/* SV-COMP conventions for programs checked by smc-run.
 *
 * Compile with `-I DIR` and link with `-L DIR -lsmc_verifier -Wl,-rpath,DIR`, where DIR is
 * what `smc-run --verifier-dir DIR` wrote. Under the checker the preloaded runtime supplies the
 * real behaviour; run on its own, the program gets the plain stubs of libsmc_verifier.so.
 *
 *   __VERIFIER_assume(c)     under the checker: an execution where c is false is dropped
 *                            (counted as blocked); alone: exit(0) when c is false
 *   __VERIFIER_error()       an error (kind "assertion"); alone: abort()
 *   __VERIFIER_atomic_begin() / _end()
 *                            the code between runs without interruption by other threads
 *   __VERIFIER_nondet_int()  and the other types: under the checker each of a few values
 *                            (--nondet-values: 0 and 1 by default) is explored; alone: 0
 */
#ifndef SMC_VERIFIER_H
#define SMC_VERIFIER_H
#ifdef __cplusplus
extern "C" {
#endif
void __VERIFIER_assume(int cond);
void __VERIFIER_error(void) __attribute__((noreturn));
void __VERIFIER_atomic_begin(void);
void __VERIFIER_atomic_end(void);
int __VERIFIER_nondet_int(void);
unsigned __VERIFIER_nondet_uint(void);
long __VERIFIER_nondet_long(void);
unsigned long __VERIFIER_nondet_ulong(void);
_Bool __VERIFIER_nondet_bool(void);
char __VERIFIER_nondet_char(void);
unsigned char __VERIFIER_nondet_uchar(void);
short __VERIFIER_nondet_short(void);
unsigned short __VERIFIER_nondet_ushort(void);
long long __VERIFIER_nondet_longlong(void);
unsigned long long __VERIFIER_nondet_ulonglong(void);
#ifdef __cplusplus
}
#endif
#endif
