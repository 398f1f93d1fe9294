/* A visible access (a 10-byte store, which takes a jump hook) between code that keeps values in
 * a vector register, a general register, the flags and the red zone: the checker's hook must
 * hand all of them back as they were. The thread stores twice, so the check runs with and
 * without a preceding event of main in between. Built with -DSSE_ONLY, it has no instruction
 * beyond SSE (no AVX, x87 or MMX), and the hook saves less (the checker sees that in the code). */
#include <assert.h>
#include <pthread.h>
#include <string.h>

volatile int shared, other;

static void check_once(void) {
    unsigned long in[4] __attribute__((aligned(32))) = {1, 2, 3, 0x8877665544332211ul};
    unsigned long out[4] = {0, 0, 0, 0}, r11 = 0, red = 0;
    unsigned char cf = 0, nz = 0;
#ifdef SSE_ONLY
    int avx = 0;
#else
    int avx = __builtin_cpu_supports("avx");
#endif
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
#ifndef SSE_ONLY
    if (avx)
        AROUND_A_STORE("vmovdqu", "%%ymm1");
    else
#endif
        AROUND_A_STORE("movdqu", "%%xmm1");
    assert(cf == 1 && nz == 1);
    assert(r11 == 0x1122334455667788ul);
    assert(red == 42);
    assert(memcmp(in, out, avx ? 32 : 16) == 0);
}

/* With SSE state only in use (the hook then saves it by hand instead of with XSAVE: the
 * AVX-512 registers libc's memcmp used are zeroed first, which puts them back in their initial
 * state): xmm1, MXCSR's rounding mode, and after vzeroupper the upper half of ymm1, which must
 * still be zero after the hook. */
static void check_sse_only(void) {
    unsigned long in[2] = {0x0102030405060708ul, 0x1112131415161718ul};
    unsigned long out[4] = {1, 1, 1, 1};
    unsigned mx_in = 0x7f80, mx_out = 0, mx_saved = 0; /* round toward zero */
    __asm__ volatile("stmxcsr %0" : "=m"(mx_saved));
#define AROUND_A_STORE_SSE(START, END)                                                          \
    __asm__ volatile(START "ldmxcsr %[mx_in]\n"                                                \
                     "movdqu %[in], %%xmm1\n"                                                  \
                     "movl $7, shared(%%rip)\n"                                                \
                     "stmxcsr %[mx_out]\n"                                                     \
                     "ldmxcsr %[mx_saved]\n" END                                               \
                     : [out] "=m"(out), [mx_out] "=m"(mx_out)                                   \
                     : [in] "m"(in), [mx_in] "m"(mx_in), [mx_saved] "m"(mx_saved)               \
                     : "xmm1", "memory")
#ifndef SSE_ONLY
    if (__builtin_cpu_supports("avx512f")) {
        AROUND_A_STORE_SSE("vzeroupper\nvpxord %%zmm16, %%zmm16, %%zmm16\nvpxord %%zmm17, %%zmm17, %%zmm17\nvpxord %%zmm18, %%zmm18, %%zmm18\nvpxord %%zmm19, %%zmm19, %%zmm19\nvpxord %%zmm20, %%zmm20, %%zmm20\nvpxord %%zmm21, %%zmm21, %%zmm21\nvpxord %%zmm22, %%zmm22, %%zmm22\nvpxord %%zmm23, %%zmm23, %%zmm23\nvpxord %%zmm24, %%zmm24, %%zmm24\nvpxord %%zmm25, %%zmm25, %%zmm25\nvpxord %%zmm26, %%zmm26, %%zmm26\nvpxord %%zmm27, %%zmm27, %%zmm27\nvpxord %%zmm28, %%zmm28, %%zmm28\nvpxord %%zmm29, %%zmm29, %%zmm29\nvpxord %%zmm30, %%zmm30, %%zmm30\nvpxord %%zmm31, %%zmm31, %%zmm31\nkxorw %%k0, %%k0, %%k0\nkxorw %%k1, %%k1, %%k1\nkxorw %%k2, %%k2, %%k2\nkxorw %%k3, %%k3, %%k3\nkxorw %%k4, %%k4, %%k4\nkxorw %%k5, %%k5, %%k5\nkxorw %%k6, %%k6, %%k6\nkxorw %%k7, %%k7, %%k7\n",
                           "vmovdqu %%ymm1, %[out]\n");
        assert(out[2] == 0 && out[3] == 0);
    } else if (__builtin_cpu_supports("avx")) {
        AROUND_A_STORE_SSE("vzeroupper\n", "vmovdqu %%ymm1, %[out]\n");
        assert(out[2] == 0 && out[3] == 0);
    } else
#endif
    {
        AROUND_A_STORE_SSE("", "movdqu %%xmm1, %[out]\n");
    }
    assert(memcmp(in, out, 16) == 0);
    assert(mx_out == mx_in);
}

static void *t(void *arg) {
    check_once();
    check_sse_only();
    check_once();
    check_sse_only();
    return arg;
}

int main(void) {
    pthread_t x;
    pthread_create(&x, 0, t, 0);
    /* main puts its own value in xmm1 after its load, while the thread may wait at the hook
     * of a store (an execution reorders the two), then stops at a store of its own: the thread
     * must get its own value back */
    unsigned long mine[2] = {0xdeadbeefdeadbeeful, 0xcafef00dcafef00dul};
    int seen;
    __asm__ volatile("mov shared(%%rip), %[seen]\n"
                     "movdqu %[mine], %%xmm1\n"
                     "movl $1, other(%%rip)\n"
                     : [seen] "=&r"(seen)
                     : [mine] "m"(mine)
                     : "xmm1", "memory");
    pthread_join(x, 0);
    return seen == 0 || seen == 7 ? 0 : 1;
}
