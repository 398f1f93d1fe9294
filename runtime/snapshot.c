/* See snapshot.h. The writable mappings come from /proc/self/maps, read into a static buffer
 * (the heap must not change while it is being described). Left out on purpose: the runtime's
 * own data (it survives executions), the dynamic linker's (only dlopen changes it, and forgetting
 * a loaded object would be worse), the engine library's (it runs the executions), and anything
 * mapped after the snapshot. */
#define _GNU_SOURCE
#include "snapshot.h"

#include "arch.h"
#include "rt.h"
#include "sys.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_REGIONS 64
#define MAX_FD_GAPS 16

static struct region {
    char *lo, *hi, *copy;
} regions[MAX_REGIONS];
static int nregions;
static size_t total_bytes;
static char *heap_lo, *snap_brk;
static int heap_region = -1;       /* its index in regions */
static char *heap_used, *heap_mark; /* see smc_snapshot_heap_mark */
#define HEAP_SLACK 64              /* malloc writes the next chunk's header after a block */
/* What a restore does, run by run: copy bytes back, or (zero) check bytes that were zero at the
 * snapshot and clear them only if written. Most of libc's .bss and of a program's data is zero
 * and stays so; reading it costs half of copying it. */
#define MAX_RUNS 1024
#define LINE 64
#define MIN_ZERO_RUN 512 /* shorter zero stretches are copied: checking them would cost more */
static struct run {
    char *lo;
    const char *copy;
    size_t len;
    int zero;
} runs[MAX_RUNS + MAX_REGIONS + 2]; /* each region ends with one run past MAX_RUNS */
static int nruns;
static struct {
    unsigned lo, hi;
} fd_gaps[MAX_FD_GAPS];
static int nfd_gaps;
static char maps[1 << 17];

/* 16-byte vectors: SSE2 on x86-64, VSX on POWER */
typedef uint64_t smc_v2 __attribute__((vector_size(16), aligned(1)));

static int all_zero(const char *p, size_t n) {
    smc_v2 a = {0, 0}, b = {0, 0}, c = {0, 0}, d = {0, 0};
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        a |= *(const smc_v2 *)(p + i);
        b |= *(const smc_v2 *)(p + i + 16);
        c |= *(const smc_v2 *)(p + i + 32);
        d |= *(const smc_v2 *)(p + i + 48);
    }
    a |= b | c | d;
    int z = (a[0] | a[1]) == 0;
    for (; i < n; i++) z &= p[i] == 0;
    return z;
}

/* The zero check of the restore: the processor's widest (arch.h), chosen at the snapshot. */
static int (*zero_check)(const char *, size_t) = all_zero;

static void add_run(char *lo, const char *copy, size_t len, int zero) {
    if (len == 0) return;
    struct run *last = nruns ? &runs[nruns - 1] : NULL;
    if (last && last->zero == zero && last->lo + last->len == lo) {
        last->len += len;
        return;
    }
    runs[nruns++] = (struct run){lo, copy, len, zero};
}

/* The runs of [lo, hi), whose copy is at `copy`: zero stretches of MIN_ZERO_RUN bytes or more
 * (in whole lines) are checked, the rest copied. Past MAX_RUNS, the rest is copied. */
static void plan_runs(char *lo, char *hi, const char *copy) {
    char *p = lo;
    while (p < hi) {
        if (nruns >= MAX_RUNS) break;
        char *z = p; /* the next zero stretch long enough: [z, e) */
        char *e = p;
        while (z < hi) {
            e = z;
            while (e + LINE <= hi && all_zero(copy + (e - lo), LINE)) e += LINE;
            if (e - z >= MIN_ZERO_RUN) break;
            z = e + LINE;
        }
        if (z >= hi) break;
        add_run(p, copy + (p - lo), (size_t)(z - p), 0);
        add_run(z, NULL, (size_t)(e - z), 1);
        p = e;
    }
    add_run(p, copy + (p - lo), (size_t)(hi - p), 0);
}

static const char *add(char *lo, char *hi) {
    if (hi <= lo) return NULL;
    if (nregions >= MAX_REGIONS) return "too many writable mappings";
    regions[nregions].lo = lo;
    regions[nregions].hi = hi;
    nregions++;
    total_bytes += (size_t)(hi - lo);
    return NULL;
}

static uint64_t hex(const char **p) {
    uint64_t v = 0;
    for (;; (*p)++) {
        char c = **p;
        if (c >= '0' && c <= '9') v = v * 16 + (uint64_t)(c - '0');
        else if (c >= 'a' && c <= 'f') v = v * 16 + (uint64_t)(c - 'a' + 10);
        else return v;
    }
}

static uint64_t dec(const char **p) {
    uint64_t v = 0;
    for (; **p >= '0' && **p <= '9'; (*p)++) v = v * 10 + (uint64_t)(**p - '0');
    return v;
}

/* One line of /proc/self/maps: "lo-hi perms offset dev inode   path". */
struct mapping {
    uint64_t lo, hi, inode;
    char perms[5];
    char dev[12];
    const char *path; /* up to the end of the line */
    size_t path_len;
};

static const char *parse(const char *p, struct mapping *m) {
    m->lo = hex(&p);
    if (*p++ != '-') return NULL;
    m->hi = hex(&p);
    if (*p++ != ' ') return NULL;
    memcpy(m->perms, p, 4);
    m->perms[4] = 0;
    p += 4;
    if (*p++ != ' ') return NULL;
    hex(&p); /* offset */
    if (*p++ != ' ') return NULL;
    size_t n = 0;
    while (*p && *p != ' ' && n + 1 < sizeof m->dev) m->dev[n++] = *p++;
    m->dev[n] = 0;
    if (*p++ != ' ') return NULL;
    m->inode = dec(&p);
    while (*p == ' ') p++;
    m->path = p;
    while (*p && *p != '\n') p++;
    m->path_len = (size_t)(p - m->path);
    return *p == '\n' ? p + 1 : p;
}

static int is(const struct mapping *m, const char *name) {
    return m->path_len == strlen(name) && memcmp(m->path, name, m->path_len) == 0;
}

/* The file (device and inode) mapped at `addr`, if any. */
static int file_at(uint64_t addr, struct mapping *out) {
    for (const char *p = maps; *p;) {
        struct mapping m;
        const char *next = parse(p, &m);
        if (!next) return 0;
        if (addr >= m.lo && addr < m.hi) {
            *out = m;
            return m.inode != 0;
        }
        p = next;
    }
    return 0;
}

static int same_file(const struct mapping *a, int a_ok, const struct mapping *b) {
    return a_ok && a->inode == b->inode && strcmp(a->dev, b->dev) == 0;
}

static const char *read_maps(void) {
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return "cannot read /proc/self/maps";
    size_t len = 0;
    for (;;) {
        ssize_t n = read(fd, maps + len, sizeof maps - 1 - len);
        if (n < 0) {
            close(fd);
            return "cannot read /proc/self/maps";
        }
        if (n == 0) break;
        len += (size_t)n;
        if (len == sizeof maps - 1) {
            close(fd);
            return "too many mappings";
        }
    }
    close(fd);
    maps[len] = 0;
    return NULL;
}

/* Which of the descriptors below 1024 are open: from /proc/self/fd (one read), else asked one
 * by one. */
static void open_fds(unsigned char is_open[1024]) {
    memset(is_open, 0, 1024);
    int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) {
        for (int fd = 0; fd < 1024; fd++) is_open[fd] = fcntl(fd, F_GETFD) >= 0;
        return;
    }
    char buf[4096];
    long n;
    while ((n = sys_getdents64(dir, buf, sizeof buf)) > 0) {
        for (long off = 0; off < n;) {
            struct dirent64 *d = (struct dirent64 *)(buf + off);
            off += d->d_reclen;
            if (d->d_name[0] < '0' || d->d_name[0] > '9') continue;
            long fd = strtol(d->d_name, NULL, 10);
            if (fd < 1024 && fd != dir) is_open[fd] = 1;
        }
    }
    close(dir);
}

static void remember_fds(void) {
    /* the gaps among the descriptors open now, and everything above the highest */
    static unsigned char is_open[1024];
    open_fds(is_open);
    nfd_gaps = 0;
    int gap = -1, highest = -1;
    for (int fd = 0; fd < 1024; fd++) {
        if (is_open[fd]) {
            if (gap >= 0 && nfd_gaps < MAX_FD_GAPS - 1) {
                fd_gaps[nfd_gaps].lo = (unsigned)gap;
                fd_gaps[nfd_gaps].hi = (unsigned)fd - 1;
                nfd_gaps++;
            }
            gap = -1;
            highest = fd;
        } else if (gap < 0) {
            gap = fd;
        }
    }
    fd_gaps[nfd_gaps].lo = (unsigned)(highest + 1);
    fd_gaps[nfd_gaps].hi = ~0u;
    nfd_gaps++;
}

const char *smc_snapshot_take(char **argv, const struct smc_range *extra, int nextra, const void *keep) {
    const char *why = read_maps();
    if (why) return why;
    struct mapping self, ld, kept;
    int self_ok = file_at((uint64_t)(uintptr_t)&smc_snapshot_take, &self);
    int ld_ok = file_at(getauxval(AT_BASE), &ld);
    int kept_ok = keep && file_at((uint64_t)(uintptr_t)keep, &kept);
    nregions = 0;
    total_bytes = 0;
    heap_lo = NULL;
    char *stack_hi = NULL;
    /* qemu-user does not label the brk heap [heap]: it is the anonymous mapping that ends at the
     * break, after the program's .bss (checking all of it at each restore took 50 us there) */
    char *brk_now = sys_brk(NULL);
    uint64_t bias, lo, bss_end; /* the program's end: its .bss's */
    program_span(&bias, &lo, &bss_end);
    uint64_t after = 0; /* end of the last file mapping copied: its .bss may follow */
    for (const char *p = maps; *p;) {
        struct mapping m;
        const char *next = parse(p, &m);
        if (!next) return "cannot parse /proc/self/maps";
        p = next;
        int rw = strcmp(m.perms, "rw-p") == 0;
        if (is(&m, "[heap]")) {
            heap_lo = (char *)(uintptr_t)m.lo;
        } else if (is(&m, "[stack]")) {
            stack_hi = (char *)(uintptr_t)m.hi;
        } else if (rw && m.inode && !same_file(&self, self_ok, &m) && !same_file(&ld, ld_ok, &m) &&
                   !same_file(&kept, kept_ok, &m)) {
            if ((why = add((char *)(uintptr_t)m.lo, (char *)(uintptr_t)m.hi))) return why;
            after = m.hi;
            continue;
        } else if (rw && !m.inode && m.path_len == 0 && m.lo == after) {
            uint64_t hi = m.hi;
            if (!heap_lo && hi == (uint64_t)(uintptr_t)brk_now && bss_end < hi) {
                hi = bss_end > m.lo ? bss_end : m.lo;
                heap_lo = (char *)(uintptr_t)hi;
            }
            if ((why = add((char *)(uintptr_t)m.lo, (char *)(uintptr_t)hi))) return why; /* .bss */
        }
        after = 0;
    }
    for (int i = 0; i < nextra; i++)
        if ((why = add(extra[i].lo, extra[i].hi))) return why;
    /* argc, argv, the environment and auxv: programs may rewrite them (getopt permutes argv) */
    if (!stack_hi) return "no [stack] mapping";
    if ((why = add((char *)(argv - 1), stack_hi))) return why;
    snap_brk = brk_now;
    if (!heap_lo) heap_lo = snap_brk;
    heap_region = nregions;
    if ((why = add(heap_lo, snap_brk))) return why;
    /* the heap's last non-zero word: above it lies the interior of malloc's top chunk */
    heap_used = snap_brk;
    while (heap_used >= heap_lo + 8 && *(const uint64_t *)(uintptr_t)(heap_used - 8) == 0) heap_used -= 8;
    heap_used += HEAP_SLACK;
    heap_mark = heap_used;

    /* above the heap's part in use all is zero: no copy of it (see restore) */
    total_bytes -= (size_t)(snap_brk - (heap_used < snap_brk ? heap_used : snap_brk));
    char *copies = mmap(NULL, total_bytes + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (copies == MAP_FAILED) return "no memory for the snapshot";
    nruns = 0;
#ifdef SMC_HAVE_WIDE_ZERO
    if (smc_wide_zero_usable()) zero_check = smc_all_zero_wide;
#endif
    for (int i = 0; i < nregions; i++) {
        char *hi = regions[i].hi;
        if (i == heap_region && heap_used < hi) hi = heap_used;
        regions[i].copy = copies;
        memcpy(copies, regions[i].lo, (size_t)(hi - regions[i].lo));
        plan_runs(regions[i].lo, hi, copies);
        copies += hi - regions[i].lo;
    }
    remember_fds();
    return NULL;
}

void smc_snapshot_restore(int close_fds) {
    /* the heap first: its pages must be there before they are copied back */
    if ((char *)sbrk(0) != snap_brk) {
        sys_brk(snap_brk);
        heap_mark = snap_brk;
    }
    for (int i = 0; i < nruns; i++) {
        struct run *r = &runs[i];
        if (!r->zero) {
            memcpy(r->lo, r->copy, r->len);
            continue;
        }
        for (size_t off = 0; off < r->len; off += 1024) {
            size_t n = r->len - off < 1024 ? r->len - off : 1024;
            if (!zero_check(r->lo + off, n)) memset(r->lo + off, 0, n);
        }
    }
    /* above the heap's part in use at the snapshot, all was zero: what the execution used
     * (no region when the heap was empty) */
    if (heap_region < nregions) {
        char *hi = heap_mark < regions[heap_region].hi ? heap_mark : regions[heap_region].hi;
        if (heap_used < hi) memset(heap_used, 0, (size_t)(hi - heap_used));
    }
    heap_mark = heap_used;
    for (int i = 0; close_fds && i < nfd_gaps; i++) sys_close_range(fd_gaps[i].lo, fd_gaps[i].hi, 0);
}

void smc_snapshot_heap_mark(const char *end) {
    if (end + HEAP_SLACK > heap_mark) heap_mark = (char *)end + HEAP_SLACK;
}

size_t smc_snapshot_bytes(void) { return total_bytes; }
