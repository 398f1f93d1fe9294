/* A coroutine's TLS: a copy of the main thread's static TLS blocks and thread descriptor
 * (glibc's `struct pthread`), re-pointed at itself. What is common to glibc's two layouts
 * (variant II on x86-64: blocks below the thread pointer, the descriptor at it; variant I on
 * POWER: the descriptor below, blocks above tp - 0x7000): the modules' blocks, the DTV, the
 * thread-specific data table, the part the kernel writes (rseq).
 *
 * targets/ARCH/coro.h fills in where the main thread's area lies and what else in the copy
 * points at itself (SMC_TLS_DTV_SLOT, smc_tls_fix_tcb), and includes this file: state and
 * static functions for one file of the runtime (threads.c). */
#ifndef SMC_TLS_H
#define SMC_TLS_H
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

typedef union {
    size_t counter;
    struct {
        void *val;
        void *to_free;
    } pointer;
} smc_dtv_t;

#define SMC_MAX_TLS_MODULES 32
static struct smc_tls {
    uint64_t main_tp;       /* the main thread's thread pointer */
    char *main_self;        /* and its descriptor (pthread_self()) */
    char *lo, *hi;          /* the main thread's static TLS blocks and descriptor */
    char *rseq_lo, *rseq_hi; /* the part of the descriptor the kernel writes (rseq) */
    size_t align;
    /* thread-specific data in the descriptor (offsets from it): the inline first block and the
     * table of blocks, whose first entry points at it; a new thread starts with none */
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

/* The rest of smc_tls_init once the arch has set main_tp, main_self, lo, hi and align:
 * checks that errno, rseq and the thread-specific data lie where they are copied, and learns
 * the modules. 0 when coroutines cannot have TLS of their own here. */
static int smc_tls_learn(size_t descriptor_size) {
    const ptrdiff_t *rseq_off = dlsym(RTLD_DEFAULT, "__rseq_offset");
    const unsigned *rseq_size = dlsym(RTLD_DEFAULT, "__rseq_size");
    /* thread_db's description of struct pthread's `specific`: bits, count, offset */
    const uint32_t *specific = dlsym(RTLD_DEFAULT, "_thread_db_pthread_specific");
    const uint32_t *key_data = dlsym(RTLD_DEFAULT, "_thread_db_sizeof_pthread_key_data");
    if (!specific || !key_data) return 0;
    if ((char *)&errno < smc_tls.lo || (char *)&errno >= smc_tls.hi) return 0;
    if (smc_tls.main_self < smc_tls.lo || smc_tls.main_self + descriptor_size > smc_tls.hi) return 0;
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
    if (specific[2] < 32 * *key_data || smc_tls.tsd_table + smc_tls.tsd_table_size > descriptor_size ||
        *(char **)(smc_tls.main_self + smc_tls.tsd_table) != smc_tls.main_self + smc_tls.tsd_block)
        return 0;
    smc_tls.ok = 1;
    smc_tls.nmods = 0;
    dl_iterate_phdr(smc_tls_module, NULL);
    return smc_tls.ok;
}

static inline size_t smc_tls_alignment(void) { return smc_tls.align < 64 ? 64 : smc_tls.align; }

/* Bytes a coroutine's TLS area needs (blocks, descriptor, alignment slack, its own DTV). */
static inline size_t smc_tls_area_size(void) {
    return (size_t)(smc_tls.hi - smc_tls.lo) + smc_tls_alignment() + 4096 + 65536;
}

static inline void smc_tls_fix_tcb(uint64_t tp);

/* Build in `area` the TLS of a new thread: the main thread's blocks and descriptor with the
 * descriptor's self pointers and DTV re-pointed at the copy, and the modules' initial values
 * (libc's state inherited). Returns its thread pointer, 0 if the DTV does not fit. */
static inline uint64_t smc_tls_new(char *area) {
    size_t al = smc_tls_alignment();
    size_t size = (size_t)(smc_tls.hi - smc_tls.lo);
    /* the copy keeps the original's alignment modulo al: every block stays aligned */
    char *base = area + (((uintptr_t)smc_tls.lo - (uintptr_t)area) & (al - 1));
    memcpy(base, smc_tls.lo, size);
    int64_t delta = (int64_t)((uintptr_t)base - (uintptr_t)smc_tls.lo);
    uint64_t tp = smc_tls.main_tp + (uint64_t)delta;
    char *self = smc_tls.main_self + delta;
    smc_dtv_t *main_dtv = *SMC_TLS_DTV_SLOT(smc_tls.main_tp);
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
    *SMC_TLS_DTV_SLOT(tp) = dtv;
    smc_tls_fix_tcb(tp);
    memset(self + smc_tls.tsd_block, 0, smc_tls.tsd_table + smc_tls.tsd_table_size - smc_tls.tsd_block);
    *(char **)(self + smc_tls.tsd_table) = self + smc_tls.tsd_block;
    for (uint32_t k = 0; k < smc_tls.nmods; k++) {
        if (smc_tls.mods[k].inherit) continue;
        memcpy(base + smc_tls.mods[k].off, smc_tls.mods[k].image, smc_tls.mods[k].filesz);
        memset(base + smc_tls.mods[k].off + smc_tls.mods[k].filesz, 0,
               smc_tls.mods[k].memsz - smc_tls.mods[k].filesz);
    }
    return tp;
}

/* What pthread_self() says in the thread whose thread pointer is `tp`. */
static inline uint64_t smc_tls_self(uint64_t tp) {
    return tp - smc_tls.main_tp + (uint64_t)(uintptr_t)smc_tls.main_self;
}

#endif
