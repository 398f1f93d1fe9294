/* Stubs of the SV-COMP functions for running a program without the checker; under smc-run
 * the preloaded runtime's definitions take precedence. */
#include <stdlib.h>
#include "smc_verifier.h"

void __VERIFIER_assume(int cond) {
    if (!cond) exit(0);
}
void __VERIFIER_error(void) { abort(); }
void __VERIFIER_atomic_begin(void) {}
void __VERIFIER_atomic_end(void) {}
int __VERIFIER_nondet_int(void) { return 0; }
unsigned __VERIFIER_nondet_uint(void) { return 0; }
long __VERIFIER_nondet_long(void) { return 0; }
unsigned long __VERIFIER_nondet_ulong(void) { return 0; }
_Bool __VERIFIER_nondet_bool(void) { return 0; }
char __VERIFIER_nondet_char(void) { return 0; }
unsigned char __VERIFIER_nondet_uchar(void) { return 0; }
short __VERIFIER_nondet_short(void) { return 0; }
unsigned short __VERIFIER_nondet_ushort(void) { return 0; }
long long __VERIFIER_nondet_longlong(void) { return 0; }
unsigned long long __VERIFIER_nondet_ulonglong(void) { return 0; }
