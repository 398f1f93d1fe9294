/* The string instructions against byte loops, on shared memory while a second thread exists
 * (so that each piece is an event): every element size, alignment, direction, overlap, count,
 * and the registers and flags they leave. Exits 0 natively and must under the checker. */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#define LEN 80
static uint64_t mem_words[LEN / 8]; /* shared: each piece an event */
#define mem ((uint8_t *)mem_words)
static void *idle(void *a) { return a; }

/* the expected bytes in `ref`, on main's stack (private: no events) */
static void seed(uint8_t *ref) {
    for (int i = 0; i < LEN; i++) ref[i] = (uint8_t)(i * 7 + 3);
    for (int i = 0; i < LEN / 8; i++) memcpy(&mem_words[i], ref + 8 * i, 8);
}
static void same(const uint8_t *ref) {
    for (int i = 0; i < LEN / 8; i++) {
        uint64_t w;
        memcpy(&w, ref + 8 * i, 8);
        assert(mem_words[i] == w);
    }
}

struct regs { uint64_t si, di, cx, ax, flags; };

#define STRING_OP(insn, r)                                                                          \
    __asm__ volatile("push %5\n popfq\n " insn "\n pushfq\n pop %4"                                \
                     : "+S"((r).si), "+D"((r).di), "+c"((r).cx), "+a"((r).ax), "=r"((r).flags)     \
                     : "r"((r).flags)                                                               \
                     : "memory", "cc")

static uint64_t elem(const uint8_t *p, int e) {
    uint64_t v = 0;
    for (int k = 0; k < e; k++) v |= (uint64_t)p[k] << (8 * k);
    return v;
}

int main(void) {
    uint8_t ref[LEN];
    static const int gaps[] = {-9, -4, -1, 0, 1, 3, 9}, offsets[] = {0, 3, 5};
    pthread_t t;
    pthread_create(&t, 0, idle, 0);
    static const int sizes[] = {1, 2, 4, 8};
    for (int z = 0; z < 4; z++) {
        int e = sizes[z];
        for (int down = 0; down < 2; down++)
            for (int o = 0; o < 3; o++)
                for (int g = 0; g < 7; g++)
                    for (uint64_t n = 0; n < 5; n += 3) {
                        /* movs: element by element, in the direction of DF */
                        seed(ref);
                        uint64_t s = 32 + offsets[o], d = s + gaps[g];
                        struct regs r = {(uint64_t)(mem + s), (uint64_t)(mem + d), n, 0, down ? 0x602 : 0x202};
                        if (e == 1) STRING_OP("rep movsb", r);
                        if (e == 2) STRING_OP("rep movsw", r);
                        if (e == 4) STRING_OP("rep movsl", r);
                        if (e == 8) STRING_OP("rep movsq", r);
                        __asm__ volatile("cld");
                        for (uint64_t k = 0; k < n; k++) {
                            int64_t at = down ? -(int64_t)(k * e) : (int64_t)(k * e);
                            uint8_t tmp[8];
                            memcpy(tmp, ref + s + at, e);
                            memcpy(ref + d + at, tmp, e);
                        }
                        same(ref);
                        int64_t moved = (down ? -1 : 1) * (int64_t)(n * e);
                        assert(r.si == (uint64_t)(mem + s + moved) && r.di == (uint64_t)(mem + d + moved) && r.cx == 0);

                        /* stos */
                        seed(ref);
                        r = (struct regs){0, (uint64_t)(mem + d), n, 0x1122334455667788ull, down ? 0x602 : 0x202};
                        if (e == 1) STRING_OP("rep stosb", r);
                        if (e == 2) STRING_OP("rep stosw", r);
                        if (e == 4) STRING_OP("rep stosl", r);
                        if (e == 8) STRING_OP("rep stosq", r);
                        __asm__ volatile("cld");
                        for (uint64_t k = 0; k < n; k++) {
                            int64_t at = down ? -(int64_t)(k * e) : (int64_t)(k * e);
                            uint64_t v = 0x1122334455667788ull;
                            memcpy(ref + d + at, &v, e);
                        }
                        same(ref);
                        assert(r.di == (uint64_t)(mem + d + moved) && r.cx == 0);

                        /* lods: the last element in the accumulator, the upper bytes as the width leaves them */
                        seed(ref);
                        r = (struct regs){(uint64_t)(mem + s), 0, n, ~0ull, down ? 0x602 : 0x202};
                        if (e == 1) STRING_OP("rep lodsb", r);
                        if (e == 2) STRING_OP("rep lodsw", r);
                        if (e == 4) STRING_OP("rep lodsl", r);
                        if (e == 8) STRING_OP("rep lodsq", r);
                        __asm__ volatile("cld");
                        if (n) {
                            uint64_t v = elem(mem + s + (down ? -(int64_t)((n - 1) * e) : (int64_t)((n - 1) * e)), e);
                            uint64_t want = e == 8 ? v : e == 4 ? v : (~0ull << (8 * e)) | v;
                            assert(r.ax == want);
                        } else {
                            assert(r.ax == ~0ull);
                        }
                        assert(r.si == (uint64_t)(mem + s + moved));
                    }
        /* cmps and scas: repe / repne stop at the first (un)equal element, flags of the last compare */
        for (int ne = 0; ne < 2; ne++)
            for (int diff = 0; diff < 6; diff++) {
                seed(ref);
                for (int i = 0; i < 40; i++) mem[i] = mem[40 + i] = (uint8_t)(ne ? i + 1 : 5);
                if (diff < 5) mem[40 + diff * e] ^= (uint8_t)(diff * 16 + 1); /* element `diff` differs */
                uint64_t n = 5;
                struct regs r = {(uint64_t)(mem + 0), (uint64_t)(mem + 40), n, 0, 0x202};
                if (!ne && e == 1) STRING_OP("repe cmpsb", r);
                if (!ne && e == 2) STRING_OP("repe cmpsw", r);
                if (!ne && e == 4) STRING_OP("repe cmpsl", r);
                if (!ne && e == 8) STRING_OP("repe cmpsq", r);
                if (ne && e == 1) STRING_OP("repne cmpsb", r);
                if (ne && e == 2) STRING_OP("repne cmpsw", r);
                if (ne && e == 4) STRING_OP("repne cmpsl", r);
                if (ne && e == 8) STRING_OP("repne cmpsq", r);
                uint64_t k = 0, a = 0, b = 0;
                while (k < n) {
                    a = elem(mem + 0 + k * e, e);
                    b = elem(mem + 40 + k * e, e);
                    k++;
                    if (!ne && a != b) break;
                    if (ne && a == b) break;
                }
                assert(r.cx == n - k && r.si == (uint64_t)(mem + 0 + k * e) && r.di == (uint64_t)(mem + 40 + k * e));
                assert(!!(r.flags & 0x40) == (a == b) && !!(r.flags & 1) == (a < b));

                r = (struct regs){0, (uint64_t)(mem + 40), n, elem(mem + 0, e), 0x202};
                if (!ne && e == 1) STRING_OP("repe scasb", r);
                if (!ne && e == 2) STRING_OP("repe scasw", r);
                if (!ne && e == 4) STRING_OP("repe scasl", r);
                if (!ne && e == 8) STRING_OP("repe scasq", r);
                if (ne && e == 1) STRING_OP("repne scasb", r);
                if (ne && e == 2) STRING_OP("repne scasw", r);
                if (ne && e == 4) STRING_OP("repne scasl", r);
                if (ne && e == 8) STRING_OP("repne scasq", r);
                a = elem(mem + 0, e);
                k = 0;
                while (k < n) {
                    b = elem(mem + 40 + k * e, e);
                    k++;
                    if (!ne && a != b) break;
                    if (ne && a == b) break;
                }
                assert(r.cx == n - k && r.di == (uint64_t)(mem + 40 + k * e));
                assert(!!(r.flags & 0x40) == (a == b) && !!(r.flags & 1) == (a < b));
            }
    }
    pthread_join(t, 0);
    return 0;
}
