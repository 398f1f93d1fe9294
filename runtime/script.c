/* Scripted replay: an execution's prefix (the steps the execution before it took up to the
 * branch point) carried out by the runtime alone, from the script in the channel, instead of
 * through the supervisor step by step. Before each step it checks that the step's thread is
 * stopped where the step says; where one is not, the script ends there and the supervisor sees
 * why. For the fork executor (real threads) the script is logged: the slots each step changed,
 * from which the supervisor answers the engine's calls for those steps.
 *
 * The thread that stopped last carries out the next step itself, from smc_stop; the checks
 * that decide whether a step runs now are inlined into the stop and the worker's loop
 * (rt.h). */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>

#include "rt.h"

/* Log slot `i` as it is now, the state after `epoch` scripted steps. 0 when the log is full. */
static int log_slot(uint32_t epoch, uint32_t i) {
    uint32_t n = ch->log_len;
    if (n >= SMC_MAX_LOG || i >= SMC_MAX_THREADS) return 0;
    ch->log[n].epoch = epoch;
    ch->log[n].slot = i;
    memcpy(&ch->log[n].copy, &ch->slots[i], sizeof ch->log[n].copy);
    ch->log_len = n + 1;
    return 1;
}

/* Log what step `k - 1` changed (its thread, and the threads it created, in new slots or in
 * joined threads' ones): the state after k steps, which the supervisor reads back when it
 * replays step k - 1. */
static int log_epoch(uint32_t k) {
    if (k > 0 && ch->script[k - 1].slot != SMC_SCRIPT_COMMIT && !log_slot(k, ch->script[k - 1].slot))
        return 0;
    uint32_t reused = g_spawned_slot;
    g_spawned_slot = 0;
    if (reused && reused - 1 < ch->log_threads && !log_slot(k, reused - 1)) return 0;
    uint32_t n = LOAD(&ch->nthreads);
    for (uint32_t i = ch->log_threads; i < n; i++)
        if (!log_slot(k, i)) return 0;
    ch->log_threads = n;
    return 1;
}

/* Carry out the next scripted steps: buffered stores reach memory, then one thread is let
 * run its event: its slot + 1. 0 when the script is done (or cannot go on): the supervisor
 * takes over. */
int run_script(void) {
    uint32_t len = LOAD(&ch->script_len);
    if (len > SMC_MAX_SCRIPT) len = SMC_MAX_SCRIPT;
    for (uint32_t k = ch->script_done; k < len; k = ch->script_done) {
        if (ch->script_logged && !log_epoch(k)) return 0;
        const struct smc_script_step *st = &ch->script[k];
        if (st->slot == SMC_SCRIPT_COMMIT) {
            smc_commit(st->owner, st->addr, st->bytes, st->size);
            ch->script_done = k + 1;
            continue;
        }
        if (st->slot >= LOAD(&ch->nthreads) || LOAD(&ch->slots[st->slot].state) != SMC_SLOT_STOPPED)
            return 0; /* not what the previous execution did: the supervisor will see why */
        struct smc_slot *s = &ch->slots[st->slot];
        if ((st->expect_pc && s->pc != st->expect_pc) || (st->expect_addr && s->addr != st->expect_addr))
            return 0;
        s->reply = st->reply;
        s->patch_mask = st->patch_mask;
        if (st->patch_mask) memcpy(s->patch, st->bytes, sizeof s->patch);
        ch->script_done = k + 1;
        HANDOFF_STORE(&ch->running, 1);
        HANDOFF_STORE(&s->go, 1);
        if (st->slot != (uint32_t)t_slot && !g_coroutines) futex(&s->go, FUTEX_WAKE, 1, NULL);
        return (int)st->slot + 1;
    }
    return 0;
}

/* A coroutine that stopped last goes on with the script itself: the next step's thread runs
 * without a round through the host (two switches, one with the host's thread pointer), or
 * at once if it is this one. 0 when the script is over: the host takes over. Not inlined: its
 * frame lies below smc_stop's, where smc_stop clears after the stop (see there). */
__attribute__((noinline)) int script_goes_on(void) {
    int slot = script_step() - 1;
    if (slot < 0) return 0;
    if (slot != t_slot) g_resume = slot;
    return 1;
}

