//! The graph engine: optimal exploration over execution graphs (TruSt: Kokologiannakis,
//! Marmanis, Gladstein, Vafeiadis, POPL 2022), the memory model deciding consistency.
//!
//! An execution is built one event at a time, always the next event of the lowest thread
//! that has one. A read branches over the writes it may read from; a write over its places in
//! coherence order, and it may also *revisit* a read added before it that does not precede it
//! (in program order, reads-from, creation or joining): that read now reads from it, and the
//! events added after the read that the write does not depend on are dropped. A revisit is
//! made only when what it drops was added *maximally* (each dropped read reads, and each
//! dropped write is, the latest in coherence order among the events added before it or that
//! the write depends on), which is what lets each consistent graph be reached exactly once,
//! with no execution that ends blocked and nothing remembered but the graphs still to visit.
//!
//! The program is run for each graph to visit: its events replayed in an order that respects
//! program order and reads-from (a revisited read comes after the write it now reads from),
//! each read given the bytes of the write it reads from. Stores are buffered by the runtime
//! (undone at once), so memory keeps its initial values and only the engine's replies show a
//! thread what others wrote.

use crate::event::{FenceKind, Op, Pending, Reply, StoreBytes, MAX_ACCESS};
use crate::graph::{EventId, Graph, Label, Prefix};
use crate::model::Model;
use crate::results::{Counterexample, ErrorKind, Outcome};

use super::{Config, ExecError, Executor, Progress, RuntimeErrorKind, SlotState, Snapshot};

#[cfg(test)]
mod brute_force;
#[cfg(test)]
mod tests;

/// Explore every consistent execution graph of the program under `model`.
pub fn explore(
    exec: &mut dyn Executor,
    model: &dyn Model,
    cfg: &Config,
    progress: Progress,
) -> Result<Outcome, ExecError> {
    let mut trust = Trust {
        exec,
        model,
        cfg,
        todo: vec![Graph::default()],
        outcome: Outcome::default(),
        slots: Vec::new(),
    };
    while let Some(g) = trust.todo.pop() {
        trust.run(g)?;
        if !progress(&trust.outcome.stats) {
            return Err(ExecError::Interrupted);
        }
        let stop = trust.outcome.error.is_some() && !cfg.keep_going;
        if stop
            || cfg
                .max_executions
                .is_some_and(|m| trust.outcome.stats.executions >= m)
        {
            break;
        }
    }
    Ok(trust.outcome)
}

struct Trust<'a> {
    exec: &'a mut dyn Executor,
    model: &'a dyn Model,
    cfg: &'a Config,
    /// Graphs still to visit: each is run again from the start and extended.
    todo: Vec<Graph>,
    outcome: Outcome,
    /// The graph thread of each slot of the running execution.
    slots: Vec<u32>,
}

/// The label an operation adds, before its outcome is known (a read's source, a write's
/// bytes); `None` for the end of the process.
fn label_of(op: &Op, slots: &[u32]) -> Result<Option<Label>, ExecError> {
    let unsupported = || {
        Err(ExecError::Fatal(format!(
            "the graph engine does not support `{}` yet",
            op.kind_name()
        )))
    };
    Ok(Some(match *op {
        Op::Load { addr, size } => Label::Read {
            addr: addr.0,
            size,
            rf: None,
        },
        Op::Store { addr, size } => Label::Write {
            addr: addr.0,
            size,
            bytes: StoreBytes::new(),
        },
        Op::Rmw { addr, size } => Label::Update {
            addr: addr.0,
            size,
            rf: None,
            bytes: StoreBytes::new(),
        },
        Op::Fence {
            kind: FenceKind::Full,
        } => Label::Fence,
        Op::Fence { .. } | Op::Yield => Label::Local,
        Op::Spawn => Label::Spawn { child: u32::MAX },
        Op::ThreadStart => Label::Start,
        Op::ThreadExit => Label::Exit,
        Op::Join { slot } => match slots.get(slot as usize) {
            Some(&child) => Label::Join { child },
            None => return unsupported(),
        },
        Op::ProcessExit { .. } => return Ok(None),
        _ => return unsupported(),
    }))
}

/// Does the stopped operation match the event it must replay (same kind, same location)?
fn replays(op: &Op, label: &Label) -> bool {
    match (op, label) {
        (Op::Load { addr, .. }, Label::Read { addr: a, .. })
        | (Op::Store { addr, .. }, Label::Write { addr: a, .. })
        | (Op::Rmw { addr, .. }, Label::Update { addr: a, .. }) => addr.0 == *a,
        (Op::Join { .. }, Label::Join { .. }) => true,
        _ => std::mem::discriminant(&label_of_kind(op)) == std::mem::discriminant(label),
    }
}

fn label_of_kind(op: &Op) -> Label {
    label_of(op, &[]).ok().flatten().unwrap_or(Label::Local)
}

impl Trust<'_> {
    /// The reply that makes a read see what it reads from.
    fn reply(g: &Graph, e: EventId) -> Reply {
        let mut reply = Reply::default();
        if let Some(Some(w)) = g.label(e).rf() {
            let bytes = g.label(w).written().expect("reads from a write");
            let mut patch = [0u8; MAX_ACCESS];
            patch[..bytes.len()].copy_from_slice(bytes);
            let mask = if bytes.len() >= 64 {
                u64::MAX
            } else {
                (1u64 << bytes.len()) - 1
            };
            reply.patch = Some((mask, patch));
        }
        reply
    }

    fn slot_of(&self, thread: u32) -> Option<u32> {
        self.slots
            .iter()
            .position(|&t| t == thread)
            .map(|s| s as u32)
    }

    /// Runs `slot`'s pending operation as event `e` of `g`; notes a created thread's slot and
    /// a write's bytes.
    fn step(&mut self, g: &mut Graph, slot: u32, e: EventId) -> Result<Snapshot, ExecError> {
        let reply = Self::reply(g, e);
        let snap = self.exec.step(slot, &reply)?;
        if let Label::Spawn { child } = *g.label(e) {
            if snap.slots.len() > self.slots.len() {
                self.slots.push(child);
            }
        }
        if g.label(e).writes() {
            let stored = snap
                .slots
                .get(slot as usize)
                .and_then(|v| v.prev.as_ref())
                .and_then(|x| x.stored.clone());
            match (g.label_mut(e), stored) {
                (Label::Write { bytes, .. } | Label::Update { bytes, .. }, Some(s)) => *bytes = s,
                _ => {
                    return Err(ExecError::Fatal(
                        "internal: a store's bytes were not reported (stores must be buffered)"
                            .into(),
                    ))
                }
            }
        }
        Ok(snap)
    }

    /// Starts the program and replays `g`'s events.
    fn replay(&mut self, g: &mut Graph) -> Result<Snapshot, ExecError> {
        let mut snap = self.exec.begin()?;
        self.slots = vec![0];
        if g.threads.is_empty() {
            g.add_thread(None);
        }
        let order = g
            .replay_order()
            .ok_or_else(|| ExecError::Fatal("internal: a graph to replay has a cycle".into()))?;
        for e in order {
            let slot = self.slot_of(e.thread);
            let pending = slot.and_then(|s| stopped(&snap, s));
            match (slot, pending) {
                (Some(slot), Some(p)) if p.pc == g.event(e).pc && replays(&p.op, g.label(e)) => {
                    snap = self.step(g, slot, e)?;
                }
                _ => {
                    return Err(ExecError::Fatal(
                        "the program behaved differently when replayed (is it deterministic?)"
                            .into(),
                    ))
                }
            }
        }
        Ok(snap)
    }

    /// Visits `g`: runs the program up to it, then extends it event by event to the end of
    /// the execution, leaving every other branch in `todo`.
    fn run(&mut self, mut g: Graph) -> Result<(), ExecError> {
        let mut snap = self.replay(&mut g)?;
        let mut steps = g.len();
        loop {
            if let Some(ended) = &snap.ended {
                let error = ended.error.as_ref().map(|e| {
                    let kind = match e.kind {
                        RuntimeErrorKind::Assertion | RuntimeErrorKind::Verifier => {
                            ErrorKind::Assertion
                        }
                        RuntimeErrorKind::Signal(_) => ErrorKind::Crash,
                        RuntimeErrorKind::Panic => ErrorKind::Panic,
                        RuntimeErrorKind::Limit => ErrorKind::Hang,
                    };
                    (kind, e.message.clone())
                });
                self.finish(error);
                return self.exec.end();
            }
            if steps >= self.cfg.max_steps {
                self.outcome.stats.bounded += 1;
                return self.exec.end();
            }
            let Some((slot, p)) = self.next(&snap, &g) else {
                // every thread waits for one that never ends
                self.finish(Some((
                    ErrorKind::Deadlock,
                    "every thread waits".to_string(),
                )));
                return self.exec.end();
            };
            let thread = self.slots[slot as usize];
            let Some(mut label) = label_of(&p.op, &self.slots)? else {
                // the process exits: nothing runs after it
                snap = self.exec.step(slot, &Reply::default())?;
                continue;
            };
            if let Label::Spawn { child } = &mut label {
                let at = EventId {
                    thread,
                    index: g.threads[thread as usize].len() as u32,
                };
                *child = g.add_thread(Some(at));
            }
            let e = g.push(thread, label, p.pc);
            steps += 1;
            match g.label(e).clone() {
                Label::Read { addr, .. } | Label::Update { addr, .. } => {
                    let (mut options, taken) = self.sources(&g, e, addr);
                    // an update revisits reads with each source it may read from, also one
                    // that another update reads from (which it then revisits); its bytes are
                    // known once it has run, before any read replays it
                    if g.label(e).writes() {
                        for h in options.iter().chain(&taken) {
                            self.revisits(h, e);
                        }
                    }
                    let Some(first) = options.pop() else {
                        return Err(ExecError::Fatal(
                            "internal: a read has no consistent source".into(),
                        ));
                    };
                    self.todo.extend(options);
                    g = first;
                    snap = self.step(&mut g, slot, e)?;
                }
                Label::Write { addr, .. } => {
                    snap = self.step(&mut g, slot, e)?;
                    self.revisits(&g, e);
                    let mut options = self.placements(&g, e, addr);
                    let Some(first) = options.pop() else {
                        return Err(ExecError::Fatal(
                            "internal: a write has no consistent place".into(),
                        ));
                    };
                    self.todo.extend(options);
                    g = first;
                }
                _ => snap = self.step(&mut g, slot, e)?,
            }
        }
    }

    /// The lowest graph thread with an operation that can run: a join once its thread has
    /// exited, the end of the process once every other thread has.
    fn next(&self, snap: &Snapshot, g: &Graph) -> Option<(u32, Pending)> {
        let mut best: Option<(u32, u32, Pending)> = None;
        for slot in 0..snap.slots.len() as u32 {
            let Some(p) = stopped(snap, slot) else {
                continue;
            };
            let enabled = match p.op {
                Op::Join { slot: s } => {
                    matches!(
                        snap.slots.get(s as usize).map(|v| &v.state),
                        Some(SlotState::Exited)
                    )
                }
                ref op if op.exits_last() => {
                    (0..snap.slots.len() as u32).all(|s| s == slot || stopped(snap, s).is_none())
                }
                _ => true,
            };
            let thread = self.slots[slot as usize];
            if enabled && best.as_ref().is_none_or(|b| thread < b.1) {
                best = Some((slot, thread, p));
            }
        }
        let _ = g;
        best.map(|(slot, _, p)| (slot, p))
    }

    /// `g` with read (or update) `e` reading from each write it may, each consistent; an
    /// update goes right after its source in coherence order. Second, an update's graphs
    /// reading from a write that another update reads from: inconsistent, but a revisit of the
    /// other update makes them whole.
    fn sources(&self, g: &Graph, e: EventId, addr: u64) -> (Vec<Graph>, Vec<Graph>) {
        let candidates: Vec<Option<EventId>> = std::iter::once(None)
            .chain(
                g.events()
                    .filter(|&w| {
                        w != e && g.label(w).writes() && g.label(w).location() == Some(addr)
                    })
                    .map(Some),
            )
            .collect();
        let (mut options, mut taken) = (Vec::new(), Vec::new());
        for w in candidates {
            let mut h = g.clone();
            match h.label_mut(e) {
                Label::Read { rf, .. } | Label::Update { rf, .. } => *rf = w,
                _ => unreachable!(),
            }
            if h.label(e).writes() && self.model.enumerates_coherence() {
                let at = w.map_or(0, |w| h.co_position(w).unwrap() + 1);
                h.place(e, at);
            }
            if self.model.consistent(&h) {
                options.push(h);
            } else if h.label(e).writes()
                && g.events()
                    .any(|u| matches!(g.label(u), Label::Update { rf, .. } if *rf == w))
            {
                taken.push(h);
            }
        }
        (options, taken)
    }

    /// `g` with write `e` at each consistent place in its location's coherence order.
    fn placements(&self, g: &Graph, e: EventId, addr: u64) -> Vec<Graph> {
        if !self.model.enumerates_coherence() {
            // a write keeps a weak trace consistent
            return vec![g.clone()];
        }
        let mut options = Vec::new();
        for at in 0..=g.co_of(addr).len() {
            let mut h = g.clone();
            h.place(e, at);
            if self.model.consistent(&h) {
                options.push(h);
            }
        }
        options
    }

    /// Write (or update) `a`, just added to `g`, revisits each read of its location that
    /// does not precede it, where what the revisit drops was added maximally.
    fn revisits(&mut self, g: &Graph, a: EventId) {
        let addr = g.label(a).location().expect("a write has a location");
        let prefix = g.porf_prefix(a);
        let reads: Vec<EventId> = g
            .events()
            .filter(|&r| {
                r != a
                    && g.label(r).reads()
                    && g.label(r).location() == Some(addr)
                    && !prefix.contains(r)
            })
            .collect();
        for r in reads {
            if !maximal(self.model, g, r, a, &prefix) {
                continue;
            }
            let stamp = g.event(r).stamp;
            let keep = Prefix(
                g.threads
                    .iter()
                    .enumerate()
                    .map(|(t, evs)| {
                        let early = evs.iter().take_while(|ev| ev.stamp <= stamp).count() as u32;
                        early.max(prefix.0[t])
                    })
                    .collect(),
            );
            let mut h = g.clone();
            h.restrict(&keep);
            match h.label_mut(r) {
                Label::Read { rf, .. } | Label::Update { rf, .. } => *rf = Some(a),
                _ => unreachable!(),
            }
            let update = h.label(r).writes() && self.model.enumerates_coherence();
            if update {
                h.unplace(r);
            }
            // the write's places in coherence order (an update's is next to its source), the
            // revisited update right after it
            let positions = if matches!(g.label(a), Label::Update { .. })
                || !self.model.enumerates_coherence()
            {
                vec![None]
            } else {
                h.unplace(a);
                (0..=h.co_of(addr).len()).map(Some).collect()
            };
            for at in positions {
                let mut p = h.clone();
                if let Some(at) = at {
                    p.place(a, at);
                }
                if update {
                    let after = p.co_position(a).unwrap() + 1;
                    p.place(r, after);
                }
                if self.model.consistent(&p) {
                    self.todo.push(p);
                }
            }
        }
    }

    /// An execution ended (with an error, or none).
    fn finish(&mut self, error: Option<(ErrorKind, String)>) {
        self.outcome.stats.executions += 1;
        let Some((kind, message)) = error else { return };
        let found = (0, self.outcome.stats.executions);
        match self
            .outcome
            .errors
            .iter_mut()
            .find(|(c, _)| c.kind == kind && c.message == message)
        {
            Some((_, n)) => *n += 1,
            None => {
                let c = Counterexample {
                    kind,
                    message,
                    trace: Vec::new(),
                    threads: Vec::new(),
                    fault: None,
                    signal: None,
                    schedule: Vec::new(),
                    buffered: true,
                    heap: Vec::new(),
                    output: None,
                    found,
                };
                if self.outcome.error.is_none() {
                    self.outcome.error = Some(c.clone());
                }
                self.outcome.errors.push((c, 1));
            }
        }
    }
}

fn stopped(snap: &Snapshot, slot: u32) -> Option<Pending> {
    match &snap.slots.get(slot as usize)?.state {
        SlotState::Stopped(p) => Some(*p),
        _ => None,
    }
}

/// Were `r` and every event added after it that `a` does not depend on (in `prefix`) added
/// maximally? A read reads from the latest write (as the model counts it) among those added
/// before it or in the prefix; a write is the latest of them in coherence order, where the
/// model has one, and nothing added before it reads from it (it revisited nothing that stays).
fn maximal(model: &dyn Model, g: &Graph, r: EventId, a: EventId, prefix: &Prefix) -> bool {
    let stamp = g.event(r).stamp;
    g.events()
        .filter(|&e| e == r || (g.event(e).stamp > stamp && !prefix.contains(e)))
        .all(|e| added_maximally(model, g, e, a, prefix))
}

fn added_maximally(model: &dyn Model, g: &Graph, e: EventId, a: EventId, prefix: &Prefix) -> bool {
    let stamp = g.event(e).stamp;
    let previous = |x: EventId| g.event(x).stamp <= stamp || prefix.contains(x);
    let label = g.label(e);
    let Some(addr) = label.location() else {
        return true;
    };
    if let Some(rf) = label.rf() {
        if rf.is_some_and(|w| !previous(w)) {
            return false;
        }
        // the revisiting write is not among them (it is not placed yet; an update's read is)
        if model.latest_write(g, addr, &|x| x != e && previous(x), a) != rf {
            return false;
        }
    }
    if label.writes() {
        let read_before = g
            .events()
            .any(|x| x != a && g.label(x).rf() == Some(Some(e)) && previous(x));
        let co_later = g.co_position(e).is_some_and(|p| {
            g.co_of(addr)[p + 1..]
                .iter()
                .any(|&w| w != a && previous(w))
        });
        if read_before || co_later {
            return false;
        }
    }
    true
}
