/* A visible store between code that keeps values in general registers (r0, r11, r12), CTR,
 * LR, CR fields, XER's carry, FPSCR's rounding mode, vector-scalar registers (vs1 with its
 * upper half, v1, v31) and the red zone: the checker's hook must hand all of them back as they
 * were. The thread stores twice, so the check runs with and without an event of main in
 * between. */
#include <assert.h>
#include <pthread.h>
#include <string.h>

volatile int shared;

static void check_once(void) {
    unsigned long vin[2] = {0x0102030405060708ul, 0x1112131415161718ul};
    unsigned long fin[2] = {0x2122232425262728ul, 0x3132333435363738ul};
    unsigned long win[2] = {0x4142434445464748ul, 0x5152535455565758ul};
    unsigned long vout[2] = {0, 0}, fout[2] = {0, 0}, wout[2] = {0, 0};
    unsigned long r0v, r11v, r12v, ctr, lr, lrsave, cr, xer, red, fpscr;
    __asm__ volatile("lxvd2x 33,0,%[vin]\n"
                     "lxvd2x 1,0,%[fin]\n"
                     "lxvd2x 63,0,%[win]\n"
                     "mflr %[lrsave]\n"
                     "li 0,0x4242\n"
                     "mtlr 0\n"
                     "li 0,77\n"
                     "mtctr 0\n"
                     "li 0,-1\n"
                     "addic 0,0,1\n"     /* XER[CA] = 1 */
                     "li 11,1\n"
                     "cmpwi 7,11,2\n"    /* cr7: LT */
                     "cmpwi 0,11,1\n"    /* cr0: EQ */
                     "mtfsfi 7,1\n"      /* round toward zero */
                     "li 0,0x1234\n"
                     "li 11,0x5678\n"
                     "li 12,0x1abc\n"
                     "std 12,-8(1)\n"
                     "stw 12,%[sh]\n"    /* the visible store */
                     "mr %[r0v],0\n"
                     "mr %[r11v],11\n"
                     "mr %[r12v],12\n"
                     "mfctr %[ctr]\n"
                     "mflr %[lr]\n"
                     "mtlr %[lrsave]\n"
                     "mfcr %[cr]\n"
                     "mfxer %[xer]\n"
                     "ld %[red],-8(1)\n"
                     "stxvd2x 33,0,%[vout]\n"
                     "stxvd2x 1,0,%[fout]\n"
                     "stxvd2x 63,0,%[wout]\n"
                     "mffs 1\n"
                     "stfd 1,%[fpscr]\n"
                     "mtfsfi 7,0\n"
                     : [sh] "=m"(shared), [r0v] "=&r"(r0v), [r11v] "=&r"(r11v), [r12v] "=&r"(r12v),
                       [ctr] "=&r"(ctr), [lr] "=&r"(lr), [lrsave] "=&r"(lrsave), [cr] "=&r"(cr),
                       [xer] "=&r"(xer), [red] "=&r"(red), [fpscr] "=m"(fpscr)
                     : [vin] "r"(vin), [fin] "r"(fin), [win] "r"(win), [vout] "r"(vout), [fout] "r"(fout),
                       [wout] "r"(wout)
                     : "r0", "r11", "r12", "ctr", "lr", "cr0", "cr7", "xer", "fr1", "v1", "v31", "memory");
    assert(r0v == 0x1234 && r11v == 0x5678 && r12v == 0x1abc);
    assert(ctr == 77 && lr == 0x4242);
    assert((cr >> 28 & 0xf) == 2 && (cr & 0xf) == 8); /* cr0 EQ, cr7 LT */
    assert(xer >> 29 & 1);
    assert(red == 0x1abc);
    assert((fpscr & 3) == 1);
    assert(memcmp(vin, vout, 16) == 0 && memcmp(fin, fout, 16) == 0 && memcmp(win, wout, 16) == 0);
}

static void *thread(void *arg) {
    check_once();
    check_once();
    return arg;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, thread, 0);
    shared = 1;
    pthread_join(t, 0);
    return 0;
}
