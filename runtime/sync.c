/* Synchronisation, assertions and the SV-COMP conventions: the pthread and semaphore calls,
 * __assert_fail and __VERIFIER_*, each a visible operation (smc_stop) that the engine models.
 * In an execution the real objects are never touched (the engine owns their state, so that
 * blocking is visible to it and never happens in the kernel); outside one, the calls go on to
 * libc. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "rt.h"

EXPORT void __assert_fail(const char *assertion, const char *file, unsigned line, const char *function) {
    if (in_execution()) {
        char msg[SMC_MSG_LEN];
        snprintf(msg, sizeof msg, "%s:%u: %s: Assertion `%s' failed.", file, line, function ? function : "?",
                 assertion);
        report_error(SMC_ERR_ASSERT, SIGABRT, CALLER_PC, 0, msg);
    }
    real_assert_fail(assertion, file, line, function);
}

/* ---- atomic sections: nested ones (an atomic function calling another) are one ---- */

__thread int t_atomic_depth;
/* A section is announced with its first visible operation (smc_stop): one with none inside is
 * no section (no other thread could have told), only the fence a section begins with. */
__thread uint64_t t_atomic_begin_pc;

void atomic_begin(uint64_t pc) {
    if (in_execution() && t_atomic_depth++ == 0) t_atomic_begin_pc = pc ? pc : 1;
}
void atomic_end(uint64_t pc) {
    if (!in_execution() || t_atomic_depth == 0 || --t_atomic_depth) return;
    if (!t_atomic_begin_pc) {
        smc_stop(SMC_OP_ATOMIC_END, 0, 0, 1, 0, pc, 0, 0);
        return;
    }
    t_atomic_begin_pc = 0;
    if (ch->flags & SMC_FLAG_FENCES_VISIBLE) smc_stop(SMC_OP_FENCE, 0, 0, 0, 1, pc, 0, 0);
}

/* ---- synchronisation: modelled by the supervisor, never executed for real ---- */

/* The graph engine's replies (src/engine/trust/objects.rs): BUSY, to an operation that must
 * wait, asks it again (an await loop, which waits for the write that lets it through; the
 * interleaving engine lets it run only once it can go on); MUTEX_APART, in a condition
 * variable's wait, has its mutex released or taken again as an operation of its own. */
#define SMC_BUSY 1
#define SMC_MUTEX_APART (1ull << 32)
#define VISIBLE(op, a, a2, arg) smc_stop((op), (uint64_t)(uintptr_t)(a), (uint64_t)(uintptr_t)(a2), 1, (arg), CALLER_PC, 0, 0)
/* A try (a lock's or a semaphore's that returns at once): a loop of them in the same state waits
 * for the object to change, as an await loop does (smc_stop_try) */
#define TRY_VISIBLE(op, a, arg) smc_stop_try((op), (uint64_t)(uintptr_t)(a), (arg), CALLER_PC)

/* Mutexes that know their owner: a recursive one (PTHREAD_MUTEX_RECURSIVE, std::recursive_mutex)
 * that its owner locks again only counts, an error-checking one refuses its owner's relock
 * (EDEADLK), and both, as robust, priority-inheriting and -protecting ones, refuse an unlock by
 * another thread (EPERM). glibc's own owner and count fields, which nothing else uses during an
 * execution (the real mutex is never locked then), hold the owner's slot + 1 and the depth: a
 * thread reads there only what it wrote itself, or the 0 its owner left at the unlock that let
 * it take the mutex. */
static int mutex_type(pthread_mutex_t *m) { return m->__data.__kind & 3; }
static int recursive(pthread_mutex_t *m) { return mutex_type(m) == PTHREAD_MUTEX_RECURSIVE_NP; }
static int errorcheck(pthread_mutex_t *m) { return mutex_type(m) == PTHREAD_MUTEX_ERRORCHECK_NP; }
/* (glibc's PTHREAD_MUTEX_ROBUST_NORMAL_NP, PRIO_INHERIT_NP and PRIO_PROTECT_NP kind bits) */
#define OWNER_CHECKED_KINDS (16 | 32 | 64)
static int knows_owner(pthread_mutex_t *m) {
    return recursive(m) || errorcheck(m) || (m->__data.__kind & OWNER_CHECKED_KINDS);
}
static int owned(pthread_mutex_t *m) { return m->__data.__owner == t_slot + 1; }
static int relocked(pthread_mutex_t *m) {
    if (!recursive(m) || !owned(m)) return 0;
    m->__data.__count++;
    return 1;
}
static void taken(pthread_mutex_t *m) {
    if (!knows_owner(m)) return;
    m->__data.__owner = t_slot + 1;
    m->__data.__count = 1;
}

static void lock_visible(void *m) {
    while (VISIBLE(SMC_OP_MUTEX_LOCK, m, 0, 0) == SMC_BUSY) {
    }
}

EXPORT int pthread_mutex_lock(pthread_mutex_t *m) {
    if (!in_execution()) REAL(pthread_mutex_lock, m);
    if (relocked(m)) return 0;
    if (errorcheck(m) && owned(m)) return EDEADLK;
    lock_visible(m);
    taken(m);
    return 0;
}
EXPORT int pthread_mutex_trylock(pthread_mutex_t *m) {
    if (!in_execution()) REAL(pthread_mutex_trylock, m);
    if (relocked(m)) return 0;
    if (knows_owner(m) && owned(m)) return EBUSY;
    if (TRY_VISIBLE(SMC_OP_MUTEX_TRYLOCK, m, 0)) return EBUSY;
    taken(m);
    return 0;
}
EXPORT int pthread_mutex_unlock(pthread_mutex_t *m) {
    if (!in_execution()) REAL(pthread_mutex_unlock, m);
    if (knows_owner(m)) {
        if (!owned(m)) return EPERM;
        if (--m->__data.__count > 0) return 0;
        m->__data.__owner = 0;
    }
    VISIBLE(SMC_OP_MUTEX_UNLOCK, m, 0, 0);
    return 0;
}

/* pthread_once (std::call_once): the first caller runs the routine while holding the control
 * word as a mutex, the others wait for it there; glibc's done bit (2) marks it run, also when
 * it ran before the execution. Every call takes the mutex: whether the routine ran is what
 * the call reads, and the engine must see it. */
EXPORT int pthread_once(pthread_once_t *once, void (*routine)(void)) {
    if (!in_execution()) REAL(pthread_once, once, routine);
    lock_visible(once);
    if (!(*once & 2)) {
        routine();
        __atomic_store_n(once, 2, __ATOMIC_RELEASE);
    }
    VISIBLE(SMC_OP_MUTEX_UNLOCK, once, 0, 0);
    return 0;
}
EXPORT int pthread_spin_lock(pthread_spinlock_t *m) {
    if (!in_execution()) REAL(pthread_spin_lock, m);
    lock_visible((void *)m);
    return 0;
}
/* Under store buffers, a full fence first where the engines would not see one: glibc's spin
 * try-lock is a locked compare-exchange whether it takes the lock or not (a mutex's or a
 * semaphore's try only loads the word when it fails), and sched_yield enters the kernel, whose
 * way back drains the buffer. */
static void call_fence(uint64_t pc) {
    if (ch->flags & SMC_FLAG_STORE_BUFFERS) smc_stop(SMC_OP_FENCE, 0, 0, 0, 1, pc, 0, 0);
}
EXPORT int pthread_spin_trylock(pthread_spinlock_t *m) {
    if (!in_execution()) REAL(pthread_spin_trylock, m);
    call_fence(CALLER_PC);
    return TRY_VISIBLE(SMC_OP_MUTEX_TRYLOCK, m, 0) ? EBUSY : 0;
}
EXPORT int pthread_spin_unlock(pthread_spinlock_t *m) {
    if (!in_execution()) REAL(pthread_spin_unlock, m);
    VISIBLE(SMC_OP_MUTEX_UNLOCK, m, 0, 0);
    return 0;
}
static int cond_wait(pthread_cond_t *c, pthread_mutex_t *m, int timed) {
    unsigned depth = m->__data.__count;
    if (knows_owner(m)) {
        if (!owned(m)) return EPERM;
        m->__data.__owner = 0;
    }
    uint64_t r = VISIBLE(SMC_OP_COND_WAIT, c, m, timed);
    if (r & SMC_MUTEX_APART) VISIBLE(SMC_OP_MUTEX_UNLOCK, m, 0, 0);
    while ((r = VISIBLE(SMC_OP_COND_REACQUIRE, c, m, timed)) == SMC_BUSY) {
    }
    if (r & SMC_MUTEX_APART) lock_visible(m);
    if (knows_owner(m)) {
        m->__data.__owner = t_slot + 1;
        m->__data.__count = depth;
    }
    return (int)(uint32_t)r;
}
EXPORT int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m) {
    if (!in_execution()) REAL(pthread_cond_wait, c, m);
    return cond_wait(c, m, 0);
}
EXPORT int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *ts) {
    if (!in_execution()) REAL(pthread_cond_timedwait, c, m, ts);
    return cond_wait(c, m, 1);
}
/* (the clock does not matter: a timed wait may time out wherever it waits) */
EXPORT int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock, const struct timespec *ts) {
    if (!in_execution()) REAL(pthread_cond_clockwait, c, m, clock, ts);
    return cond_wait(c, m, 1);
}
EXPORT int pthread_cond_signal(pthread_cond_t *c) {
    if (!in_execution()) REAL(pthread_cond_signal, c);
    VISIBLE(SMC_OP_COND_SIGNAL, c, 0, 0);
    return 0;
}
EXPORT int pthread_cond_broadcast(pthread_cond_t *c) {
    if (!in_execution()) REAL(pthread_cond_broadcast, c);
    VISIBLE(SMC_OP_COND_BROADCAST, c, 0, 0);
    return 0;
}
/* glibc's rwlock refuses its writer's relock, for reading or writing (EDEADLK; a try: EBUSY): its
 * writer field, which the real lock does not use during an execution, holds the writer's slot
 * + 1 (what a thread reads there is its own, as with a mutex's owner). */
static int written_by_me(pthread_rwlock_t *l) { return l->__data.__cur_writer == t_slot + 1; }
static int rw_lock(int op, pthread_rwlock_t *l) {
    if (written_by_me(l)) return EDEADLK;
    uint64_t r;
    while ((r = VISIBLE(op, l, 0, 0)) == SMC_BUSY) {
    }
    return (int)r;
}
static int rw_try(int op, pthread_rwlock_t *l) {
    if (written_by_me(l)) return EBUSY;
    return (int)TRY_VISIBLE(op, l, 1);
}
EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t *l) {
    if (!in_execution()) REAL(pthread_rwlock_rdlock, l);
    return rw_lock(SMC_OP_RW_RDLOCK, l);
}
EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t *l) {
    if (!in_execution()) REAL(pthread_rwlock_tryrdlock, l);
    return rw_try(SMC_OP_RW_RDLOCK, l);
}
EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *l) {
    if (!in_execution()) REAL(pthread_rwlock_wrlock, l);
    int r = rw_lock(SMC_OP_RW_WRLOCK, l);
    if (r == 0) l->__data.__cur_writer = t_slot + 1;
    return r;
}
EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t *l) {
    if (!in_execution()) REAL(pthread_rwlock_trywrlock, l);
    int r = rw_try(SMC_OP_RW_WRLOCK, l);
    if (r == 0) l->__data.__cur_writer = t_slot + 1;
    return r;
}
EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *l) {
    if (!in_execution()) REAL(pthread_rwlock_unlock, l);
    if (written_by_me(l)) l->__data.__cur_writer = 0;
    VISIBLE(SMC_OP_RW_UNLOCK, l, 0, 0);
    return 0;
}
EXPORT int pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *a, unsigned count) {
    if (!in_execution()) REAL(pthread_barrier_init, b, a, count);
    if (count == 0) return EINVAL;
    VISIBLE(SMC_OP_BARRIER_INIT, b, 0, count);
    return 0;
}
EXPORT int pthread_barrier_wait(pthread_barrier_t *b) {
    if (!in_execution()) REAL(pthread_barrier_wait, b);
    if (VISIBLE(SMC_OP_BARRIER_WAIT, b, 0, 0)) return PTHREAD_BARRIER_SERIAL_THREAD;
    while (VISIBLE(SMC_OP_BARRIER_LEAVE, b, 0, 0) == SMC_BUSY) {
    }
    return 0;
}
/* The engine keeps the barrier's state; the real object was never initialised in the
 * execution (glibc's destroy would divide by its count of zero). */
EXPORT int pthread_barrier_destroy(pthread_barrier_t *b) {
    if (!in_execution()) REAL(pthread_barrier_destroy, b);
    return 0;
}
EXPORT int sem_init(sem_t *s, int pshared, unsigned value) {
    if (!in_execution()) REAL(sem_init, s, pshared, value);
    VISIBLE(SMC_OP_SEM_INIT, s, 0, value);
    return 0;
}
EXPORT int sem_wait(sem_t *s) {
    if (!in_execution()) REAL(sem_wait, s);
    while (VISIBLE(SMC_OP_SEM_WAIT, s, 0, 0) == SMC_BUSY) {
    }
    return 0;
}
EXPORT int sem_trywait(sem_t *s) {
    if (!in_execution()) REAL(sem_trywait, s);
    if (TRY_VISIBLE(SMC_OP_SEM_WAIT, s, 1)) {
        errno = EAGAIN;
        return -1;
    }
    return 0;
}
EXPORT int sem_post(sem_t *s) {
    if (!in_execution()) REAL(sem_post, s);
    VISIBLE(SMC_OP_SEM_POST, s, 0, 0);
    return 0;
}
EXPORT int sched_yield(void) {
    if (!in_execution()) REAL(sched_yield);
    call_fence(CALLER_PC);
    VISIBLE(SMC_OP_YIELD, 0, 0, 0);
    return 0;
}

/* ---- calls on the objects the engine keeps that it does not model yet: an error naming the
 * call (exit status 2), rather than libc's code on a real object that the execution never
 * touched (a lock taken behind the engine's back, a hang in the kernel, a stale value) ---- */

/* (the call's name, its parameters, and the arguments libc's gets outside an execution) */
#define UNMODELLED(name, params, ...)                                                             \
    EXPORT int name params {                                                                      \
        if (!in_execution()) REAL(name, __VA_ARGS__);                                             \
        refuse_call(#name "()", CALLER_PC);                                                       \
    }
UNMODELLED(pthread_mutex_timedlock, (pthread_mutex_t *m, const struct timespec *ts), m, ts)
UNMODELLED(pthread_mutex_clocklock, (pthread_mutex_t *m, clockid_t clock, const struct timespec *ts), m, clock, ts)
UNMODELLED(pthread_rwlock_timedrdlock, (pthread_rwlock_t *l, const struct timespec *ts), l, ts)
UNMODELLED(pthread_rwlock_timedwrlock, (pthread_rwlock_t *l, const struct timespec *ts), l, ts)
UNMODELLED(sem_timedwait, (sem_t *s, const struct timespec *ts), s, ts)
UNMODELLED(sem_clockwait, (sem_t *s, clockid_t clock, const struct timespec *ts), s, clock, ts)
UNMODELLED(sem_getvalue, (sem_t *s, int *value), s, value)
UNMODELLED(pthread_cancel, (pthread_t t), t)
UNMODELLED(pthread_tryjoin_np, (pthread_t t, void **ret), t, ret)
UNMODELLED(pthread_timedjoin_np, (pthread_t t, void **ret, const struct timespec *ts), t, ret, ts)
UNMODELLED(pthread_clockjoin_np, (pthread_t t, void **ret, clockid_t clock, const struct timespec *ts), t, ret, clock, ts)

/* ---- SV-COMP conventions (see runtime/smc_verifier.h) ---- */

EXPORT void __VERIFIER_assume(int cond) {
    if (!in_execution()) {
        if (!cond) real_exit(0);
        return;
    }
    VISIBLE(SMC_OP_ASSUME, 0, 0, cond != 0);
}
EXPORT void __VERIFIER_error(void) {
    if (in_execution()) report_error(SMC_ERR_VERIFIER, 0, CALLER_PC, 0, "__VERIFIER_error() reached");
    abort();
}
EXPORT void reach_error(void) {
    if (in_execution()) report_error(SMC_ERR_VERIFIER, 0, CALLER_PC, 0, "reach_error() reached");
    abort();
}
EXPORT void __VERIFIER_atomic_begin(void) { atomic_begin(CALLER_PC); }
EXPORT void __VERIFIER_atomic_end(void) { atomic_end(CALLER_PC); }
/* Record a value of the execution's final state (the litmus front-end observes registers and
 * memory this way); not an event, so it costs no round trip. */
EXPORT void __smc_observe(unsigned index, unsigned long long value) {
    if (!in_execution() || index >= SMC_MAX_OBSERVED) return;
    ch->observed[index] = value;
    __atomic_fetch_or(&ch->observed_mask, 1ULL << index, __ATOMIC_SEQ_CST);
}
/* A value the engine chooses, each choice explored (SMC_OP_NONDET); 0 outside executions. */
static uint64_t nondet(uint64_t size, uint64_t kind, uint64_t pc) {
    return in_execution() ? smc_stop(SMC_OP_NONDET, 0, 0, size, kind, pc, 0, 0) : 0;
}
#define NONDET(type, name, kind)                                                                   \
    EXPORT type __VERIFIER_nondet_##name(void) { return (type)nondet(sizeof(type), (kind), CALLER_PC); }
NONDET(int, int, SMC_NONDET_SIGNED)
NONDET(unsigned, uint, 0)
NONDET(long, long, SMC_NONDET_SIGNED)
NONDET(unsigned long, ulong, 0)
NONDET(long long, longlong, SMC_NONDET_SIGNED)
NONDET(unsigned long long, ulonglong, 0)
NONDET(short, short, SMC_NONDET_SIGNED)
NONDET(unsigned short, ushort, 0)
NONDET(char, char, SMC_NONDET_SIGNED)
NONDET(unsigned char, uchar, 0)
NONDET(_Bool, bool, SMC_NONDET_BOOL)

/* ---- the futex system call: a visible blocking operation ---- */

/* What Rust's std (Mutex, Condvar, Once, park), libstdc++'s atomic waits, latches and barriers
 * and other libraries block on, called through syscall() (process.c). A wait compares the word as part of
 * its step, so no wake-up can come between the comparison and the wait; the engine learns from
 * the value read whether the thread waits. Bitsets are not told apart (a wake-up of a waiter
 * whose bitset does not match is one futex users must allow for anyway). */
/* The graph engine's reply to a wake that must wait for a wait's comparison to end (not
 * SMC_BUSY: a wake's reply is how many it woke). */
#define SMC_WAKE_BUSY (1ull << 32)

/* Under the graph engine a wait is as the kernel makes it: under the futex's lock (a state the
 * engine keeps, which a wake waits for), the word is read, a load of its own, and the thread
 * joins the waiters if it holds `val`; then it waits until a wake took it out. */
static long futex_wait_graph(uint32_t *word, uint32_t val, int timed, uint64_t pc) {
    uint64_t w = (uint64_t)(uintptr_t)word, r;
    while (smc_stop(SMC_OP_FUTEX_WAIT, w, (uint64_t)timed, 1, val, pc, 0, 0) == SMC_BUSY) {
    }
    int waits = (uint32_t)smc_visible_load(w, 4, pc) == val;
    smc_stop(SMC_OP_FUTEX_JOIN, w, (uint64_t)timed, 1, (uint64_t)waits, pc, 0, 0);
    if (!waits) {
        errno = EAGAIN;
        return -1;
    }
    while ((r = smc_stop(SMC_OP_FUTEX_WOKEN, w, (uint64_t)timed, 1, 0, pc, 0, 0)) == SMC_BUSY) {
    }
    if (r) {
        errno = (int)r;
        return -1;
    }
    return 0;
}

long smc_futex(uint32_t *word, int op, uint32_t val, const struct timespec *timeout, uint64_t pc) {
    int timed, cmd = op & ~(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME);
    uint64_t r;
    switch (cmd) {
    case FUTEX_WAIT:
    case FUTEX_WAIT_BITSET:
        timed = timeout != NULL;
        if (ch->flags & SMC_FLAG_GRAPH) return futex_wait_graph(word, val, timed, pc);
        smc_stop(SMC_OP_FUTEX_WAIT, (uint64_t)(uintptr_t)word, (uint64_t)timed, 1, val, pc, 0, 0);
        smc_note_read((uint64_t)(uintptr_t)word, 4); /* the value the engine learns */
        if (__atomic_load_n(word, __ATOMIC_RELAXED) != val) {
            errno = EAGAIN;
            return -1;
        }
        r = smc_stop(SMC_OP_FUTEX_WOKEN, (uint64_t)(uintptr_t)word, (uint64_t)timed, 1, 0, pc, 0, 0);
        if (r) {
            errno = (int)r;
            return -1;
        }
        return 0;
    case FUTEX_WAKE:
    case FUTEX_WAKE_BITSET:
        while ((r = smc_stop(SMC_OP_FUTEX_WAKE, (uint64_t)(uintptr_t)word, 0, 1, val, pc, 0, 0)) ==
               SMC_WAKE_BUSY) {
        }
        return (long)r;
    default: {
        static const char *const names[] = {"WAIT", "WAKE", "FD", "REQUEUE", "CMP_REQUEUE", "WAKE_OP",
                                            "LOCK_PI", "UNLOCK_PI", "TRYLOCK_PI", "WAIT_BITSET",
                                            "WAKE_BITSET", "WAIT_REQUEUE_PI", "CMP_REQUEUE_PI", "LOCK_PI2"};
        char what[64];
        if (cmd >= 0 && cmd < (int)(sizeof names / sizeof names[0]))
            snprintf(what, sizeof what, "futex(FUTEX_%s)", names[cmd]);
        else
            snprintf(what, sizeof what, "futex operation %d", cmd);
        refuse_call(what, pc);
    }
    }
}

