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
//! each read given the bytes of the write it reads from. Stores reach memory in the order they
//! run, so that the kernel and code that is not instrumented see them; a read that reads from
//! the write memory holds reads memory as it is (with what a system call or uninstrumented
//! code wrote over it since), any other is given its write's bytes (the runtime reports what
//! each store wrote over, so a read of the initial value gets those).

use crate::event::{Event, FenceKind, Op, Pending, Reply, ScriptStep, StoreBytes, ThreadId};
use crate::graph::{Conditional, EventId, Graph, GraphEvent, Label};
use crate::model::Model;
use crate::results::{ErrorKind, Outcome};

use super::{Config, EndVerdict, ExecError, Executor, Progress, SlotState, Snapshot};

use awaits::iteration;
use conditional::StoreConditional;
use objects::{answered, object_of};
pub use pool::{Dealing, Pool};
use pool::{Part, Visit};
pub use replay::replay;
use revisit::set_source;
use script::Script;
use slots::Slots;
use step::{dependencies_of, label_of};

mod awaits;
#[cfg(test)]
mod brute_force;
mod conditional;
mod exchange;
mod objects;
mod pieces;
mod pool;
mod replay;
mod report;
mod revisit;
mod schedule;
mod script;
mod slots;
mod split;
mod step;
#[cfg(test)]
mod tests;

/// Explore every consistent execution graph of the program under `model`.
pub fn explore(
    exec: &mut dyn Executor,
    model: &dyn Model,
    cfg: &Config,
    progress: Progress,
) -> Result<Outcome, ExecError> {
    explore_part(exec, model, cfg, progress, None)
}

/// [`explore`], or with `dealing` only the graphs below the top dealt to this worker (every
/// worker visits the top, one counts it).
pub fn explore_part(
    exec: &mut dyn Executor,
    model: &dyn Model,
    cfg: &Config,
    progress: Progress,
    dealing: Option<Dealing>,
) -> Result<Outcome, ExecError> {
    let mut pool = Pool::new(1, dealing.map(|d| d.shard));
    loop {
        let first = Graph::default();
        let outcome = explore_shared(exec, model, cfg, &mut *progress, &pool, first, dealing)?;
        match pool.again() {
            Some(p) => pool = p,
            None => return Ok(outcome),
        }
    }
}

/// Explore as one worker of several (`-j`): graphs still to visit are independent (a visit
/// only adds graphs, never changes others), so a worker hands some of its own to `pool` when
/// another has none, and takes from it when it has none. `first`: the graph it starts with
/// (the empty one for the worker that starts the exploration). When a worker cuts a piece of
/// memory ([`pieces`]) the exploration stops, and the caller explores again with
/// [`Pool::again`].
pub fn explore_shared(
    exec: &mut dyn Executor,
    model: &dyn Model,
    cfg: &Config,
    progress: Progress,
    pool: &Pool,
    first: Graph,
    dealing: Option<Dealing>,
) -> Result<Outcome, ExecError> {
    let mut trust = Trust {
        exec,
        model,
        cfg,
        todo: vec![first],
        outcome: Outcome::default(),
        slots: Slots::default(),
        trace: Vec::new(),
        trace_events: Vec::new(),
        converted: None,
        pieces: pool.pieces(),
        pool,
        atomic_split: false,
        split: Vec::new(),
        memory: Memory::default(),
        ran: Vec::new(),
        speculative: false,
        script: Script::default(),
        replies: Vec::new(),
        hung: Vec::new(),
    };
    let dealing = dealing.or_else(|| pool.shard().map(Dealing::shard));
    let mut part = dealing.map(Part::new);
    while let Some(mut g) = trust.todo.pop().or_else(|| pool.take()) {
        let visit = part.as_mut().map_or(Visit::Count, |p| p.visit(&mut g));
        if visit == Visit::Skip {
            continue;
        }
        // (the top of a sharded exploration is the first shard's to count)
        let counted = (visit == Visit::Uncounted).then(|| trust.outcome.clone());
        let (depth, owned, base) = (g.depth, g.owned, trust.todo.len());
        let before = trust.outcome.stats.executions;
        if let Err(e) = trust.run(g) {
            pool.stop();
            return Err(e);
        }
        if pool.was_cut() && part.as_ref().is_some_and(Part::split) {
            // (the shards, each its own process, would each start again with other pieces,
            // and deal other graphs)
            return Err(ExecError::Fatal(
                "memory accessed in several sizes was found past the top of the exploration \
                 that the shards share: check without --shard"
                    .into(),
            ));
        }
        for child in &mut trust.todo[base..] {
            (child.depth, child.owned) = (depth + 1, owned);
        }
        let executions = pool.executed(trust.outcome.stats.executions - before);
        if let Some(o) = counted {
            trust.outcome = o;
        }
        if let Some(p) = part.as_mut() {
            p.after(&trust.todo, executions);
        }
        if !progress(&trust.outcome.stats) {
            pool.stop();
            return Err(ExecError::Interrupted);
        }
        let shared = trust.exec.found_shared();
        if !shared.is_empty() {
            // explored again by the caller, with that memory visible
            trust.outcome.shared_found = shared;
            pool.stop();
            break;
        }
        let stop = trust.outcome.error.is_some() && !cfg.keep_going;
        if stop || cfg.max_executions.is_some_and(|m| executions >= m) {
            pool.stop();
            break;
        }
        if pool.done() {
            break; // another worker stopped the exploration
        }
        pool.share(&mut trust.todo, executions);
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
    slots: Slots,
    /// What the running execution did, step by step (for a counterexample), and the graph
    /// event of each step.
    trace: Vec<Event>,
    trace_events: Vec<Option<EventId>>,
    /// A compare-exchange added as a read that wrote when it ran: now an update, whose place
    /// and revisits are still to be made.
    converted: Option<EventId>,
    /// The pieces of memory this worker knows ([`pieces`]), and the pool that knows all.
    pieces: pieces::Pieces,
    pool: &'a Pool,
    /// Whether an access the processor makes atomic was taken in pieces (graphs are then
    /// checked for races on them: [`Trust::check_atomic_pieces`]).
    atomic_split: bool,
    /// Per graph thread, how many events of its pending operation's access, which spans
    /// several pieces, it has run (0: none, or the access is one piece).
    split: Vec<u8>,
    memory: Memory,
    /// Per graph thread, how many of its places the running execution has run.
    ran: Vec<u32>,
    /// The running execution filled a hole, or gave a read the bytes of a write that had not
    /// run: a kept event may now differ ([`Trust::catch_up`]).
    speculative: bool,
    /// The replay's steps the executor was told it may run ahead ([`script`]).
    script: Script,
    /// The running execution's steps: the slot and the reply of each (for its schedule).
    replies: Vec<(u32, Reply)>,
    /// The steps (indices in `replies`) after which their thread was set aside as hung.
    hung: Vec<usize>,
}

/// What memory holds where the running execution wrote: the write that ran last at each
/// location, and what the first one wrote over (the initial value, as far as the program's
/// events go).
#[derive(Default)]
struct Memory {
    last: rustc_hash::FxHashMap<u64, EventId>,
    before: rustc_hash::FxHashMap<u64, StoreBytes>,
    /// The step of the execution's first store at each location in `before`.
    first: rustc_hash::FxHashMap<u64, usize>,
}

/// The operations of `g`'s events: an access over several pieces is one.
fn operations(g: &Graph) -> usize {
    let pieces = g.events().filter_map(|e| g.event(e).piece);
    g.len() - pieces.filter(|p| p.index + 1 < p.count).count()
}

fn differently() -> ExecError {
    ExecError::Fatal("the program behaved differently when replayed (is it deterministic?)".into())
}

/// Why a replay stops when the engine's step is not its script's.
const LEFT_SCRIPT: &str = "internal: the graph engine left its replay's script";

/// The location of the update a full fence is where the model wants one
/// ([`Model::fences_are_updates`]); no access of a program is that low.
const FENCE_LOCATION: u64 = 8;

/// Does the stopped operation match the event it must replay (same kind, same location)?
fn replays(op: &Op, label: &Label) -> bool {
    match (op, label) {
        (Op::Fence { .. }, Label::Update { addr, .. }) => *addr == FENCE_LOCATION,
        (Op::Cas { addr, .. }, Label::Update { addr: a, .. }) => addr.0 == *a,
        // (an object's operation that may wait is a read or an update)
        (op, label) if object_of(op).is_some() => object_of(op).map(|o| o.0) == label.location(),
        (Op::Join { .. }, Label::Join { .. }) => true,
        // a store-conditional that wrote or failed
        (Op::Cas { addr, .. }, Label::Write { addr: a, .. }) => addr.0 == *a,
        (Op::Cas { .. }, Label::Local) => true,
        _ => match label_of(op, &[]) {
            Ok(Some(l)) => {
                std::mem::discriminant(&l) == std::mem::discriminant(label)
                    && l.location() == label.location()
            }
            _ => false,
        },
    }
}

impl Trust<'_> {
    fn slot_of(&self, thread: u32) -> Option<u32> {
        self.slots.of(thread)
    }

    /// Starts the program and replays `g`'s events (up to the holes); `None` when the graph
    /// cannot be run (see [`Trust::catch_up`]).
    fn replay(&mut self, g: &mut Graph) -> Result<Option<Snapshot>, ExecError> {
        if !self.exec.takes_script() {
            self.hand_script(g, false);
            return self.replay_as_scripted(g);
        }
        let original = g.clone();
        self.hand_script(g, true);
        match self.replay_as_scripted(g) {
            // (an initial value differed from the last execution's: run it step by step)
            Err(ExecError::Fatal(m)) if m == LEFT_SCRIPT => {
                self.exec.end()?;
                *g = original;
                self.hand_script(g, false);
                self.replay_as_scripted(g)
            }
            r => r,
        }
    }

    fn replay_as_scripted(&mut self, g: &mut Graph) -> Result<Option<Snapshot>, ExecError> {
        let snap = match self.resume(g)? {
            Some(snap) => snap,
            None => {
                self.slots = Slots::default();
                self.trace.clear();
                self.trace_events.clear();
                self.replies.clear();
                self.hung.clear();
                self.memory = Memory::default();
                self.ran.clear();
                self.exec.begin()?
            }
        };
        self.converted = None;
        self.split.clear();
        // a graph with an event added before a kept one of its thread (a hole filled) or
        // with a hole: its kept events may not be what the thread does now
        self.speculative = g
            .threads
            .iter()
            .any(|evs| evs.windows(2).any(|w| w[0].hole || w[0].stamp > w[1].stamp));
        if g.threads.is_empty() {
            g.add_thread(None);
        }
        self.catch_up(g, snap)
    }

    /// Starts the program with the steps that begin both the last execution and `g`'s replay
    /// carried out by the executor alone ([`Executor::begin_after`]), where it can: the
    /// engine's own state of the last execution is cut back to after them (the trace, the
    /// replies, what memory holds, the slots), which is what replaying them would make, as
    /// the steps and their replies are the same. `None` (nothing started) where no step is
    /// shared, or the executor runs the script ahead by itself.
    fn resume(&mut self, g: &Graph) -> Result<Option<Snapshot>, ExecError> {
        let limit = (self.exec.max_prefix())
            .min(self.trace.len())
            .min(self.trace_events.len())
            .min(self.replies.len());
        // (an access over several pieces is one step of several events)
        if limit == 0 || self.exec.takes_script() || g.events().any(|e| g.event(e).piece.is_some())
        {
            return Ok(None);
        }
        // A step is shared where it is the same event given the same reply, so the thread does
        // the same; its write then wrote the same bytes, which the graph must have (an update
        // a revisit gave another write to read has none: it is not shared, so that it runs and
        // the graph gets them, else a read of it replayed where memory no longer holds it
        // would read memory); and not a compare-exchange (whether it wrote is its label). (The
        // script is made only as far as it is shared.)
        let same = |i: usize, step: &ScriptStep, e: EventId| {
            let (true, ScriptStep::Run { slot, reply, .. }) = (i < limit, step) else {
                return false;
            };
            let written = match g.label(e).written() {
                _ if g.label(e).location() == Some(FENCE_LOCATION) => true,
                Some(b) => {
                    !b.is_empty()
                        && b.len() <= 8
                        && Some(le_value(b)) == self.trace[i].value_written
                }
                None => true,
            };
            self.trace_events[i] == Some(e)
                && self.replies[i].0 == *slot
                && self.replies[i].1 == *reply
                && !matches!(self.trace[i].op, Op::Cas { .. })
                && written
        };
        // (in the last execution's order as far as `g` lets it: the executor repeats its steps)
        let order = |ran: &[u32], i: usize| {
            let e = self.trace_events.get(i).copied().flatten()?;
            g.runs_next(e, ran).then_some(e)
        };
        let steps = self.steps_in_order(g, order, same);
        let shared = steps.len();
        if shared == 0 {
            return Ok(None);
        }
        let (snap, done) = self.exec.begin_after(&mut steps.iter())?;
        self.trace.truncate(done);
        self.trace_events.truncate(done);
        self.replies.truncate(done);
        self.hung.retain(|&i| i < done);
        self.slots = Slots::default();
        self.ran.clear();
        self.ran.resize(g.threads.len(), 0);
        self.memory.last.clear();
        for &e in self.trace_events.iter().flatten() {
            self.ran[e.thread as usize] = e.index + 1;
            let label = g.label(e);
            self.slots.note(label);
            match label.location() {
                Some(addr) if label.writes() && addr != FENCE_LOCATION => {
                    self.memory.last.insert(addr, e);
                }
                _ => {}
            }
        }
        let memory = &mut self.memory;
        memory.first.retain(|_, &mut step| step < done);
        memory
            .before
            .retain(|addr, _| memory.first.contains_key(addr));
        if snap.slots.len() != self.slots.len() {
            // (a thread was not created as the last execution's was: step by step instead)
            self.exec.end()?;
            return Ok(None);
        }
        Ok(Some(snap))
    }

    /// Replays the events of `g` that threads can run next, up to the holes and the ends of
    /// threads. Under a model with porf cycles a read may come before the write it reads from
    /// (it gets the bytes the write wrote before); once that happened, or a hole was filled, a
    /// kept event that the thread no longer does (or a write that writes other bytes) means
    /// the graph cannot be: it depends on what the revisit dropped, through a dependency the
    /// machine-code analysis missed. `None` then.
    fn catch_up(
        &mut self,
        g: &mut Graph,
        mut snap: Snapshot,
    ) -> Result<Option<Snapshot>, ExecError> {
        let cycles = self.model.porf_cycles();
        // (a step that ended the process, with an error, leaves the graph's later events
        // unrun: they are not in the execution, nor in its trace)
        while snap.ended.is_none() {
            self.ran.resize(g.threads.len(), 0);
            let Some(e) = g.next_to_replay(&self.ran, cycles) else {
                break;
            };
            if let Some(Some(w)) = g.label(e).rf() {
                if w.index >= self.ran[w.thread as usize] {
                    self.speculative = true;
                }
            }
            let slot = self.slot_of(e.thread);
            let pending = slot.and_then(|s| stopped(&snap, s));
            match (slot, pending) {
                (Some(slot), Some(p)) if g.event(e).piece.is_some() && p.pc == g.event(e).pc => {
                    match self.replay_piece(g, slot, &p, e)? {
                        Some(Some(s)) => snap = s,
                        Some(None) => {}
                        None if self.speculative => return Ok(None),
                        None => return Err(differently()),
                    }
                    self.ran[e.thread as usize] += 1;
                }
                (Some(slot), Some(p)) if p.pc == g.event(e).pc && replays(&p.op, g.label(e)) => {
                    let kept = g.label(e).written().filter(|b| !b.is_empty()).cloned();
                    self.exec.recycle(std::mem::take(&mut snap));
                    snap = self.step(g, slot, &p, e)?;
                    self.ran[e.thread as usize] += 1;
                    if self.speculative && kept.is_some() && g.label(e).written() != kept.as_ref() {
                        return Ok(None);
                    }
                }
                _ if self.speculative => return Ok(None),
                _ => return Err(differently()),
            }
        }
        let unrun = g
            .threads
            .iter()
            .zip(&self.ran)
            .any(|(evs, &n)| evs.get(n as usize).is_some_and(|ev| !ev.hole));
        if unrun && !cycles && !g.has_holes() && snap.ended.is_none() {
            return Err(ExecError::Fatal(
                "internal: a graph to replay has a cycle".into(),
            ));
        }
        Ok(Some(snap))
    }

    /// A compare-exchange that wrote is an update: its place in coherence order (right after
    /// its source) and its revisits. False when that graph is inconsistent (another update
    /// read the same write: the revisit of that one is this graph's way on), which ends the
    /// execution as blocked.
    fn settle_converted(&mut self, g: &mut Graph) -> bool {
        let Some(e) = self.converted.take() else {
            return true;
        };
        let rf = g.label(e).rf().flatten();
        if self.model.enumerates_coherence() {
            let at = rf.map_or(0, |w| g.co_position(w).map_or(0, |p| p + 1));
            g.place(e, at);
        }
        self.revisits(g, e);
        self.model.consistent_after(g, e)
    }

    /// Visits `g`: runs the program up to it, then extends it event by event to the end of
    /// the execution, leaving every other branch in `todo`.
    fn run(&mut self, mut g: Graph) -> Result<(), ExecError> {
        match self.run_on(&mut g) {
            // (the executor ended a process whose thread ran past the time limit: with real
            // threads it cannot be set aside)
            Err(ExecError::Timeout { .. }) => {
                let snap = Snapshot::default();
                self.finish(&snap, &g, Some((ErrorKind::Hang, hang_message())));
                Ok(())
            }
            r => r,
        }
    }

    fn run_on(&mut self, g: &mut Graph) -> Result<(), ExecError> {
        let Some(mut snap) = self.replay(g)? else {
            return self.unrealizable();
        };
        let mut steps = operations(g);
        // A thread whose step ended the process with an error while others could still run:
        // run again, with it last, so that their events are in the graph too (and revisit).
        let mut last: Option<u32> = None;
        let mut before = Snapshot::default();
        let mut stepped: Option<u32> = None;
        // the event the last step added, and how many graphs were left to visit before it
        let mut added: Option<(EventId, usize)> = None;
        loop {
            if !self.settle_converted(g) {
                self.outcome.stats.blocked += 1;
                return self.exec.end();
            }
            if let Some(ended) = &snap.ended {
                self.check_atomic_pieces(g)?;
                let verdict = super::end_verdict(ended, self.cfg.allow_exit_status);
                if let (EndVerdict::Error { kind, message, .. }, Some(slot)) = (&verdict, stepped) {
                    if self.cfg.keep_going
                        && last.is_none()
                        && self.next_but(g, &before, Some(slot), None).is_some()
                    {
                        // (an execution that ends in the error, counted now: the run with
                        // the others first is another, and may end in another error)
                        self.outcome.stats.events += steps as u64;
                        self.finish(&snap, g, Some((kind.clone(), message.clone())));
                        // the thread's last event goes again after the others' (its branches
                        // with it, made again then)
                        self.exec.end()?;
                        if let Some((e, branches)) = added.take() {
                            g.remove(e);
                            self.todo.truncate(branches);
                        }
                        last = Some(slot);
                        let Some(s) = self.replay(g)? else {
                            return self.unrealizable();
                        };
                        snap = s;
                        steps = operations(g);
                        continue;
                    }
                }
                self.outcome.stats.events += steps as u64;
                self.outcome.stats.depth = steps as u64;
                match verdict {
                    EndVerdict::Complete => self.finish(&snap, g, None),
                    EndVerdict::Bounded => self.outcome.stats.bounded += 1,
                    EndVerdict::Error { kind, message, .. } => {
                        self.finish(&snap, g, Some((kind, message)))
                    }
                }
                return self.exec.end();
            }
            if steps >= self.cfg.max_steps {
                self.outcome.stats.bounded += 1;
                return self.exec.end();
            }
            let next = self.next_fair(g, &snap, last);
            let Some((slot, p)) = next else {
                self.check_atomic_pieces(g)?;
                // threads that wait in an await loop: if another iteration could read another
                // write, the graph where the waiting read reads it is visited too (one of its
                // sources, or a revisit), and this one is redundant; if none could, it spins
                // forever
                let waiting: Vec<EventId> = (0..snap.slots.len() as u32)
                    .filter_map(|s| {
                        let p = stopped(&snap, s)?;
                        let t = *self.slots.get(s as usize)?;
                        self.awaiting(g, t, self.ran.get(t as usize).copied().unwrap_or(0), &p)
                    })
                    .collect();
                // (an iteration with a store-conditional that failed though it could have
                // written repeats itself: the graph where it wrote is visited too)
                let iterations = || waiting.iter().map(|&first| iteration(first, &self.ran));
                let spurious = iterations()
                    .flatten()
                    .any(|e| matches!(g.event(e).conditional, Some(Conditional::Failed { .. })));
                if spurious
                    || iterations()
                        .flatten()
                        .filter(|&e| g.label(e).reads())
                        .any(|r| self.could_read_another(g, r))
                {
                    self.outcome.stats.blocked += 1;
                    return self.exec.end();
                }
                // (a lock waiting for a mutex no unlock will free is a deadlock: a pthread
                // lock, or a lock whose wait the runtime models, as Rust std's)
                let spinning = |r: &&EventId| {
                    let ev = g.event(**r);
                    (ev.op.is_none() || ev.op.is_some_and(|op| op.tried().is_some()))
                        && ev.hash != crate::channel::LOCK_WAIT_HASH
                };
                if waiting.iter().any(|r| spinning(&r)) {
                    let slots: Vec<u32> = waiting
                        .iter()
                        .filter_map(|e| self.slot_of(e.thread))
                        .collect();
                    let message = livelock_message(&slots);
                    self.finish(&snap, g, Some((ErrorKind::Hang, message)));
                    return self.exec.end();
                }
                let hung = snap.slots.iter().any(|v| v.state == SlotState::Hung);
                let (kind, message) = if hung {
                    (ErrorKind::Hang, hang_message())
                } else {
                    let live: Vec<u32> = (0..snap.slots.len() as u32)
                        .filter(|&s| stopped(&snap, s).is_some())
                        .collect();
                    (ErrorKind::Deadlock, deadlock_message(&live))
                };
                self.finish(&snap, g, Some((kind, message)));
                return self.exec.end();
            };
            if let Op::ProcessExit { handlers: true, .. } = p.op {
                if self.next_but(g, &snap, Some(slot), None).is_some() {
                    return Err(ExecError::Fatal(
                        "the graph engine does not support an exit with exit handlers while \
                         other threads run yet (use --engine interleaving)"
                            .into(),
                    ));
                }
            }
            let thread = self.slots[slot as usize];
            if self.cfg.keep_going && last.is_none() {
                // (read only where a step ends the process with an error: see above)
                before.slots.clone_from(&snap.slots);
            }
            stepped = Some(slot);
            if let Op::Assume { cond } = p.op {
                if !cond {
                    // an execution the program rules out
                    self.outcome.stats.blocked += 1;
                    return self.exec.end();
                }
            }
            let Some(mut label) = label_of(&p.op, &self.slots)? else {
                // the process exits: no event
                if let Op::ProcessExit { handlers, .. } = p.op {
                    if handlers || self.exec.runs_code_after_exit() {
                        self.commit_latest(g)?;
                    }
                }
                snap = self.exec.step(slot, &Reply::default())?;
                added = None;
                self.trace.push(Event::from_pending(ThreadId(thread), &p));
                self.trace_events.push(None);
                continue;
            };
            if let Some((addr, size)) = label.access() {
                let Some(split) = self.pieces_of(addr, size) else {
                    return self.learn_pieces(snap);
                };
                if split.len() > 1 {
                    // (one step however many pieces: the step bound counts operations)
                    added = None;
                    let Some(s) = self.split_step(g, slot, &p, &label, &split)? else {
                        return Ok(());
                    };
                    snap = s;
                    steps += 1;
                    // (kept events a thread has reached since are replayed, as after any step)
                    if self.model.porf_cycles() {
                        match self.catch_up(g, snap)? {
                            Some(s) => snap = s,
                            None => return self.unrealizable(),
                        }
                    }
                    continue;
                }
            }
            // (the state before the step, for an executor that reads only what the step
            // changed; not read again before the step's replaces it)
            self.exec.recycle(std::mem::take(&mut snap));
            if label == Label::Fence && self.model.fences_are_updates() {
                label = Label::Update {
                    addr: FENCE_LOCATION,
                    size: 8,
                    rf: None,
                    bytes: StoreBytes::new(),
                };
            }
            let at = EventId {
                thread,
                index: self.ran[thread as usize],
            };
            if let Label::Spawn { child } = &mut label {
                *child = g.add_thread(Some(at));
            }
            if (at.index as usize) < g.threads[thread as usize].len() {
                self.speculative = true; // a hole filled: the kept events after it may differ
            }
            let conditional = match p.op {
                Op::Cas { addr, size } if self.model.store_conditionals_branch() => {
                    let Some(c) = StoreConditional::new(g, at, addr.0, size) else {
                        return self.unrealizable();
                    };
                    label = c.label(p.stores);
                    Some(c)
                }
                _ => None,
            };
            let mut ev = GraphEvent::new(label, p.pc, p.hash);
            ev.skipped = p.skipped;
            ev.locked = matches!(p.op, Op::Cas { .. }) && conditional.is_none();
            if conditional.is_none() {
                ev.cas = p.cas;
            }
            if answered(&p.op) {
                ev.op = Some(p.op);
                // an update's order is known now (a revisit may keep it before its step runs)
                if ev.label.writes() {
                    ev.order = objects::order_of(&p.op, objects::Effect::Write(0));
                }
            }
            let e = g.insert(at, ev);
            // (an isync's: what the branches before it depended on, which orders what
            // follows it under power)
            let isync = matches!(
                p.op,
                Op::Fence {
                    kind: FenceKind::Isync
                }
            );
            let decides =
                g.label(e).access().is_some() || g.event(e).conditional.is_some() || isync;
            if self.model.uses_dependencies() && decides {
                if let Some(deps) = self.exec.dependencies(p.pc) {
                    let deps = dependencies_of(g, e, &deps);
                    g.event_mut(e).deps = (!deps.is_empty()).then(|| Box::new(deps));
                }
            }
            added = Some((e, self.todo.len()));
            if let Some(c) = conditional {
                if !self.branch_conditional(g, e, c) {
                    return self.unrealizable();
                }
            }
            steps += 1;
            match g.label(e).clone() {
                Label::Read { addr, .. } => {
                    let mut candidates = self.sources(g, e, addr);
                    self.wait_on_latest(g, e, addr, &mut candidates);
                    let labelled = match self.exchange_sources(g, e, &candidates) {
                        None => self.object_sources(g, e, &candidates),
                        graphs => graphs,
                    };
                    if let Some(mut graphs) = labelled {
                        // (the last source's, as for a read)
                        let Some(first) = graphs.pop() else {
                            self.outcome.stats.blocked += 1;
                            return self.exec.end();
                        };
                        self.todo.extend(graphs);
                        *g = first;
                        snap = self.step(g, slot, &p, e)?;
                    } else {
                        match candidates[..] {
                            // a consistent graph and a read no event follows: some source keeps
                            // it consistent (the latest write), and only this one is left
                            [w] if self.sinks_stay_consistent(g, e) => {
                                set_source(g, e, w);
                                snap = self.step(g, slot, &p, e)?;
                            }
                            // the source this execution takes is the last consistent one: the
                            // program runs on with it while the others are checked (and kept)
                            _ => {
                                let ok = self.consistent_candidates(g, e, &candidates);
                                let ok = ok.as_deref();
                                let Some((k, last)) = self.source_to_take(g, e, &candidates, ok)
                                else {
                                    self.outcome.stats.blocked += 1;
                                    return self.exec.end();
                                };
                                // (each other source's graph is a copy with its own source)
                                set_source(g, e, candidates[k]);
                                let started = self.start_step(g, slot, &p, e)?;
                                let others =
                                    self.other_sources(g, e, &candidates, ok, last, Some(k));
                                self.todo.extend(others);
                                snap = self.finish_step(g, slot, &p, e, started)?;
                            }
                        }
                    }
                }
                Label::Update { addr, .. } => {
                    if let Some(w) = self.sole_latest_source(g, e, addr) {
                        // one source, the latest write: no other graph, and no check (as a
                        // read's)
                        set_source(g, e, w);
                        if self.model.enumerates_coherence() {
                            let at = g.co_of(addr).len();
                            g.place(e, at);
                        }
                        if g.label(e).writes() {
                            self.revisits(g, e);
                        }
                    } else {
                        let (mut options, taken) = self.update_sources(g, e, addr);
                        // an update revisits reads with each source it may read from, also
                        // one that another update reads from (which it then revisits); its
                        // bytes are known once it has run, before any read replays it
                        if g.label(e).writes() {
                            for h in options.iter().chain(&taken) {
                                self.revisits(h, e);
                            }
                        }
                        let Some(first) = self.take_known(&mut options, e) else {
                            // only sources taken by other updates (their revisits go on), or
                            // writes that have not run (their graphs are replayed)
                            self.todo.extend(options);
                            self.outcome.stats.blocked += 1;
                            return self.exec.end();
                        };
                        self.todo.extend(options);
                        *g = first;
                    }
                    snap = self.step(g, slot, &p, e)?;
                }
                Label::Write { addr, .. } => {
                    // its places are checked while the program runs on: consistency does not
                    // look at the bytes, which the step reports
                    let started = self.start_step(g, slot, &p, e)?;
                    let places = self.placements(g, e, addr);
                    snap = self.finish_step(g, slot, &p, e, started)?;
                    self.revisits(g, e);
                    self.take_place(g, e, places)?;
                }
                _ => snap = self.step(g, slot, &p, e)?,
            }
            self.ran.resize(g.threads.len(), 0);
            self.ran[thread as usize] = e.index + 1;
            if self.model.porf_cycles() {
                match self.catch_up(g, snap)? {
                    Some(s) => snap = s,
                    None => return self.unrealizable(),
                }
            }
        }
    }

    /// Takes the last of `graphs` in which read `e` reads from a write whose bytes are known
    /// (the execution goes on with it; see [`written_known`]).
    fn take_known(&self, graphs: &mut Vec<Graph>, e: EventId) -> Option<Graph> {
        let known = |h: &Graph| written_known(self.model, h, e, h.label(e).rf().flatten());
        let k = graphs.iter().rposition(known)?;
        Some(graphs.remove(k))
    }

    /// The running execution cannot be the graph it was to be ([`Trust::catch_up`]): it ends,
    /// as blocked.
    fn unrealizable(&mut self) -> Result<(), ExecError> {
        self.outcome.stats.blocked += 1;
        self.exec.end()
    }

    /// Before the process exits, memory gets what the exit handlers and the rest of the
    /// process would see: each location's latest write (memory holds the one that ran last).
    /// (Where nothing of the program runs after the exit, nothing sees it.)
    fn commit_latest(&mut self, g: &Graph) -> Result<(), ExecError> {
        // (not a pthread object's: its events are the engine's own, the runtime never
        // touches the object)
        let mut addrs: Vec<u64> = g
            .events()
            .filter(|&e| g.event(e).op.is_none())
            .filter_map(|e| g.label(e).location())
            .collect();
        addrs.sort_unstable();
        addrs.dedup();
        let latest = self.model.latest_writes(g, &addrs);
        for (&addr, latest) in addrs.iter().zip(latest) {
            if let Some(bytes) = latest.and_then(|w| g.label(w).written()) {
                if !bytes.is_empty() {
                    self.exec.commit(crate::channel::NO_OWNER, addr, bytes)?;
                }
            }
        }
        Ok(())
    }

    /// An execution ended (with an error, or none).
    fn finish(&mut self, snap: &Snapshot, g: &Graph, error: Option<(ErrorKind, String)>) {
        self.outcome.stats.executions += 1;
        match error {
            Some((kind, message)) => self.note_error(snap, g, kind, message),
            None => {
                let observed = self.exec.observed();
                if !observed.is_empty() {
                    *self.outcome.observations.entry(observed).or_default() += 1;
                }
            }
        }
    }
}

/// The error of an execution in which every live thread waits (`live`: their slots, which a
/// replay has alike, named as the interleaving engine names them).
pub(super) fn deadlock_message(live: &[u32]) -> String {
    let names: Vec<String> = live.iter().map(|s| format!("T{s}")).collect();
    format!(
        "deadlock: every live thread is blocked ({})",
        names.join(", ")
    )
}

/// The error of an execution in which a thread ran past the time limit between two visible
/// operations.
pub(super) fn hang_message() -> String {
    format!(
        "a thread {} without reaching another visible operation; see --exec-timeout",
        crate::results::TIMEOUT_HANG
    )
}

/// The error of an execution in which the threads in `slots` spin, re-reading memory no
/// thread changes.
pub(super) fn livelock_message(slots: &[u32]) -> String {
    let names: Vec<String> = slots.iter().map(|s| format!("T{s}")).collect();
    let names = match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    };
    format!("livelock: {names} spin forever re-reading memory that no other thread changes")
}

/// Are the bytes of `w` (`None`: the initial value), a source of `e`, known? Not those of a
/// write this execution has not run that never ran (an update added after a hole, before its
/// step), which only graphs with porf cycles have: a read of it is given them once it has run
/// (`catch_up`). (An object's operation is answered by the engine, not from bytes.)
fn written_known(model: &dyn Model, g: &Graph, e: EventId, w: Option<EventId>) -> bool {
    !model.porf_cycles()
        || g.event(e).op.is_some()
        || w.is_none_or(|w| g.label(w).written().is_some_and(|b| !b.is_empty()))
}

fn stopped(snap: &Snapshot, slot: u32) -> Option<Pending> {
    match &snap.slots.get(slot as usize)?.state {
        SlotState::Stopped(p) => Some(*p),
        _ => None,
    }
}

fn le_value(bytes: &[u8]) -> u64 {
    let mut v = [0u8; 8];
    let n = bytes.len().min(8);
    v[..n].copy_from_slice(&bytes[..n]);
    u64::from_le_bytes(v)
}
