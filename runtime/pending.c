/* A thread's own buffered stores (TSO, PSO), as the thread itself sees them.
 *
 * The engine keeps the store buffers; a load the program makes at an instrumented site reads
 * its own thread's buffered bytes because the engine patches them in. Code that is not
 * instrumented (the C library, the C++ runtime, the kernel in a system call) has no such
 * patch, yet on the processor it too reads the thread's stores through the buffer: strtol of a
 * string the thread just wrote, the demangled name std::terminate prints. So the runtime keeps
 * each thread's buffered stores here, from the stop that captured one to the commit that
 * takes it to memory, and puts them in memory (over what is there) while their thread runs:
 * no other thread runs then, so none of them sees them early.
 *
 * A buffered store reaches memory by a commit of its owner's oldest buffered store at its
 * address (under TSO the oldest of all; under PSO each address has its own queue): the same
 * rule by which src/engine/buffer.rs takes an entry, and src/channel retires an entry the
 * engine writes into memory itself. */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>

#include "rt.h"

static inline struct smc_pending *entry(uint32_t i) { return &ch->pending[i - 1]; }

int smc_pending_push(struct smc_slot *s, uint64_t addr, uint32_t size, const uint8_t *bytes) {
    if (size > SMC_MAX_ACCESS) return 1; /* not buffered */
    uint32_t i = ch->pending_free;
    if (i) ch->pending_free = entry(i)->next;
    else if (ch->pending_top < SMC_MAX_PENDING) i = ++ch->pending_top;
    else return 0;
    struct smc_pending *p = entry(i);
    p->addr = addr;
    p->size = size;
    memcpy(p->bytes, bytes, size);
    p->prev = s->pending_tail;
    p->next = 0;
    if (s->pending_tail) entry(s->pending_tail)->next = i;
    else s->pending_head = i;
    s->pending_tail = i;
    return 1;
}

/* A buffered store of slot `owner` reaches memory (bytes the supervisor sent: checked before
 * use), and leaves the stores its owner sees. */
void smc_commit(uint32_t owner, uint64_t addr, const uint8_t *bytes, uint32_t size) {
    if (addr >= 4096 && size <= SMC_MAX_ACCESS) memcpy((void *)(uintptr_t)addr, bytes, size);
    if (owner >= SMC_MAX_THREADS) return;
    struct smc_slot *s = &ch->slots[owner];
    for (uint32_t i = s->pending_head; i; i = entry(i)->next) {
        struct smc_pending *p = entry(i);
        if (p->addr != addr) continue;
        if (p->prev) entry(p->prev)->next = p->next;
        else s->pending_head = p->next;
        if (p->next) entry(p->next)->prev = p->prev;
        else s->pending_tail = p->prev;
        p->next = ch->pending_free;
        ch->pending_free = i;
        return;
    }
}

void smc_pending_show(struct smc_slot *s) {
    for (uint32_t i = s->pending_head; i; i = entry(i)->next) {
        struct smc_pending *p = entry(i);
        memcpy(p->saved, (const void *)(uintptr_t)p->addr, p->size);
        memcpy((void *)(uintptr_t)p->addr, p->bytes, p->size);
    }
}

/* Newest first, so that what an older store covered comes back last. A byte that no longer
 * holds what the store put there was written since by the thread's code that is not
 * instrumented: it stays (as that code's writes elsewhere do). */
void smc_pending_hide(struct smc_slot *s) {
    for (uint32_t i = s->pending_tail; i; i = entry(i)->prev) {
        struct smc_pending *p = entry(i);
        uint8_t *m = (uint8_t *)(uintptr_t)p->addr;
        if (memcmp(m, p->bytes, p->size) == 0) {
            memcpy(m, p->saved, p->size);
            continue;
        }
        for (uint32_t k = 0; k < p->size; k++)
            if (m[k] == p->bytes[k]) m[k] = p->saved[k];
    }
}
