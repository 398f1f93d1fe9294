/* A visible access (a 10-byte store, which takes a jump hook) between code that keeps values in
 * a vector register, a general register, the flags and the red zone: the checker's hook must
 * hand all of them back as they were. The thread stores twice, so the check runs with and
 * without a preceding event of main in between. */
#include <assert.h>
#include <pthread.h>
#include <string.h>

volatile int shared;

static void check_once(void) {
    unsigned long in[4] __attribute__((aligned(32))) = {1, 2, 3, 0x8877665544332211ul};
    unsigned long out[4] = {0, 0, 0, 0}, r11 = 0, red = 0;
    unsigned char cf = 0, nz = 0;
    int avx = __builtin_cpu_supports("avx");
/* vector register 1 (REG, moved with MOV), r11, the flags and the red zone, around a store to
 * `shared` */
#define AROUND_A_STORE(MOV, REG)                                                                \
    __asm__ volatile(MOV " %[in], " REG "\n"                                                    \
                     "mov $0x1122334455667788, %%r11\n"                                         \
                     "movq $42, -8(%%rsp)\n"                                                    \
                     "mov $1, %%eax\n"                                                          \
                     "cmp $2, %%eax\n" /* CF = 1, ZF = 0 */                                     \
                     "movl $7, shared(%%rip)\n" /* c7 05 rel32 imm32: a jump hook */            \
                     "setb %[cf]\n"                                                             \
                     "setnz %[nz]\n" MOV " " REG ", %[out]\n"                                   \
                     "mov %%r11, %[r11]\n"                                                      \
                     "mov -8(%%rsp), %[red]\n"                                                  \
                     : [cf] "=&r"(cf), [nz] "=&r"(nz), [out] "=m"(out), [r11] "=&r"(r11),        \
                       [red] "=&r"(red)                                                         \
                     : [in] "m"(in)                                                             \
                     : "rax", "r11", "xmm1", "memory", "cc")
    if (avx)
        AROUND_A_STORE("vmovdqu", "%%ymm1");
    else
        AROUND_A_STORE("movdqu", "%%xmm1");
    assert(cf == 1 && nz == 1);
    assert(r11 == 0x1122334455667788ul);
    assert(red == 42);
    assert(memcmp(in, out, avx ? 32 : 16) == 0);
}

static void *t(void *arg) {
    check_once();
    check_once();
    return arg;
}

int main(void) {
    pthread_t x;
    pthread_create(&x, 0, t, 0);
    int seen = shared;
    pthread_join(x, 0);
    return seen == 0 || seen == 7 ? 0 : 1;
}
