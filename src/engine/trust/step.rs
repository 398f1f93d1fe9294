//! One event of the running execution: the label a program's operation adds, what it depends
//! on, the reply that makes it see what the graph says, and its step, split so that the engine
//! may branch while the program runs on.

use crate::engine::{ExecError, SlotState, Snapshot};
use crate::event::{
    CasOperands, Event, FenceKind, Op, Pending, Reply, StoreBytes, ThreadId, MAX_ACCESS,
};
use crate::graph::{Dependencies, EventId, Graph, Label};

use super::objects::{answered, object_label, object_of};
use super::{conditional, le_value, Trust, FENCE_LOCATION, LEFT_SCRIPT};

/// The label an operation adds, before its outcome is known (a read's source, a write's
/// bytes, whether a compare-exchange writes); `None` for what adds no event (the end of the
/// process).
pub(super) fn label_of(op: &Op, slots: &[u32]) -> Result<Option<Label>, ExecError> {
    let read = |addr: u64, size| Label::Read {
        addr,
        size,
        rf: None,
    };
    let write = |addr: u64, size| Label::Write {
        addr,
        size,
        bytes: StoreBytes::new(),
    };
    Ok(Some(match *op {
        Op::Load { addr, size } | Op::RmwLoad { addr, size } | Op::Cas { addr, size } => {
            read(addr.0, size)
        }
        Op::Store { addr, size } | Op::RmwStore { addr, size } => write(addr.0, size),
        // a pthread object's state, which the engine keeps: a read where the operation may
        // only look or wait, else an update (a barrier, as the C library's are)
        ref op if object_of(op).is_some() => object_label(op).expect("an object's operation"),
        // a value the engine chooses
        Op::Nondet { .. } => Label::Local,
        Op::Rmw { addr, size } => Label::Update {
            addr: addr.0,
            size,
            rf: None,
            bytes: StoreBytes::new(),
        },
        Op::Fence {
            kind: FenceKind::Full,
        } => Label::Fence,
        Op::Fence {
            kind: FenceKind::Lightweight,
        } => Label::Lwsync,
        // (a store fence: x86's sfence orders stores as eieio does, which PSO sees)
        Op::Fence {
            kind: FenceKind::Eieio | FenceKind::Store,
        } => Label::Eieio,
        // what the others cannot see: stores are never in memory for a heap release to wait
        // for, and no model here orders by the other fences
        Op::Fence { .. } | Op::Yield | Op::HeapRelease { .. } => Label::Local,
        Op::Spawn => Label::Spawn { child: u32::MAX },
        Op::ThreadStart => Label::Start,
        Op::ThreadExit => Label::Exit,
        Op::Join { slot } => match slots.get(slot as usize) {
            Some(&child) => Label::Join { child },
            None => return Err(ExecError::Fatal("internal: a join of no thread".into())),
        },
        // an assumption that holds (one that fails ends the execution before): an event, so
        // that a replay finds the thread stopped at it
        Op::Assume { .. } => Label::Local,
        Op::ProcessExit { .. } => return Ok(None),
        _ => {
            return Err(ExecError::Fatal(format!(
                "the graph engine (--model ra, --engine graph) does not support `{}` yet",
                op.kind_name()
            )))
        }
    }))
}

/// The events a new event `e` depends on: for each load address, its thread's latest read
/// there (the execution the value flows from), unless a load of the thread since was no event
/// (it fell on the thread's own memory: that execution of the load may be the one the value
/// came from, and a dependency that is not there would hide behaviours).
pub(super) fn dependencies_of(
    g: &Graph,
    e: EventId,
    d: &crate::decode::SiteDependencies,
) -> Dependencies {
    let evs = &g.threads[e.thread as usize][..e.index as usize];
    let skipped = g.event(e).skipped;
    let latest = |pcs: &[u64]| -> Vec<EventId> {
        pcs.iter()
            .filter_map(|&pc| {
                evs.iter()
                    .rposition(|x| x.pc == pc && x.label.reads())
                    .filter(|&i| evs[i].skipped == skipped)
                    .map(|i| EventId {
                        thread: e.thread,
                        index: i as u32,
                    })
            })
            .collect()
    };
    // (exact only in its thread's start routine: a thread's first event, its start, names it)
    let start = (g.threads[e.thread as usize].first())
        .filter(|x| matches!(x.label, Label::Start))
        .map(|x| x.pc);
    let unknown = d.precise_in.is_none_or(|f| start != Some(f));
    // (where it is exact: the latest read at each load it may depend on, whatever loads since
    // were no event — one of those may have been another load's; and every read at the loads
    // whose earlier executions it may depend on)
    let mut may = Vec::new();
    let mut reached: Vec<u64> = Vec::new();
    let named = |pc: &u64| d.may.contains(pc) || d.may_earlier.contains(pc);
    for (i, x) in evs.iter().enumerate().rev().filter(|_| !unknown) {
        if !x.label.reads() || !named(&x.pc) {
            continue;
        }
        if d.may_earlier.contains(&x.pc) || !reached.contains(&x.pc) {
            may.push(EventId {
                thread: e.thread,
                index: i as u32,
            });
            reached.push(x.pc);
        }
    }
    Dependencies {
        addr: latest(&d.addr),
        data: latest(&d.data),
        ctrl: latest(&d.ctrl),
        ctrlisync: latest(&d.ctrlisync),
        may,
        unknown,
    }
}

/// The reply that makes read `e` see what it reads from, where memory holds the write `last`
/// (`None`: no write ran there yet) and held `initial` before the first: memory as it is where
/// that is the write read, else the write's bytes (or the initial ones; `None` when those
/// are not known).
pub(super) fn reply_to(
    g: &Graph,
    e: EventId,
    last: Option<EventId>,
    initial: Option<&StoreBytes>,
) -> Option<Reply> {
    let mut reply = Reply::default();
    let label = g.label(e);
    let (Some(rf), Some(addr)) = (label.rf(), label.location()) else {
        return Some(reply);
    };
    if addr == FENCE_LOCATION || last == rf {
        return Some(reply);
    }
    let bytes = match rf {
        Some(w) => g.label(w).written().expect("reads from a write"),
        None => initial?,
    };
    let mut patch = [0u8; MAX_ACCESS];
    patch[..bytes.len()].copy_from_slice(bytes);
    let mask = if bytes.len() >= 64 {
        u64::MAX
    } else {
        (1u64 << bytes.len()) - 1
    };
    reply.patch = Some((mask, patch));
    Some(reply)
}

/// A step begun: its reply, and the state after it if the executor ran it to its end.
pub(super) struct Started {
    reply: Reply,
    snap: Option<Snapshot>,
}

impl Trust<'_> {
    /// The reply that makes a read see what it reads from ([`reply_to`]), with what memory
    /// holds in the running execution.
    fn reply(&self, g: &Graph, e: EventId) -> Result<Reply, ExecError> {
        let addr = g.label(e).location().unwrap_or(0);
        reply_to(
            g,
            e,
            self.memory.last.get(&addr).copied(),
            self.memory.before.get(&addr),
        )
        .ok_or_else(|| {
            ExecError::Fatal("internal: a store did not report what it wrote over".into())
        })
    }

    /// A store at `addr` wrote over `replaced`: what the location held before the execution's
    /// first store there, for reads of its initial value.
    pub(super) fn note_replaced(&mut self, addr: u64, replaced: StoreBytes) {
        if !self.memory.before.contains_key(&addr) {
            self.script.note_initial(addr, &replaced);
            self.memory.before.insert(addr, replaced);
            self.memory.first.insert(addr, self.trace.len());
        }
    }

    /// Runs `slot`'s pending operation `p` as event `e` of `g`; notes a created thread's
    /// slot, a write's bytes, a compare-exchange that wrote, and the step in the trace.
    pub(super) fn step(
        &mut self,
        g: &mut Graph,
        slot: u32,
        p: &Pending,
        e: EventId,
    ) -> Result<Snapshot, ExecError> {
        let started = self.start_step(g, slot, p, e)?;
        self.finish_step(g, slot, p, e, started)
    }

    /// The first half of [`Trust::step`]: the reply sent, the program perhaps running on while
    /// the engine works (`Started::snap` is `None` then). An operation the engine answers
    /// itself takes its first outcome, the others left to visit.
    pub(super) fn start_step(
        &mut self,
        g: &mut Graph,
        slot: u32,
        p: &Pending,
        e: EventId,
    ) -> Result<Started, ExecError> {
        let answered = answered(&p.op);
        if answered {
            self.choose(g, e, &p.op);
        }
        let reply = match g.event(e).conditional {
            _ if answered => self.object_reply(g, e, &p.op)?,
            Some(c) => conditional::reply(c),
            None => self.reply(g, e)?,
        };
        if self.script.take(slot, &reply).is_err() {
            return Err(ExecError::Fatal(LEFT_SCRIPT.into()));
        }
        let snap = self.exec.start_step(slot, &reply)?;
        Ok(Started { reply, snap })
    }

    /// The second half of [`Trust::step`], on the graph `start_step` was given.
    pub(super) fn finish_step(
        &mut self,
        g: &mut Graph,
        slot: u32,
        p: &Pending,
        e: EventId,
        started: Started,
    ) -> Result<Snapshot, ExecError> {
        let Started { reply, snap } = started;
        let snap = match snap {
            Some(snap) => snap,
            None => self.exec.finish_step()?,
        };
        self.replies.push((slot, reply.clone()));
        if snap
            .slots
            .get(slot as usize)
            .is_some_and(|v| v.state == SlotState::Hung)
        {
            self.hung.push(self.replies.len() - 1);
        }
        if answered(&p.op) {
            return self.object_stepped(g, p, e, snap);
        }
        match *g.label(e) {
            Label::Spawn { child } => {
                // (a creation that failed took no slot)
                let slot = self.slots.next_free() as usize;
                if (snap.slots.get(slot)).is_some_and(|v| v.state != SlotState::Exited) {
                    self.slots.spawned(child);
                }
            }
            Label::Join { child } => self.slots.joined(child),
            _ => {}
        }
        let executed = snap.slots.get(slot as usize).and_then(|v| v.prev.clone());
        let wrote = executed.as_ref().is_some_and(|x| x.wrote);
        match (&p.op, g.label(e), wrote) {
            (Op::Cas { .. }, &Label::Read { addr, size, rf }, true) => {
                *g.label_mut(e) = Label::Update {
                    addr,
                    size,
                    rf,
                    bytes: StoreBytes::new(),
                };
                // (what it read is what it compared with, what it stored what it writes; a
                // 16-byte one's are not reported)
                if g.event(e).cas.is_none() && size <= 8 {
                    let read = executed.as_ref().and_then(|x| x.read);
                    let stored = executed.as_ref().and_then(|x| x.stored.as_deref());
                    g.event_mut(e).cas = read.zip(stored).map(|(expected, stored)| CasOperands {
                        expected,
                        desired: le_value(stored),
                    });
                }
                self.converted = Some(e);
            }
            // the engine made it an update, as the write it reads from holds what it expects:
            // graphs where others read from it are made (a wrong operand, or a reply that
            // did not give it those bytes)
            (Op::Cas { .. }, Label::Update { .. }, false) if g.event(e).cas.is_some() => {
                return Err(ExecError::Fatal(
                    "internal: a compare-exchange did not write the value the graph engine \
                     expected it to"
                        .into(),
                ));
            }
            _ => {}
        }
        let mut ev = Event::from_pending(ThreadId(e.thread), p);
        ev.wrote = !matches!(p.op, Op::Cas { .. }) || wrote;
        if let Some(Some(w)) = g.label(e).rf() {
            ev.value_read = g.label(w).written().map(|b| le_value(b));
        } else if g.label(e).reads() {
            ev.value_read = executed.as_ref().and_then(|x| x.read);
        }
        if g.label(e).writes() && g.label(e).location() != Some(FENCE_LOCATION) {
            let stored = match executed.as_ref().and_then(|x| x.stored.clone()) {
                Some(s) => s,
                // the store faulted and ended the process
                None if snap.ended.is_some() => StoreBytes::new(),
                None => {
                    return Err(ExecError::Fatal(
                        "internal: a store's bytes were not reported (stores must be buffered)"
                            .into(),
                    ))
                }
            };
            ev.value_written = Some(le_value(&stored));
            if let Label::Write { addr, bytes, .. } | Label::Update { addr, bytes, .. } =
                g.label_mut(e)
            {
                *bytes = stored;
                let addr = *addr;
                if let Some(replaced) = executed.and_then(|x| x.replaced) {
                    self.note_replaced(addr, replaced);
                }
                self.memory.last.insert(addr, e);
            }
        }
        self.trace.push(ev);
        self.trace_events.push(Some(e));
        Ok(snap)
    }
}
