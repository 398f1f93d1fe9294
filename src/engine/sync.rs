//! The pthread objects as the engine models them: which operations are enabled, and what
//! each one returns. The runtime never touches the real objects during an execution.

use std::collections::BTreeMap;

use crate::event::{Op, TargetAddr, ThreadId};

const EBUSY: u64 = libc::EBUSY as u64;
const ETIMEDOUT: u64 = libc::ETIMEDOUT as u64;
const EAGAIN: u64 = libc::EAGAIN as u64;

#[derive(Default, Clone)]
struct RwLock {
    writer: Option<ThreadId>,
    readers: Vec<ThreadId>,
}

#[derive(Default, Clone)]
struct Barrier {
    count: u32,
    arrived: u32,
    generation: u64,
}

/// A thread waiting on a condition variable; `signalled` once a signal picked it.
#[derive(Clone)]
struct CondWaiter {
    thread: ThreadId,
    signalled: bool,
}

#[derive(Default)]
pub struct SyncState {
    mutex_owner: BTreeMap<TargetAddr, ThreadId>,
    rwlocks: BTreeMap<TargetAddr, RwLock>,
    conds: Waiters,
    /// Waiters of each futex word, in the order they began to wait.
    futexes: Waiters,
    barriers: BTreeMap<TargetAddr, Barrier>,
    /// Threads waiting to leave a barrier, with the generation they arrived in.
    barrier_waiting: BTreeMap<ThreadId, u64>,
    sems: BTreeMap<TargetAddr, u64>,
    exited: Vec<ThreadId>,
    /// Thread inside `__VERIFIER_atomic_begin/end`.
    pub atomic_owner: Option<ThreadId>,
    /// Spurious wake-ups a thread may have from `pthread_cond_wait` in an execution
    /// (`Config::spurious_wakeups`), and those each has had.
    pub spurious_bound: u32,
    spurious: Vec<(ThreadId, u32)>,
    /// How many values a `__VERIFIER_nondet_*` call may return (`Config::nondet_values`).
    pub nondet_values: u32,
}

/// Field by field, keeping this one's allocations (checkpoints are copied into retired states);
/// every field named, so that a new one cannot be forgotten here.
impl Clone for SyncState {
    fn clone(&self) -> Self {
        let mut s = SyncState::default();
        s.clone_from(self);
        s
    }

    fn clone_from(&mut self, o: &Self) {
        let SyncState {
            mutex_owner,
            rwlocks,
            conds,
            futexes,
            barriers,
            barrier_waiting,
            sems,
            exited,
            atomic_owner,
            spurious_bound,
            spurious,
            nondet_values,
        } = o;
        self.mutex_owner.clone_from(mutex_owner);
        self.rwlocks.clone_from(rwlocks);
        self.conds.clone_from(conds);
        self.futexes.clone_from(futexes);
        self.barriers.clone_from(barriers);
        self.barrier_waiting.clone_from(barrier_waiting);
        self.sems.clone_from(sems);
        self.exited.clone_from(exited);
        self.atomic_owner = *atomic_owner;
        self.spurious_bound = *spurious_bound;
        self.spurious.clone_from(spurious);
        self.nondet_values = *nondet_values;
    }
}

impl SyncState {
    pub fn thread_exited(&self, t: ThreadId) -> bool {
        self.exited.contains(&t)
    }

    /// Can `t` run `op` now? `join_target` resolves a join's slot to its thread.
    pub fn enabled(&self, t: ThreadId, op: &Op, join_target: Option<ThreadId>) -> bool {
        use Op::*;
        match *op {
            Join { .. } => join_target.is_some_and(|c| self.thread_exited(c)),
            MutexLock { obj } => !self.mutex_owner.contains_key(&obj),
            CondReacquire { cond, mutex, timed } => {
                !self.mutex_owner.contains_key(&mutex)
                    && (timed
                        || woken(&self.conds, cond, t)
                        || self.spurious_of(t) < self.spurious_bound)
            }
            RwRdLock { obj, try_only } => {
                try_only || self.rwlocks.get(&obj).is_none_or(|l| l.writer.is_none())
            }
            RwWrLock { obj, try_only } => {
                try_only
                    || self
                        .rwlocks
                        .get(&obj)
                        .is_none_or(|l| l.writer.is_none() && l.readers.is_empty())
            }
            BarrierLeave { obj } => {
                let gen = self.barriers.get(&obj).map_or(0, |b| b.generation);
                self.barrier_waiting.get(&t).is_none_or(|&g| gen > g)
            }
            SemWait { obj, try_only } => try_only || self.sems.get(&obj).copied().unwrap_or(0) > 0,
            FutexWoken { addr, timed } => {
                timed || woken(&self.futexes, addr, t) || self.spurious_of(t) < self.spurious_bound
            }
            Assume { cond } => cond,
            AtomicBegin => self.atomic_owner.is_none_or(|o| o == t),
            _ => true,
        }
    }

    /// Would `op` only load now, as glibc's code does on x86 where it finds nothing to do: a
    /// try that fails (the object taken), a signal or broadcast with no waiter (it loads the
    /// waiter count and returns). No fence then.
    pub fn only_loads(&self, op: &Op) -> bool {
        use Op::*;
        match *op {
            CondSignal { cond } | CondBroadcast { cond } => self.signals_nobody(cond),
            _ if op.is_try() => self.try_fails(op),
            _ => false,
        }
    }

    /// After `op` ran, having written (`wrote`) or not: did it only load ([`Self::only_loads`]
    /// before it ran)? A try that failed wrote nothing; a signal or broadcast with no waiter
    /// leaves none.
    pub fn only_loaded(&self, op: &Op, wrote: bool) -> bool {
        use Op::*;
        match *op {
            CondSignal { cond } | CondBroadcast { cond } => self.signals_nobody(cond),
            _ => op.is_try() && !wrote,
        }
    }

    /// Has condition variable `cond` no waiter (signalled or not: glibc counts a waiter until
    /// it wakes)? A signal or broadcast leaves it as it was then.
    fn signals_nobody(&self, cond: TargetAddr) -> bool {
        self.conds.get(&cond).is_none_or(|ws| ws.is_empty())
    }

    /// Would try `op` fail now (the object not free), and so only read?
    fn try_fails(&self, op: &Op) -> bool {
        use Op::*;
        match *op {
            MutexTryLock { obj } => self.mutex_owner.contains_key(&obj),
            RwRdLock {
                obj,
                try_only: true,
            } => self.rwlocks.get(&obj).is_some_and(|l| l.writer.is_some()),
            RwWrLock {
                obj,
                try_only: true,
            } => self
                .rwlocks
                .get(&obj)
                .is_some_and(|l| l.writer.is_some() || !l.readers.is_empty()),
            SemWait {
                obj,
                try_only: true,
            } => self.sems.get(&obj).copied().unwrap_or(0) == 0,
            _ => false,
        }
    }

    /// What a wait of `t` returns: 0 when woken; else `ETIMEDOUT` when timed, or 0 as a
    /// spurious wake-up (POSIX and futex(2) allow a wait to return without a wake).
    fn wait_returns(&mut self, t: ThreadId, woken: bool, timed: bool) -> (u64, bool) {
        if woken {
            return (0, true);
        }
        if timed {
            return (ETIMEDOUT, true);
        }
        self.count_spurious(t);
        (0, true)
    }

    fn count_spurious(&mut self, t: ThreadId) {
        match self.spurious.iter_mut().find(|(s, _)| *s == t) {
            Some((_, n)) => *n += 1,
            None => self.spurious.push((t, 1)),
        }
    }

    /// After `t`'s `futex(FUTEX_WAIT)` on `addr` found the word as expected: it waits.
    pub fn futex_wait(&mut self, t: ThreadId, addr: TargetAddr) {
        self.futexes.entry(addr).or_default().push(CondWaiter {
            thread: t,
            signalled: false,
        });
    }

    fn spurious_of(&self, t: ThreadId) -> u32 {
        self.spurious
            .iter()
            .find(|(s, _)| *s == t)
            .map_or(0, |(_, n)| *n)
    }

    /// How many different outcomes `op` can have now (a signal picks one of several waiters).
    pub fn alternatives(&self, op: &Op) -> u32 {
        match *op {
            Op::CondSignal { cond } => unsignalled(&self.conds, cond).max(1) as u32,
            Op::FutexWake { addr, count: 1 } => unsignalled(&self.futexes, addr).max(1) as u32,
            Op::Nondet { boolean, .. } => {
                let n = self.nondet_values.max(1);
                if boolean {
                    n.min(2)
                } else {
                    n
                }
            }
            _ => 1,
        }
    }

    /// The value a nondet choice `alt` gives: 0, 1, -1, 2, -2 ... for a signed type, 0, 1, 2 ...
    /// for an unsigned one (sign-extended to 64 bits, as the runtime returns it truncated).
    pub fn nondet_value(alt: u32, signed: bool) -> u64 {
        if !signed {
            return alt as u64;
        }
        let k = alt.div_ceil(2) as i64;
        (if alt % 2 == 1 { k } else { -k }) as u64
    }

    /// Apply `op` by `t` (enabled), choosing outcome `alt`. Returns the reply for the runtime
    /// and whether a conditional write happened.
    pub fn apply(&mut self, t: ThreadId, op: &Op, alt: u32) -> (u64, bool) {
        use Op::*;
        match *op {
            ThreadExit => {
                self.exited.push(t);
                if self.atomic_owner == Some(t) {
                    self.atomic_owner = None;
                }
            }
            MutexLock { obj } => {
                self.mutex_owner.insert(obj, t);
            }
            MutexTryLock { obj } => {
                if self.mutex_owner.contains_key(&obj) {
                    return (EBUSY, false);
                }
                self.mutex_owner.insert(obj, t);
            }
            MutexUnlock { obj } => {
                self.mutex_owner.remove(&obj);
            }
            CondWait { cond, mutex, .. } => {
                self.mutex_owner.remove(&mutex);
                self.conds.entry(cond).or_default().push(CondWaiter {
                    thread: t,
                    signalled: false,
                });
            }
            CondReacquire { cond, mutex, timed } => {
                self.mutex_owner.insert(mutex, t);
                let signalled = leave(self.conds.entry(cond).or_default(), t);
                return self.wait_returns(t, signalled, timed);
            }
            Nondet { signed, .. } => return (Self::nondet_value(alt, signed), false),
            FutexWoken { addr, timed } => {
                let woken = leave(self.futexes.entry(addr).or_default(), t);
                // (a waiter that was picked leaves the others as they were: no write)
                return (self.wait_returns(t, woken, timed).0, !woken);
            }
            FutexWake { addr, count } => {
                // one waiter: each is a choice (`alternatives`); more: the longest waiting
                let mut unwoken = self
                    .futexes
                    .entry(addr)
                    .or_default()
                    .iter_mut()
                    .filter(|w| !w.signalled);
                let woken: Vec<&mut CondWaiter> = if count == 1 {
                    unwoken.nth(alt as usize).into_iter().collect()
                } else {
                    unwoken.take(count as usize).collect()
                };
                let n = woken.len() as u64;
                for w in woken {
                    w.signalled = true;
                }
                return (n, n > 0);
            }
            CondSignal { cond } => {
                if let Some(w) = self
                    .conds
                    .get_mut(&cond)
                    .and_then(|ws| ws.iter_mut().filter(|w| !w.signalled).nth(alt as usize))
                {
                    w.signalled = true;
                }
            }
            CondBroadcast { cond } => {
                for w in self.conds.entry(cond).or_default() {
                    w.signalled = true;
                }
            }
            RwRdLock { obj, .. } => {
                let l = self.rwlocks.entry(obj).or_default();
                if l.writer.is_some() {
                    return (EBUSY, false);
                }
                l.readers.push(t);
            }
            RwWrLock { obj, .. } => {
                let l = self.rwlocks.entry(obj).or_default();
                if l.writer.is_some() || !l.readers.is_empty() {
                    return (EBUSY, false);
                }
                l.writer = Some(t);
            }
            RwUnlock { obj } => {
                // (by a thread that holds no part of it: undefined in glibc; released as the
                // graph engine's word releases it, the writer or one reader)
                let l = self.rwlocks.entry(obj).or_default();
                if l.writer.is_some() {
                    l.writer = None;
                } else if let Some(i) = l.readers.iter().position(|&r| r == t) {
                    l.readers.remove(i);
                } else {
                    l.readers.pop();
                }
            }
            BarrierInit { obj, count } => {
                self.barriers.insert(
                    obj,
                    Barrier {
                        count,
                        ..Barrier::default()
                    },
                );
            }
            BarrierWait { obj } => {
                let b = self.barriers.entry(obj).or_insert(Barrier {
                    count: 1,
                    ..Barrier::default()
                });
                b.arrived += 1;
                if b.arrived >= b.count {
                    b.arrived = 0;
                    b.generation += 1;
                    return (1, true);
                }
                self.barrier_waiting.insert(t, b.generation);
            }
            BarrierLeave { .. } => {
                self.barrier_waiting.remove(&t);
            }
            SemInit { obj, value } => {
                self.sems.insert(obj, value as u64);
            }
            SemWait { obj, .. } => {
                let v = self.sems.entry(obj).or_insert(0);
                if *v == 0 {
                    return (EAGAIN, false);
                }
                *v -= 1;
            }
            SemPost { obj } => {
                *self.sems.entry(obj).or_insert(0) += 1;
            }
            AtomicBegin => self.atomic_owner = Some(t),
            AtomicEnd => self.atomic_owner = None,
            _ => {}
        }
        (0, true)
    }
}

/// `t` leaves the waiters `ws`: was it woken (or never among them)?
fn leave(ws: &mut Vec<CondWaiter>, t: ThreadId) -> bool {
    let woken = signalled_or_gone(ws, t);
    ws.retain(|w| w.thread != t);
    woken
}

/// Waiters of each condition variable or futex word, in the order they began to wait.
type Waiters = BTreeMap<TargetAddr, Vec<CondWaiter>>;

/// May `t`, waiting on `addr`, return as woken (a signal or wake picked it, or it waits no more)?
fn woken(waiters: &Waiters, addr: TargetAddr, t: ThreadId) -> bool {
    waiters.get(&addr).is_none_or(|ws| signalled_or_gone(ws, t))
}

fn signalled_or_gone(ws: &[CondWaiter], t: ThreadId) -> bool {
    ws.iter()
        .find(|w| w.thread == t)
        .is_none_or(|w| w.signalled)
}

/// Waiters on `addr` no signal or wake has picked yet.
fn unsignalled(waiters: &Waiters, addr: TargetAddr) -> usize {
    waiters
        .get(&addr)
        .map_or(0, |ws| ws.iter().filter(|w| !w.signalled).count())
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: TargetAddr = TargetAddr(0x100);
    const C: TargetAddr = TargetAddr(0x200);
    const A: ThreadId = ThreadId(1);
    const B: ThreadId = ThreadId(2);

    #[test]
    fn mutex_blocks_until_unlocked() {
        let mut s = SyncState::default();
        let lock = Op::MutexLock { obj: M };
        assert!(s.enabled(A, &lock, None));
        s.apply(A, &lock, 0);
        assert!(!s.enabled(B, &lock, None));
        assert_eq!(s.apply(B, &Op::MutexTryLock { obj: M }, 0), (EBUSY, false));
        s.apply(A, &Op::MutexUnlock { obj: M }, 0);
        assert!(s.enabled(B, &lock, None));
    }

    #[test]
    fn signal_wakes_the_chosen_waiter_only() {
        let mut s = SyncState::default();
        let wait = Op::CondWait {
            cond: C,
            mutex: M,
            timed: false,
        };
        let wake = Op::CondReacquire {
            cond: C,
            mutex: M,
            timed: false,
        };
        s.apply(A, &wait, 0);
        s.apply(B, &wait, 0);
        assert!(!s.enabled(A, &wake, None) && !s.enabled(B, &wake, None));
        assert_eq!(s.alternatives(&Op::CondSignal { cond: C }), 2);
        s.apply(ThreadId(3), &Op::CondSignal { cond: C }, 1);
        assert!(!s.enabled(A, &wake, None));
        assert!(s.enabled(B, &wake, None));
        assert_eq!(s.apply(B, &wake, 0), (0, true));
        assert!(!s.enabled(A, &wake, None), "the mutex is held again");
    }

    #[test]
    fn timed_wait_can_time_out() {
        let mut s = SyncState::default();
        s.apply(
            A,
            &Op::CondWait {
                cond: C,
                mutex: M,
                timed: true,
            },
            0,
        );
        let wake = Op::CondReacquire {
            cond: C,
            mutex: M,
            timed: true,
        };
        assert!(s.enabled(A, &wake, None));
        assert_eq!(s.apply(A, &wake, 0).0, ETIMEDOUT);
    }

    #[test]
    fn barrier_releases_when_full() {
        let mut s = SyncState::default();
        s.apply(A, &Op::BarrierInit { obj: M, count: 2 }, 0);
        assert_eq!(s.apply(A, &Op::BarrierWait { obj: M }, 0).0, 0);
        assert!(!s.enabled(A, &Op::BarrierLeave { obj: M }, None));
        assert_eq!(s.apply(B, &Op::BarrierWait { obj: M }, 0).0, 1);
        assert!(s.enabled(A, &Op::BarrierLeave { obj: M }, None));
    }

    #[test]
    fn semaphore_counts() {
        let mut s = SyncState::default();
        s.apply(A, &Op::SemInit { obj: M, value: 1 }, 0);
        let wait = Op::SemWait {
            obj: M,
            try_only: false,
        };
        s.apply(A, &wait, 0);
        assert!(!s.enabled(B, &wait, None));
        assert_eq!(
            s.apply(
                B,
                &Op::SemWait {
                    obj: M,
                    try_only: true
                },
                0
            ),
            (EAGAIN, false)
        );
        s.apply(A, &Op::SemPost { obj: M }, 0);
        assert!(s.enabled(B, &wait, None));
    }
}
