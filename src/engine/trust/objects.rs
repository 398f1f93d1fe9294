//! The pthread objects in the graph engine: mutexes, condition variables, read-write locks,
//! barriers and semaphores, each a location the engine keeps (the runtime never touches the
//! real object during an execution) whose state its operations read and update, and the
//! nondeterministic values of `__VERIFIER_nondet_*`.
//!
//! An operation that may have to wait (a lock, a semaphore's wait, a condition variable's
//! wake-up, leaving a barrier) is added as a read; its step decides from the state it reads
//! whether it goes on (an update, or a read that only looks) or waits: then it is told to ask
//! again (`BUSY`, an await loop in the runtime), and the write that lets it through revisits
//! it. The others always update. Where an operation has several outcomes from one state (the
//! waiter a signal wakes, a nondet value), each is a branch of its step ([`Trust::choose`]).
//!
//! A condition variable's state is the set of its waiters (a bit per graph thread): a wait
//! adds its thread while it holds the mutex, so that no signal after the unlock is lost, then
//! unlocks; its wake-up reads the state until a signal or broadcast took the thread out, and
//! takes the mutex again (the runtime does the unlock and the lock as operations of their
//! own, `MUTEX_APART`).

use crate::event::{Event, Op, Pending, Reply, ThreadId};
use crate::graph::{EventId, Graph, Label, Order};

use super::exchange::{operand_bytes, SourceLabel};
use super::{le_value, ExecError, Snapshot, Trust};

/// The reply to an operation that must wait: it asks again (runtime/sync.c `SMC_BUSY`).
pub(super) const BUSY: u64 = 1;
/// In the reply to a condition variable's wait and wake-up: the runtime releases, or takes
/// again, the mutex as an operation of its own (runtime/sync.c `SMC_MUTEX_APART`).
const MUTEX_APART: u64 = 1 << 32;
const EBUSY: u64 = libc::EBUSY as u64;
const EAGAIN: u64 = libc::EAGAIN as u64;
const ETIMEDOUT: u64 = libc::ETIMEDOUT as u64;

const MUTEX_TAKEN: u64 = 1;
/// A read-write lock's state: this bit while a writer holds it, else how many readers do.
const WRITER: u64 = 1 << 63;
/// A barrier's state: its count in the low bits, then how many arrived, then its generation.
const BARRIER_FIELD: u32 = 20;
const BARRIER_MASK: u64 = (1 << BARRIER_FIELD) - 1;
/// A condition variable's waiters are a bit per graph thread.
const MAX_WAITER: u32 = 64;
/// A futex's state: its waiters, a bit per graph thread, and this bit while a wait compares
/// the word (the kernel's lock of the futex, which a wake waits for).
const FUTEX_LOCKED: u64 = 1 << 63;
/// The reply to a futex wake that must wait (runtime/sync.c `SMC_WAKE_BUSY`: not `BUSY`, as a
/// wake's reply is how many it woke).
pub(super) const WAKE_BUSY: u64 = 1 << 32;

/// The object an operation acts on, and the size of its state (a mutex's is one byte, as the
/// lock word it stands for; the others' eight).
pub(super) fn object_of(op: &Op) -> Option<(u64, u32)> {
    if let Op::FutexWait { addr, .. }
    | Op::FutexJoin { addr, .. }
    | Op::FutexWoken { addr, .. }
    | Op::FutexWake { addr, .. } = *op
    {
        return Some((crate::event::futex_queue(addr).0, 8));
    }
    let obj = op.sync_object()?.0;
    let mutex = matches!(
        op,
        Op::MutexLock { .. } | Op::MutexTryLock { .. } | Op::MutexUnlock { .. }
    );
    Some((obj, if mutex { 1 } else { 8 }))
}

/// Does the engine answer the operation itself (an object's, a nondet call)?
pub(super) fn answered(op: &Op) -> bool {
    object_of(op).is_some() || matches!(op, Op::Nondet { .. })
}

/// Does the operation only look at its object's state, or wait, from some states (added as a
/// read, an update once its step finds it writes)?
pub(super) fn may_only_read(op: &Op) -> bool {
    use Op::*;
    matches!(
        op,
        MutexLock { .. }
            | MutexTryLock { .. }
            | CondReacquire { .. }
            | RwRdLock { .. }
            | RwWrLock { .. }
            | BarrierLeave { .. }
            | SemWait { .. }
            | FutexWait { .. }
            | FutexWoken { .. }
            | FutexWake { .. }
    )
}

/// The label an object's operation adds before its source is known.
pub(super) fn object_label(op: &Op) -> Option<Label> {
    let (addr, size) = object_of(op)?;
    Some(if may_only_read(op) {
        Label::Read {
            addr,
            size,
            rf: None,
        }
    } else {
        Label::Update {
            addr,
            size,
            rf: None,
            bytes: Default::default(),
        }
    })
}

/// What an operation does from a state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Effect {
    /// It updates the state to this.
    Write(u64),
    /// It goes on, the state as it was.
    Read,
    /// It cannot go on from this state: it asks again.
    Wait,
}

/// An operation's effect and its reply to the runtime.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Outcome {
    pub effect: Effect,
    pub reply: u64,
}

/// What the operation's thread did before that its outcome depends on.
#[derive(Clone, Copy, Debug, Default)]
struct Context {
    thread: u32,
    /// Which of several outcomes ([`alternatives`]).
    choice: u32,
    /// May a wake-up still be spurious (`--spurious-wakeups`)?
    spurious_left: bool,
    /// The generation of the barrier the thread arrived at.
    generation: u64,
}

fn outcome(effect: Effect, reply: u64) -> Outcome {
    Outcome { effect, reply }
}

/// How many outcomes `op` has from `state` (a signal wakes one of the waiters; a nondet call
/// returns one of `nondet_values`).
pub(super) fn alternatives(op: &Op, state: u64, nondet_values: u32) -> u32 {
    match *op {
        Op::CondSignal { .. } => state.count_ones().max(1),
        Op::FutexWake { count: 1, .. } if state & FUTEX_LOCKED == 0 => state.count_ones().max(1),
        Op::Nondet { boolean, .. } => {
            let n = nondet_values.max(1);
            if boolean {
                n.min(2)
            } else {
                n
            }
        }
        _ => 1,
    }
}

/// `op`'s outcome from its object's `state`.
fn transition(op: &Op, state: u64, cx: Context) -> Result<Outcome, ExecError> {
    use Effect::*;
    use Op::*;
    let waiter = || {
        if cx.thread >= MAX_WAITER {
            return Err(ExecError::Fatal(format!(
                "the graph engine supports condition variables in the first {MAX_WAITER} \
                 threads only (use --engine interleaving)"
            )));
        }
        Ok(1u64 << cx.thread)
    };
    let (count, arrived, generation) = (
        state & BARRIER_MASK,
        (state >> BARRIER_FIELD) & BARRIER_MASK,
        state >> (2 * BARRIER_FIELD),
    );
    Ok(match *op {
        MutexLock { .. } if state == 0 => outcome(Write(MUTEX_TAKEN), 0),
        MutexLock { .. } => outcome(Wait, BUSY),
        MutexTryLock { .. } if state == 0 => outcome(Write(MUTEX_TAKEN), 0),
        MutexTryLock { .. } => outcome(Read, EBUSY),
        MutexUnlock { .. } => outcome(Write(0), 0),
        CondWait { .. } => outcome(Write(state | waiter()?), MUTEX_APART),
        CondReacquire { timed, .. } => {
            let me = waiter()?;
            if state & me == 0 {
                outcome(Read, MUTEX_APART) // a signal or broadcast woke it
            } else if timed {
                outcome(Write(state & !me), MUTEX_APART | ETIMEDOUT)
            } else if cx.spurious_left {
                outcome(Write(state & !me), MUTEX_APART)
            } else {
                outcome(Wait, BUSY)
            }
        }
        // the waiter it wakes: the choice'th (none waits: the state stays)
        CondSignal { .. } => outcome(Write(without_waiter(state, cx.choice)), 0),
        CondBroadcast { .. } => outcome(Write(0), 0),
        RwRdLock { .. } if state & WRITER == 0 => outcome(Write(state + 1), 0),
        RwWrLock { .. } if state == 0 => outcome(Write(WRITER), 0),
        RwRdLock { try_only, .. } | RwWrLock { try_only, .. } => match try_only {
            true => outcome(Read, EBUSY),
            false => outcome(Wait, BUSY),
        },
        RwUnlock { .. } if state & WRITER != 0 => outcome(Write(0), 0),
        RwUnlock { .. } => outcome(Write(state.saturating_sub(1)), 0),
        BarrierInit { count, .. } => outcome(Write(count as u64 & BARRIER_MASK), 0),
        BarrierWait { .. } => {
            // (not initialised: a barrier of one, as the interleaving engine has it)
            let count = count.max(1);
            if arrived + 1 >= count {
                outcome(Write((generation + 1) << (2 * BARRIER_FIELD) | count), 1)
            } else {
                let arrived = (arrived + 1) << BARRIER_FIELD;
                outcome(
                    Write(generation << (2 * BARRIER_FIELD) | arrived | count),
                    0,
                )
            }
        }
        BarrierLeave { .. } if generation > cx.generation => outcome(Read, 0),
        BarrierLeave { .. } => outcome(Wait, BUSY),
        SemInit { value, .. } => outcome(Write(value as u64), 0),
        SemWait { .. } if state > 0 => outcome(Write(state - 1), 0),
        SemWait { try_only: true, .. } => outcome(Read, EAGAIN),
        SemWait { .. } => outcome(Wait, BUSY),
        SemPost { .. } => outcome(Write(state + 1), 0),
        Nondet { signed, .. } => outcome(
            Read,
            crate::engine::sync::SyncState::nondet_value(cx.choice, signed),
        ),
        FutexWait { .. } if state & FUTEX_LOCKED != 0 => outcome(Wait, BUSY),
        FutexWait { .. } => outcome(Write(state | FUTEX_LOCKED), 0),
        FutexJoin { waits, .. } => {
            let me = if waits { futex_waiter(cx.thread)? } else { 0 };
            outcome(Write(state & !FUTEX_LOCKED | me), 0)
        }
        FutexWoken { timed, .. } => {
            let me = futex_waiter(cx.thread)?;
            if state & me == 0 {
                outcome(Read, 0) // a wake took it out
            } else if timed {
                outcome(Write(state & !me), ETIMEDOUT)
            } else {
                outcome(Wait, BUSY)
            }
        }
        FutexWake { .. } if state & FUTEX_LOCKED != 0 => outcome(Wait, WAKE_BUSY),
        FutexWake { count, .. } => {
            let n = state.count_ones();
            if count >= n {
                outcome(Write(0), n as u64)
            } else if count == 1 {
                outcome(Write(without_waiter(state, cx.choice)), 1)
            } else {
                return Err(ExecError::Fatal(format!(
                    "the graph engine does not support a futex wake of {count} of {n} waiters \
                     yet"
                )));
            }
        }
        _ => {
            return Err(ExecError::Fatal(
                "internal: not an object's operation".into(),
            ))
        }
    })
}

/// The waiters `state` without its `choice`'th (counting from the lowest bit; none left: as
/// it is).
fn without_waiter(state: u64, choice: u32) -> u64 {
    let mut waiters = state;
    for _ in 0..choice {
        waiters &= waiters.wrapping_sub(1);
    }
    state & !(waiters & waiters.wrapping_neg())
}

/// A futex waiter's bit (the last bit is the futex's lock).
fn futex_waiter(thread: u32) -> Result<u64, ExecError> {
    if thread >= MAX_WAITER - 1 {
        return Err(ExecError::Fatal(format!(
            "the graph engine supports futex waits in the first {} threads only",
            MAX_WAITER - 1
        )));
    }
    Ok(1u64 << thread)
}

/// How an event that takes or lets go an object orders its thread's accesses.
pub(super) fn order_of(op: &Op, effect: Effect) -> Option<Order> {
    use Op::*;
    match (op, effect) {
        (_, Effect::Wait) | (Nondet { .. }, _) => None,
        (BarrierWait { .. }, _) => Some(Order::AcquireRelease),
        (
            MutexUnlock { .. }
            | CondWait { .. }
            | CondSignal { .. }
            | CondBroadcast { .. }
            | RwUnlock { .. }
            | BarrierInit { .. }
            | SemInit { .. }
            | SemPost { .. }
            | FutexJoin { .. }
            | FutexWake { .. },
            _,
        ) => Some(Order::Release),
        // a try that failed acquires nothing
        (
            MutexTryLock { .. } | RwRdLock { .. } | RwWrLock { .. } | SemWait { .. },
            Effect::Read,
        ) => None,
        _ => Some(Order::Acquire),
    }
}

impl Trust<'_> {
    /// What event `e`, operation `op`, does from the state it reads, with its choice.
    pub(super) fn object_outcome(
        &self,
        g: &Graph,
        e: EventId,
        op: &Op,
        source: Option<EventId>,
    ) -> Result<Outcome, ExecError> {
        let choice = g.event(e).choice.unwrap_or(0);
        self.chosen_outcome(g, e, op, source, choice)
    }

    /// [`Trust::object_outcome`] with its `choice`'th outcome.
    fn chosen_outcome(
        &self,
        g: &Graph,
        e: EventId,
        op: &Op,
        source: Option<EventId>,
        choice: u32,
    ) -> Result<Outcome, ExecError> {
        let earlier = &g.threads[e.thread as usize][..e.index as usize];
        let cx = Context {
            thread: e.thread,
            choice,
            spurious_left: match op {
                Op::CondReacquire { timed: false, .. } => {
                    let spurious = earlier.iter().filter(|ev| {
                        matches!(ev.op, Some(Op::CondReacquire { timed: false, .. }))
                            && ev.label.writes()
                    });
                    (spurious.count() as u32) < self.cfg.spurious_wakeups
                }
                _ => false,
            },
            generation: match op {
                Op::BarrierLeave { obj } => {
                    let arrival = earlier
                        .iter()
                        .rposition(
                            |ev| matches!(ev.op, Some(Op::BarrierWait { obj: o }) if o == *obj),
                        )
                        .map(|index| EventId {
                            thread: e.thread,
                            index: index as u32,
                        });
                    self.state_of(g, arrival) >> (2 * BARRIER_FIELD)
                }
                _ => 0,
            },
        };
        transition(op, self.state_of(g, source), cx)
    }

    /// The state write `w` left (`None`: the initial one, which is 0 for every object: free,
    /// without waiters, not initialised). An update not run yet in this execution (a revisit
    /// keeps it, or a model with porf cycles replays a read before the write it reads from)
    /// has it from its own source.
    fn state_of(&self, g: &Graph, w: Option<EventId>) -> u64 {
        let Some(w) = w else {
            return 0;
        };
        match (g.label(w).written(), g.event(w).op) {
            (Some(b), _) if !b.is_empty() => le_value(b),
            (_, Some(op)) => match self.object_outcome(g, w, &op, g.label(w).rf().flatten()) {
                Ok(Outcome {
                    effect: Effect::Write(state),
                    ..
                }) => state,
                _ => 0,
            },
            _ => 0,
        }
    }

    /// Would `e`, operation `op`, wait if it read from `w`?
    pub(super) fn would_wait(&self, g: &Graph, e: EventId, op: &Op, w: Option<EventId>) -> bool {
        self.object_outcome(g, e, op, w)
            .is_ok_and(|o| o.effect == Effect::Wait)
    }

    /// Before `e`'s step: the first of its outcomes, the others each a graph to visit.
    pub(super) fn choose(&mut self, g: &mut Graph, e: EventId, op: &Op) {
        if g.event(e).choice.is_some() {
            return;
        }
        let state = g.label(e).rf().map_or(0, |w| self.state_of(g, w));
        let n = alternatives(op, state, self.cfg.nondet_values);
        for choice in 1..n {
            let mut h = g.clone();
            h.event_mut(e).choice = Some(choice);
            self.todo.push(h);
        }
        g.event_mut(e).choice = Some(0);
    }

    /// The reply to object operation `e`.
    pub(super) fn object_reply(&self, g: &Graph, e: EventId, op: &Op) -> Result<Reply, ExecError> {
        let source = g.label(e).rf().flatten();
        let o = self.object_outcome(g, e, op, source)?;
        Ok(Reply {
            value: o.reply,
            patch: None,
        })
    }

    /// After an object's operation ran: its label as its outcome has it (an operation added
    /// as a read that writes becomes an update, its place and revisits still to be made), its
    /// order; the step goes into the trace.
    pub(super) fn object_stepped(
        &mut self,
        g: &mut Graph,
        p: &Pending,
        e: EventId,
        snap: Snapshot,
    ) -> Result<Snapshot, ExecError> {
        let source = g.label(e).rf().flatten();
        let o = self.object_outcome(g, e, &p.op, source)?;
        if let Some((addr, size)) = object_of(&p.op) {
            let label = g.label_mut(e);
            match o.effect {
                Effect::Write(state) => {
                    let bytes = operand_bytes(state, size);
                    if matches!(label, Label::Read { .. }) {
                        self.converted = Some(e);
                    }
                    *label = Label::Update {
                        addr,
                        size,
                        rf: source,
                        bytes,
                    };
                }
                Effect::Read | Effect::Wait => {
                    *label = Label::Read {
                        addr,
                        size,
                        rf: source,
                    }
                }
            }
        }
        let ev = g.event_mut(e);
        ev.op = Some(p.op);
        ev.order = order_of(&p.op, o.effect);
        let mut traced = Event::from_pending(ThreadId(e.thread), p);
        traced.wrote = matches!(o.effect, Effect::Write(_));
        if let Op::Nondet { .. } = p.op {
            traced.value_read = Some(o.reply);
        }
        self.trace.push(traced);
        self.trace_events.push(Some(e));
        Ok(snap)
    }

    /// The graphs of object operation `e`, added as a read, reading from each of `candidates`
    /// (in their order) where that is consistent: an update where it writes from that state,
    /// its bytes known before it runs ([`Trust::labelled_sources`]); one per outcome where it
    /// has several from that state (the waiter a futex wake wakes). `None` where an outcome
    /// is an error: it then becomes an update once it has run.
    pub(super) fn object_sources(
        &mut self,
        g: &mut Graph,
        e: EventId,
        candidates: &[Option<EventId>],
    ) -> Option<Vec<Graph>> {
        let op = g.event(e).op.filter(may_only_read)?;
        let (_, size) = object_of(&op)?;
        let mut labels = Vec::with_capacity(candidates.len());
        for &source in candidates {
            let state = self.state_of(g, source);
            let n = alternatives(&op, state, self.cfg.nondet_values);
            for choice in 0..n {
                let write = match self.chosen_outcome(g, e, &op, source, choice).ok()?.effect {
                    Effect::Write(state) => Some(operand_bytes(state, size)),
                    Effect::Read | Effect::Wait => None,
                };
                labels.push(SourceLabel {
                    source,
                    write,
                    choice: (n > 1).then_some(choice),
                });
            }
        }
        let order = order_of(&op, Effect::Write(0));
        Some(self.labelled_sources(g, e, &labels, order))
    }

    /// After a revisit gave object operation `r` another source: it is chosen anew, and it
    /// is a read where from that state it writes nothing (a lock that finds its mutex taken
    /// waits).
    pub(super) fn object_revisited(&self, h: &mut Graph, r: EventId) {
        let Some(op) = h.event(r).op else {
            return;
        };
        h.event_mut(r).choice = None;
        let Label::Update { addr, size, rf, .. } = h.label(r).clone() else {
            return;
        };
        // (an error, a waiter beyond the bitmap, came when it first ran)
        let outcome = self.object_outcome(h, r, &op, rf);
        if outcome.is_ok_and(|o| !matches!(o.effect, Effect::Write(_))) {
            *h.label_mut(r) = Label::Read { addr, size, rf };
        }
    }
}
