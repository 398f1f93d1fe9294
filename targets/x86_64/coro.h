/* x86-64 coroutines: the program's threads as coroutines of one OS thread (glibc, SysV ABI).
 *
 * A switch saves what a called function must preserve (rbx, rbp, r12-r15, the stack pointer,
 * and the MXCSR and x87 control words, which are per thread under real pthreads) and loads the
 * other coroutine's, together with its thread pointer (fs base, by wrfsbase: a system call per
 * switch would cost more than the rest of an execution). Each coroutine but the first gets a
 * copy of the main thread's static TLS block and thread control block, so that __thread
 * variables, errno and pthread_self() are its own.
 *
 * Defines the switch and the TLS layout's state: included by one file of the runtime
 * (threads.c). */
#ifndef SMC_CORO_H
#define SMC_CORO_H
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>

#include "arch.h" /* SMC_VECTOR_INIT */

#ifndef HWCAP2_FSGSBASE
#define HWCAP2_FSGSBASE (1 << 1)
#endif

/* smc_coro_switch(&save_sp, load_sp, load_fs, program): suspends the caller, resumes the other
 * one (`program`: a thread of the program, not the host, whose wide vector state is put back in
 * its initial state; co_switch passes 0 for a program that uses none, smc_hook_sse_only). */
__asm__(".text\n"
        ".globl smc_coro_switch\n"
        ".hidden smc_coro_switch\n"
        ".type smc_coro_switch,@function\n"
        "smc_coro_switch:\n"
        "  push %rbp\n push %rbx\n push %r12\n push %r13\n push %r14\n push %r15\n"
        "  sub $8,%rsp\n"
        "  stmxcsr (%rsp)\n"
        "  fnstcw 4(%rsp)\n"
        "  mov %rsp,(%rdi)\n"
        "  mov %rsi,%rsp\n"
        "  wrfsbase %rdx\n"
        /* resuming a program thread (rcx): vector registers are the caller's to save across a
         * call, so they are left in their initial state, and the thread does not carry the
         * host's (AVX-512 memcpy) into its next hook, which would then have to save them all */
        "  test %ecx,%ecx\n"
        "  jz 22f\n"
        SMC_VECTOR_INIT
        "22:\n"
        "  ldmxcsr (%rsp)\n"
        "  fldcw 4(%rsp)\n"
        "  add $8,%rsp\n"
        "  pop %r15\n pop %r14\n pop %r13\n pop %r12\n pop %rbx\n pop %rbp\n"
        /* leave nothing of the other coroutine in the scratch registers: the await-loop hash
         * of a load reads the registers the program did not set since its last call */
        "  xor %eax,%eax\n xor %ecx,%ecx\n xor %edx,%edx\n xor %esi,%esi\n xor %edi,%edi\n"
        "  xor %r8d,%r8d\n xor %r9d,%r9d\n xor %r10d,%r10d\n xor %r11d,%r11d\n"
        "  ret\n"
        ".size smc_coro_switch, .-smc_coro_switch\n"
        /* A new coroutine's first switch returns here, with its entry function in r12. */
        ".globl smc_coro_start\n"
        ".hidden smc_coro_start\n"
        ".type smc_coro_start,@function\n"
        "smc_coro_start:\n"
        "  .cfi_startproc\n"
        "  .cfi_undefined rip\n" /* unwinders stop here */
        "  xor %ebp,%ebp\n"
        "  call *%r12\n"
        "  ud2\n"
        "  .cfi_endproc\n"
        ".size smc_coro_start, .-smc_coro_start\n");
void smc_coro_switch(uint64_t *save_sp, uint64_t load_sp, uint64_t load_fs, int program);
void smc_coro_start(void);

/* The stack pointer a new coroutine starts with: a frame smc_coro_switch pops into
 * smc_coro_start, which calls `entry` (it must not return) with the stack 16-byte aligned. */
static inline uint64_t smc_coro_frame(uint64_t stack_hi, void (*entry)(void)) {
    uint64_t *sp = (uint64_t *)(uintptr_t)(stack_hi & ~15ULL); /* rsp after the ret */
    *--sp = (uint64_t)(uintptr_t)smc_coro_start;
    *--sp = 0;                               /* rbp */
    *--sp = 0;                               /* rbx */
    *--sp = (uint64_t)(uintptr_t)entry;      /* r12 */
    *--sp = 0;                               /* r13 */
    *--sp = 0;                               /* r14 */
    *--sp = 0;                               /* r15 */
    *--sp = 0x1f80 | (0x037fULL << 32);      /* MXCSR and x87 control word of a new thread */
    return (uint64_t)(uintptr_t)sp;
}

static inline uint64_t smc_thread_pointer(void) {
    uint64_t tp;
    __asm__ volatile("mov %%fs:0,%0" : "=r"(tp));
    return tp;
}

/* glibc's static TLS layout (variant II: the blocks lie below the thread pointer, the thread
 * control block `struct pthread` at it). */
typedef union {
    size_t counter;
    struct {
        void *val;
        void *to_free;
    } pointer;
} smc_dtv_t;

#define SMC_MAX_TLS_MODULES 32
static struct smc_tls {
    uint64_t main_tp;
    char *lo, *hi;          /* the main thread's static TLS blocks and TCB */
    char *rseq_lo, *rseq_hi; /* the part of the TCB the kernel writes (rseq) */
    size_t align;
    /* thread-specific data in the TCB: the inline first block and the table of blocks, whose
     * first entry points at it; a new thread starts with none */
    size_t tsd_block, tsd_table, tsd_table_size;
    uint32_t nmods;
    struct {
        size_t off; /* from lo */
        const void *image;
        size_t filesz, memsz;
        int inherit; /* libc's: copied from main (malloc's arena and tcache, locale) */
    } mods[SMC_MAX_TLS_MODULES];
    int ok;
    const void *skip; /* an address inside a module whose TLS coroutines do without (the
                       * engine library: it runs on the host's) */
} smc_tls;

/* Whether the object `info` describes holds address `p`. */
static int smc_object_holds(const struct dl_phdr_info *info, const void *p) {
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (uintptr_t)p >= lo && (uintptr_t)p < lo + ph->p_memsz) return 1;
    }
    return 0;
}

static int smc_tls_module(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    (void)data;
    if (!info->dlpi_tls_modid || !info->dlpi_tls_data) return 0;
    if (smc_tls.skip && smc_object_holds(info, smc_tls.skip)) return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_TLS) continue;
        char *at = info->dlpi_tls_data;
        if (at < smc_tls.lo || at + ph->p_memsz > smc_tls.hi || smc_tls.nmods >= SMC_MAX_TLS_MODULES) {
            smc_tls.ok = 0; /* dynamic TLS (dlopen): not ours to copy */
            return 1;
        }
        uint32_t k = smc_tls.nmods++;
        smc_tls.mods[k].off = (size_t)(at - smc_tls.lo);
        smc_tls.mods[k].image = (const void *)(info->dlpi_addr + ph->p_vaddr);
        smc_tls.mods[k].filesz = ph->p_filesz;
        smc_tls.mods[k].memsz = ph->p_memsz;
        smc_tls.mods[k].inherit = strstr(info->dlpi_name, "/libc.so") != NULL;
    }
    return 0;
}

/* Learn the layout; 0 when coroutines cannot have TLS of their own here. */
static inline int smc_tls_init(void) {
    if (!(getauxval(AT_HWCAP2) & HWCAP2_FSGSBASE)) return 0;
    void (*info)(size_t *, size_t *) = (void (*)(size_t *, size_t *))dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info");
    const unsigned *tcb_size = dlsym(RTLD_DEFAULT, "_thread_db_sizeof_pthread");
    const ptrdiff_t *rseq_off = dlsym(RTLD_DEFAULT, "__rseq_offset");
    const unsigned *rseq_size = dlsym(RTLD_DEFAULT, "__rseq_size");
    /* thread_db's description of struct pthread's `specific`: bits, count, offset */
    const uint32_t *specific = dlsym(RTLD_DEFAULT, "_thread_db_pthread_specific");
    const uint32_t *key_data = dlsym(RTLD_DEFAULT, "_thread_db_sizeof_pthread_key_data");
    if (!info || !tcb_size || !specific || !key_data) return 0;
    size_t static_size = 0;
    info(&static_size, &smc_tls.align);
    smc_tls.main_tp = smc_thread_pointer();
    smc_tls.lo = (char *)(uintptr_t)smc_tls.main_tp + *tcb_size - static_size;
    smc_tls.hi = (char *)(uintptr_t)smc_tls.main_tp + *tcb_size;
    if ((char *)&errno < smc_tls.lo || (char *)&errno >= smc_tls.hi) return 0;
    smc_tls.rseq_lo = smc_tls.rseq_hi = NULL;
    if (rseq_off && rseq_size && *rseq_size) {
        smc_tls.rseq_lo = (char *)(uintptr_t)smc_tls.main_tp + *rseq_off;
        smc_tls.rseq_hi = smc_tls.rseq_lo + 32;
        if (smc_tls.rseq_lo < smc_tls.lo || smc_tls.rseq_hi > smc_tls.hi) return 0;
    }
    /* glibc keeps 32 inline entries right before the table; check that it still does */
    smc_tls.tsd_table = specific[2];
    smc_tls.tsd_table_size = specific[0] / 8 * specific[1];
    smc_tls.tsd_block = smc_tls.tsd_table - 32 * *key_data;
    if (specific[2] < 32 * *key_data || smc_tls.tsd_table + smc_tls.tsd_table_size > *tcb_size ||
        *(uint64_t *)(uintptr_t)(smc_tls.main_tp + smc_tls.tsd_table) != smc_tls.main_tp + smc_tls.tsd_block)
        return 0;
    smc_tls.ok = 1;
    smc_tls.nmods = 0;
    dl_iterate_phdr(smc_tls_module, NULL);
    return smc_tls.ok;
}

/* Bytes a coroutine's TLS area needs (blocks, TCB, alignment slack, its own DTV). */
static inline size_t smc_tls_area_size(void) {
    size_t al = smc_tls.align < 64 ? 64 : smc_tls.align;
    return (size_t)(smc_tls.hi - smc_tls.lo) + al + 4096 + 65536;
}

/* Build in `area` the TLS of a new thread: the main thread's blocks and TCB with the TCB's
 * self pointers and DTV re-pointed at the copy, and the modules' initial values (libc's state
 * inherited). Returns its thread pointer, 0 if the DTV does not fit. */
static inline uint64_t smc_tls_new(char *area) {
    size_t al = smc_tls.align < 64 ? 64 : smc_tls.align;
    size_t size = (size_t)(smc_tls.hi - smc_tls.lo);
    char *base = (char *)(((uintptr_t)area + al - 1) & ~(uintptr_t)(al - 1));
    memcpy(base, smc_tls.lo, size);
    uint64_t tp = smc_tls.main_tp + (uint64_t)(base - smc_tls.lo);
    int64_t delta = (int64_t)(tp - smc_tls.main_tp);
    uint64_t *tcb = (uint64_t *)(uintptr_t)tp;
    tcb[0] = tp; /* tcbhead_t.tcb */
    tcb[2] = tp; /* tcbhead_t.self: pthread_self() */
    smc_dtv_t *main_dtv = *(smc_dtv_t **)(uintptr_t)(smc_tls.main_tp + 8);
    size_t len = main_dtv[-1].counter;
    char *dtv_area = base + size + 4096;
    if ((len + 2) * sizeof(smc_dtv_t) > 65536) return 0;
    smc_dtv_t *dtv = (smc_dtv_t *)(uintptr_t)dtv_area;
    memcpy(dtv, main_dtv - 1, (len + 2) * sizeof(smc_dtv_t));
    dtv++;
    for (size_t m = 1; m <= len; m++) {
        char *v = dtv[m].pointer.val;
        if (v >= smc_tls.lo && v < smc_tls.hi) dtv[m].pointer.val = v + delta;
    }
    tcb[1] = (uint64_t)(uintptr_t)dtv; /* tcbhead_t.dtv */
    memset((char *)(uintptr_t)tp + smc_tls.tsd_block, 0, smc_tls.tsd_table + smc_tls.tsd_table_size - smc_tls.tsd_block);
    *(uint64_t *)(uintptr_t)(tp + smc_tls.tsd_table) = tp + smc_tls.tsd_block;
    for (uint32_t k = 0; k < smc_tls.nmods; k++) {
        if (smc_tls.mods[k].inherit) continue;
        memcpy(base + smc_tls.mods[k].off, smc_tls.mods[k].image, smc_tls.mods[k].filesz);
        memset(base + smc_tls.mods[k].off + smc_tls.mods[k].filesz, 0,
               smc_tls.mods[k].memsz - smc_tls.mods[k].filesz);
    }
    return tp;
}

#endif
