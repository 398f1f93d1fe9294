/* Start-up: at load (smc_init, the runtime's one constructor) the runtime maps the channel,
 * receives the relocated copies, writes the jump-hook stubs (targets/ARCH/hook.h) and patches
 * every instrumented instruction of the executable: a jump to its stub, or int3 (trap.c). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt.h"
#include "hook.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

/* ---- start-up: map the channel, receive the relocated copies, patch the text ---- */

static void init_fail(const char *msg) {
    snprintf(ch->err_msg, SMC_MSG_LEN, "%s", msg);
    STORE(&ch->init_state, SMC_INIT_FAILED);
    notify_supervisor();
    futex_wake_all(&ch->init_state);
    die_now(126);
}

/* A trampoline near the text, so relocated pc-relative operands and branches reach. */
static uint8_t *map_near(uint64_t lo, uint64_t hi, uint64_t size) {
    const uint64_t step = 1ULL << 20;
    for (uint64_t d = step; d + size < SMC_TRAMP_REACH; d += step) {
        uint64_t cand[2] = {((hi + d) & ~(step - 1)), lo > d + size ? ((lo - d - size) & ~(step - 1)) : 0};
        for (int k = 0; k < 2; k++) {
            if (!cand[k]) continue;
            void *p = mmap((void *)cand[k], size, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
            if (p != MAP_FAILED) {
                if ((uint64_t)(uintptr_t)p == cand[k]) return p;
                munmap(p, size);
            }
        }
    }
    return NULL;
}

/* The trampoline: the relocated copies (the supervisor's), then an 8-byte pointer to the hook
 * entry and one jump-hook stub per site. */
static uint64_t tramp_size(void) {
    return ch->code_cap + 8 + (uint64_t)g_nsites * SMC_HOOK_STUB_LEN;
}

static uint64_t stub_addr(uint32_t i) {
    return (uint64_t)(uintptr_t)g_tramp + ch->code_cap + 8 + (uint64_t)i * SMC_HOOK_STUB_LEN;
}

const struct smc_site *site_of_stub(uint64_t pc) {
    uint64_t first = stub_addr(0);
    if (!g_tramp || pc < first || (pc - first) % SMC_HOOK_STUB_LEN) return NULL;
    uint64_t i = (pc - first) / SMC_HOOK_STUB_LEN;
    return i < g_nsites ? &g_sites[i] : NULL;
}

/* Write every stub; false when jump hooks cannot be used here (int3 serves every site, and
 * every stub is a trap). */
static int write_stubs(void) {
    if (ch->flags & SMC_FLAG_SSE_ONLY) smc_hook_sse_only = getenv("SMC_HOOK_SCRAMBLE") ? 3 : 1;
    if (getenv("SMC_NO_JUMP_HOOKS") || !smc_hooks_init()) {
        /* a chained site's copy goes on to the next site's stub: a trap there (on_trap) */
        for (uint32_t i = 0; i < g_nsites; i++) smc_write_trap((uint8_t *)(uintptr_t)stub_addr(i));
        return 0;
    }
    uint64_t entry_ptr = (uint64_t)(uintptr_t)g_tramp + ch->code_cap;
    void (*entry)(void) = smc_hook_entry;
    memcpy((void *)(uintptr_t)entry_ptr, &entry, 8);
    for (uint32_t i = 0; i < g_nsites; i++) {
        uint64_t copy = (uint64_t)(uintptr_t)g_tramp + g_sites[i].copy_off;
        smc_write_stub((uint8_t *)(uintptr_t)stub_addr(i), i, entry_ptr, copy);
    }
    return 1;
}

static void wait_init_state(uint32_t want) {
    for (;;) {
        uint32_t s = LOAD(&ch->init_state);
        if (s == want) return;
        if (s == SMC_INIT_FAILED) die_now(126);
        futex(&ch->init_state, FUTEX_WAIT, s, NULL);
    }
}

__attribute__((constructor)) static void smc_init(void) {
    heap_ready();
    memory_init();
    /* resolved even when inactive: the interposed functions forward to them */
    real_pthread_create = dlsym(RTLD_NEXT, "pthread_create");
    real_pthread_join = dlsym(RTLD_NEXT, "pthread_join");
    real_pthread_exit = dlsym(RTLD_NEXT, "pthread_exit");
    real_exit = dlsym(RTLD_NEXT, "exit");
    real_assert_fail = dlsym(RTLD_NEXT, "__assert_fail");
    const char *fdenv = getenv("SMC_CHANNEL_FD");
    if (!fdenv) return;
    int fd = atoi(fdenv);
    /* the loader has read us: the program need not see our file (nor the worker put back
     * one more fd gap per execution) */
    const char *rtenv = getenv("SMC_RUNTIME_FD");
    if (rtenv && atoi(rtenv) > 2 && atoi(rtenv) != fd) close(atoi(rtenv));
    const char *lib = getenv("SMC_ENGINE_LIB"), *area = getenv("SMC_ENGINE_FD");
    if (lib && area && strlen(lib) < sizeof g_engine_lib) {
        /* mapped once, its descriptor closed: every execution starts with descriptors 0-2
         * only, which the reset closes above in one call. A raw mmap: not the program's. */
        int afd = atoi(area);
        struct stat st;
        if (afd > 2 && afd != fd && fstat(afd, &st) == 0) {
            long p = sys_mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, afd, 0);
            if (p != -1) {
                g_engine_area = (void *)p;
                strcpy(g_engine_lib, lib);
            }
            close(afd);
        }
    }
    /* helpers the program starts must not inherit the checker */
    unsetenv("SMC_ENGINE_LIB");
    unsetenv("SMC_ENGINE_FD");
    unsetenv("SMC_RUNTIME_FD");
    unsetenv("SMC_CHANNEL_FD");
    unsetenv("LD_PRELOAD");
    struct smc_header *h = mmap(NULL, sizeof *h, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (h == MAP_FAILED) die_now(126);
    if (h->magic != SMC_CHANNEL_MAGIC || h->version != SMC_CHANNEL_VERSION) die_now(126);
    uint64_t total = h->total_size;
    munmap(h, sizeof *h);
    ch = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (ch == MAP_FAILED) die_now(126);
    close(fd);

    if (!real_pthread_create || !real_pthread_join || !real_pthread_exit || !real_exit || !real_assert_fail)
        init_fail("runtime: cannot resolve the pthread functions");

    uint64_t text_lo, text_hi;
    program_span(&g_bias, &text_lo, &text_hi);
    g_nsites = ch->nsites;
    g_sites = (const struct smc_site *)((char *)ch + ch->sites_off);
    if (ch->code_cap) {
        g_tramp = map_near(text_lo, text_hi, tramp_size());
        if (!g_tramp) init_fail("runtime: no room for a trampoline near the program's text");
    }
    ch->load_bias = g_bias;
    ch->tramp_addr = (uint64_t)(uintptr_t)g_tramp;
    ch->self_addr = (uint64_t)(uintptr_t)ch;
    STORE(&ch->init_state, SMC_INIT_MAPPED);
    notify_supervisor();
    wait_init_state(SMC_INIT_CODE);

    int hooks = 0;
    if (g_tramp) {
        memcpy(g_tramp, (char *)ch + ch->code_off, ch->code_cap);
        hooks = write_stubs();
        mprotect(g_tramp, tramp_size(), PROT_READ | PROT_EXEC);
    }
    install_handlers();
    long pg = sysconf(_SC_PAGESIZE);
    for (uint32_t i = 0; i < g_nsites; i++) {
        uint8_t *at = (uint8_t *)(uintptr_t)(g_bias + g_sites[i].offset);
        if (*at != g_sites[i].orig) init_fail("runtime: the executable in memory differs from the file");
    }
    uint64_t jumped = 0; /* the end of the last jump written: a chained site's covers the next site */
    for (uint32_t i = 0; i < g_nsites;) {
        /* one mprotect round per run of sites on the same pages */
        uint64_t first = (g_bias + g_sites[i].offset) & ~(uint64_t)(pg - 1);
        uint32_t j = i;
        while (j < g_nsites && ((g_bias + g_sites[j].offset) & ~(uint64_t)(pg - 1)) <= first + (uint64_t)pg)
            j++;
        uint64_t last = (g_bias + g_sites[j - 1].offset + g_sites[j - 1].len + pg - 1) & ~(uint64_t)(pg - 1);
        if (mprotect((void *)first, last - first, PROT_READ | PROT_WRITE | PROT_EXEC))
            init_fail("runtime: cannot make the text writable");
        for (uint32_t k = i; k < j; k++) {
            /* a private site only once some stack or TLS memory is shared */
            if ((g_sites[k].flags & SMC_SITE_PRIVATE) &&
                !(ch->flags & (SMC_FLAG_SHARED_STACKS | SMC_FLAG_ALL_STACKS)))
                continue;
            uint8_t *at = (uint8_t *)(uintptr_t)(g_bias + g_sites[k].offset);
            if ((uint64_t)(uintptr_t)at < jumped) continue; /* reached through the stub only */
            uint64_t stub = stub_addr(k);
            /* a store-conditional's hook sets the pc (it is carried out), a stub goes on to the copy */
            if (hooks && g_sites[k].len >= SMC_HOOK_LEN && !(g_sites[k].flags & SMC_SITE_RESERVE) &&
                smc_reaches((uint64_t)(uintptr_t)at, stub)) {
                smc_write_jump(at, stub);
                jumped = (uint64_t)(uintptr_t)at + SMC_HOOK_LEN;
            } else
                smc_write_trap(at);
        }
        mprotect((void *)first, last - first, PROT_READ | PROT_EXEC);
        i = j;
    }
    g_active = 1;
}

