/* x86-64 string instructions (movs, stos, lods, cmps, scas; with rep, repe, repne or none),
 * carried out by the runtime at a site of kind SMC_SITE_STRING, whose relocated copy holds
 * nops where the instruction was. Memory goes through the runtime's pieces (memory.c: each
 * piece within one aligned 8-byte word, the most x86 makes atomic, and a visible event
 * where the memory may be shared), in the direction the instruction goes; registers and
 * flags are left as the instruction leaves them. Included by one file (trap.c). */
#ifndef SMC_STRING_INSN_H
#define SMC_STRING_INSN_H
#include <stdint.h>
#include <string.h>
#include <ucontext.h>

#include "arch.h"

#define SMC_EFL_DF 0x400u
/* CF, PF, AF, ZF, SF, OF: what a compare sets */
#define SMC_EFL_ARITH 0x8d5u

/* The flags of `cmp a, b` on `size`-byte operands (a - b). */
static inline uint64_t smc_cmp_flags(uint64_t a, uint64_t b, uint32_t size) {
    uint64_t bits = 8ull * size, mask = bits == 64 ? ~0ull : (1ull << bits) - 1, sign = 1ull << (bits - 1);
    a &= mask;
    b &= mask;
    uint64_t r = (a - b) & mask, f = 0;
    if (a < b) f |= 0x1;                                    /* CF */
    if (!(__builtin_popcount((unsigned)(r & 0xff)) & 1)) f |= 0x4; /* PF: even parity */
    if ((a ^ b ^ r) & 0x10) f |= 0x10;                      /* AF */
    if (!r) f |= 0x40;                                      /* ZF */
    if (r & sign) f |= 0x80;                                /* SF */
    if ((a ^ b) & (a ^ r) & sign) f |= 0x800;               /* OF */
    return f;
}

/* rax with its low `size` bytes replaced as a load of that size into al/ax/eax/rax leaves it */
static inline uint64_t smc_acc_load(uint64_t rax, uint64_t v, uint32_t size) {
    switch (size) {
    case 1: return (rax & ~0xffull) | (v & 0xff);
    case 2: return (rax & ~0xffffull) | (v & 0xffff);
    case 4: return v & 0xffffffffull; /* a 32-bit write zero-extends */
    default: return v;
    }
}

/* Carry out the string instruction of `st` with the registers `g`. */
static void smc_string_insn(const struct smc_site *st, uint64_t pc, greg_t *g, uint32_t site) {
    const uint32_t e = st->size;
    const int rep = st->rep != SMC_REP_NONE, down = (g[REG_EFL] & SMC_EFL_DF) != 0;
    uint64_t n = rep ? smc_reg(g, 1) : 1;
    if (!n) return; /* rep with rcx = 0: nothing, not even the flags */
    uint64_t si = smc_reg(g, 6), di = smc_reg(g, 7), acc = smc_reg(g, 0);
    const int64_t step = down ? -(int64_t)e : (int64_t)e;
    switch (st->string_op) {
    case SMC_STR_MOVS: {
        /* as one copy of the whole range when pieces in its direction read what the
         * instruction's elements would (see smc_copy_pieces); element by element otherwise */
        uint64_t len = n * e, dlo = down ? di - (n - 1) * e : di, slo = down ? si - (n - 1) * e : si;
        uint64_t gap = down ? slo - dlo : dlo - slo; /* how far the destination runs ahead */
        if (gap == 0 || gap >= e || gap >= len) {
            smc_copy_pieces(dlo, slo, len, down, pc, site);
        } else {
            uint8_t tmp[8];
            for (uint64_t k = 0; k < n; k++) {
                smc_load_pieces(si + (uint64_t)step * k, e, tmp, pc, site);
                smc_store_pieces(di + (uint64_t)step * k, e, tmp, pc, site);
            }
        }
        si += (uint64_t)step * n;
        di += (uint64_t)step * n;
        break;
    }
    case SMC_STR_STOS: {
        uint8_t pattern[8];
        memcpy(pattern, &acc, 8);
        smc_fill_pieces(down ? di - (n - 1) * e : di, n * e, pattern, e, down, pc, site);
        di += (uint64_t)step * n;
        break;
    }
    case SMC_STR_LODS: {
        /* each element a load; rax keeps the last */
        uint64_t v = 0;
        for (uint64_t k = 0; k < n; k++) smc_load_pieces(si + (uint64_t)step * k, e, &v, pc, site);
        acc = smc_acc_load(acc, v, e);
        si += (uint64_t)step * n;
        break;
    }
    case SMC_STR_CMPS:
    case SMC_STR_SCAS: {
        /* element by element until the count runs out or, with repe / repne, the condition
         * fails; the flags are those of the last compare */
        uint64_t k = 0, flags = 0;
        while (k < n) {
            uint64_t a = acc, b = 0;
            if (st->string_op == SMC_STR_CMPS) {
                a = 0;
                smc_load_pieces(si, e, &a, pc, site);
                si += (uint64_t)step;
            }
            smc_load_pieces(di, e, &b, pc, site);
            di += (uint64_t)step;
            flags = smc_cmp_flags(a, b, e);
            k++;
            if (st->rep == SMC_REP_E && !(flags & 0x40)) break;
            if (st->rep == SMC_REP_NE && (flags & 0x40)) break;
        }
        n = k;
        g[REG_EFL] = (greg_t)(((uint64_t)g[REG_EFL] & ~(uint64_t)SMC_EFL_ARITH) | flags);
        break;
    }
    default:
        return;
    }
    smc_set_reg(g, 0, acc);
    smc_set_reg(g, 6, si);
    smc_set_reg(g, 7, di);
    if (rep) smc_set_reg(g, 1, smc_reg(g, 1) - n);
}

#endif
