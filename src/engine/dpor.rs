//! Source-DPOR with sleep sets over Mazurkiewicz traces.
//!
//! The exploration tree is a stack of nodes, one per position of the current execution. Each
//! node remembers which thread ran there, the backtrack set that race analysis added to, and
//! the sleep set. An execution replays the tree's prefix and extends it; afterwards the deepest
//! node with an unexplored backtrack thread (or an unexplored outcome of a choice) is taken.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use super::buffer::{Buffers, Entry};
use super::sync::SyncState;
use super::{
    Config, Ended, ExecError, Executor, Progress, RuntimeErrorKind, SlotState, Snapshot, Split,
};
use crate::event::{Event, Footprint, Op, Pending, Reply, ScriptStep, TargetAddr, ThreadId};
use crate::model::{BufferKind, Model};
use crate::results::{Counterexample, ErrorKind, Outcome, Schedule, Step};

/// Vector clock indexed by thread id; entry t = number of t's events known. Every event has
/// one, and copies of clocks are the engine's most frequent operation: the first 8 entries
/// are a fixed array (copied whole, with no call), the others (rare) in a vector.
#[derive(Debug, Default, PartialEq, Eq)]
struct Clock {
    first: [u32; CLOCK_INLINE],
    rest: Vec<u32>,
}

const CLOCK_INLINE: usize = 8;

impl Clone for Clock {
    fn clone(&self) -> Self {
        Clock {
            first: self.first,
            rest: self.rest.clone(),
        }
    }

    fn clone_from(&mut self, o: &Self) {
        self.first = o.first;
        if !(self.rest.is_empty() && o.rest.is_empty()) {
            self.rest.clone_from(&o.rest);
        }
    }
}

impl Clock {
    fn get(&self, t: ThreadId) -> u32 {
        match t.index().checked_sub(CLOCK_INLINE) {
            None => self.first[t.index()],
            Some(i) => self.rest.get(i).copied().unwrap_or(0),
        }
    }
    fn set(&mut self, t: ThreadId, v: u32) {
        match t.index().checked_sub(CLOCK_INLINE) {
            None => self.first[t.index()] = v,
            Some(i) => {
                if self.rest.len() <= i {
                    self.rest.resize(i + 1, 0);
                }
                self.rest[i] = v;
            }
        }
    }
    fn join(&mut self, o: &Clock) {
        for (a, b) in self.first.iter_mut().zip(&o.first) {
            *a = (*a).max(*b);
        }
        if self.rest.len() < o.rest.len() {
            self.rest.resize(o.rest.len(), 0);
        }
        for (a, b) in self.rest.iter_mut().zip(&o.rest) {
            *a = (*a).max(*b);
        }
    }
}

struct Node {
    chosen: ThreadId,
    alt: u32,
    alts: u32,
    enabled: Threads,
    backtrack: Threads,
    /// Inherited sleep set, with each sleeping thread's next step.
    sleep: Vec<(ThreadId, Asleep)>,
    /// Threads already explored from this node, with the step they ran.
    explored: Vec<(ThreadId, Asleep)>,
    /// The operation `chosen` ran here, to check that replays run the same.
    op: Option<Op>,
    /// What the executor was told to do here, for scripting the replay of this position.
    step: Option<ScriptStep>,
    /// The step here set its thread aside as hung: a replay expects it to hang again
    /// (`Executor::step_hanging`), and no script or checkpoint goes past it.
    hangs: bool,
    /// When `chosen` began an atomic section here: what the section did in every execution
    /// through here so far (outcomes of choices inside it differ).
    section: Option<SectionBody>,
}

impl Node {
    fn covers(&self, t: ThreadId) -> bool {
        self.chosen == t
            || self.backtrack.contains(&t)
            || self.asleep(t)
            || self.explored.iter().any(|(s, _)| *s == t)
    }

    fn asleep(&self, t: ThreadId) -> bool {
        self.sleep.iter().any(|(s, _)| *s == t)
    }

    /// The enabled threads not in the inherited sleep set.
    fn awake(&self) -> impl Iterator<Item = ThreadId> + '_ {
        self.enabled.iter().copied().filter(|&t| !self.asleep(t))
    }
}

/// Spawn-tree interning: (parent, n-th child) -> dense id, stable across executions. The
/// updaters of a thread's store buffer are its children with keys from [`UPDATER`] up.
#[derive(Default)]
struct ThreadNames {
    ids: BTreeMap<(u32, u64), ThreadId>,
    /// (parent, nth) of each id but main's, by id - 1.
    keys: Vec<(u32, u64)>,
    count: u32,
}

const UPDATER: u64 = 1 << 63;

impl ThreadNames {
    fn child(&mut self, parent: ThreadId, nth: u64) -> ThreadId {
        let next = ThreadId(self.count + 1);
        let id = *self.ids.entry((parent.0, nth)).or_insert(next);
        if id == next {
            self.count += 1;
            self.keys.push((parent.0, nth));
        }
        id
    }

    /// The spawn-tree path of a thread: the `nth` keys from main down (empty for main).
    /// Unlike ids, paths do not depend on the order threads were first seen.
    fn path(&self, t: ThreadId) -> Vec<u64> {
        let mut path = Vec::new();
        let mut t = t;
        while t != ThreadId::MAIN {
            let (parent, nth) = self.keys[t.index() - 1];
            path.push(nth);
            t = ThreadId(parent);
        }
        path.reverse();
        path
    }

    fn intern_path(&mut self, path: &[u64]) -> ThreadId {
        path.iter()
            .fold(ThreadId::MAIN, |parent, &nth| self.child(parent, nth))
    }
}

/// A few threads (enabled ones, backtrack sets: made at every step, kept off the heap).
type Threads = SmallVec<[ThreadId; 8]>;

/// Trace positions an event is linked to (a few, per event: kept off the heap).
type Links = SmallVec<[usize; 8]>;

struct TraceEvent {
    ev: Event,
    clock: Clock,
    /// 1-based index among its thread's events.
    seq: u32,
    /// Position of the `__VERIFIER_atomic_begin` whose section holds this event.
    section: Option<usize>,
    /// Position of the end of that section, once it has ended. A section is one step: what
    /// comes after any event of it comes after all of it (its clock is the end's).
    closed_at: Option<u32>,
}

/// A read of a thread since its last effect, with no write of another thread to it since.
#[derive(Clone, Copy)]
struct WindowRead {
    pc: u64,
    /// The thread's state hash at the read.
    hash: u64,
    addr: u64,
    size: u32,
    value: Option<u64>,
}

#[derive(Default)]
struct ThreadRun {
    slot: u32,
    parent: Option<ThreadId>,
    start: u64,
    clock: Clock,
    seq: u32,
    pending: Option<Pending>,
    exited: bool,
    /// Set aside after running past the time limit without a visible operation: no more
    /// events in this execution, and never exited.
    hung: bool,
    children: u32,
    exit_event: Option<usize>,
    last_event: Option<usize>,
    /// Loads since the thread's last effect (its await-loop window).
    window: Vec<WindowRead>,
    /// Position of its open `__VERIFIER_atomic_begin`.
    atomic_begin: Option<usize>,
    /// For the updater of a store buffer: whose buffer, and which updater (0, or the location).
    updater: Option<(ThreadId, u64)>,
    /// Join of the clocks of all of this thread's updates so far (what a fence waits for).
    flushed: Clock,
    /// PSO: join of the clocks of this thread's updates, per sfence epoch.
    epoch_clocks: Vec<Clock>,
}

impl Clone for ThreadRun {
    fn clone(&self) -> Self {
        let mut t = ThreadRun::default();
        t.clone_from(self);
        t
    }

    /// Field by field, keeping this one's vectors (checkpoints are copied into retired ones);
    /// every field named, so that a new one cannot be forgotten here.
    fn clone_from(&mut self, o: &Self) {
        let ThreadRun {
            slot,
            parent,
            start,
            clock,
            seq,
            pending,
            exited,
            hung,
            children,
            exit_event,
            last_event,
            window,
            atomic_begin,
            updater,
            flushed,
            epoch_clocks,
        } = o;
        self.slot = *slot;
        self.parent = *parent;
        self.start = *start;
        self.clock.clone_from(clock);
        self.seq = *seq;
        self.pending = *pending;
        self.exited = *exited;
        self.hung = *hung;
        self.children = *children;
        self.exit_event = *exit_event;
        self.last_event = *last_event;
        // (most are empty: no call to copy nothing)
        if !(self.window.is_empty() && window.is_empty()) {
            self.window.clone_from(window);
        }
        self.atomic_begin = *atomic_begin;
        self.updater = *updater;
        self.flushed.clone_from(flushed);
        if !(self.epoch_clocks.is_empty() && epoch_clocks.is_empty()) {
            self.epoch_clocks.clone_from(epoch_clocks);
        }
    }
}

/// State of one execution.
struct Run {
    sync: SyncState,
    slot_tid: Vec<ThreadId>,
    threads: Vec<ThreadRun>,
    trace: Vec<TraceEvent>,
    /// By word (address / 8): hashed with Fx, as SipHash cost more than the rest of the lookup.
    locs: FxHashMap<u64, WordHistory>,
    process_exit: Option<usize>,
    /// Store buffers (TSO, PSO), when the model has them.
    buffers: Option<Buffers>,
    /// The buffer entry the update being recorded writes.
    flushing: Option<Entry>,
    /// Split exploration: this execution went past the top into a claimed subtree.
    claimed: bool,
    /// The position of the step in which a thread ended the process (a failed assertion,
    /// abort(), a crash): it conflicts with every other thread's next operation.
    ended_at: Option<usize>,
    /// Races (earlier position, later position) whose later event is inside an atomic section
    /// still open: reversed when it ends, as the section is one step.
    deferred: Vec<(usize, usize)>,
    /// The thread of the last step (a store buffer's: its owner), and how many steps in a row
    /// it has taken ([`Config::fair_after`]).
    streak: (ThreadId, u32),
}

enum RunEnd {
    Complete,
    Blocked,
    Bounded,
    Error(Box<Counterexample>),
    /// Stopped before the last step of a replay, handed over to a debugger.
    HandedOver,
    /// A leaf of the split top (or an execution ending in the top) another worker explores.
    Skipped,
}

struct Explorer<'a> {
    model: &'a dyn Model,
    cfg: &'a Config,
    nodes: Vec<Node>,
    /// Positions before this one replay events already analysed.
    replay_until: usize,
    names: ThreadNames,
    /// Replaying: hand the execution over instead of running the last step.
    hand_over: bool,
    /// Sharing the exploration with other workers.
    split: Option<Splitting<'a>>,
    /// The last execution's state, kept for its allocations and its trace.
    spare: Option<Box<Run>>,
    /// States at positions of the current path (in order; each without its trace, which every
    /// execution through that position shares), where the next executions restore the engine
    /// instead of recording the prefix they repeat again ([`Explorer::fast_forward`]).
    checkpoints: Vec<(usize, Box<Run>)>,
    /// How many steps the executor can carry out by itself (0: none; no checkpoints then).
    max_prefix: usize,
    /// Checkpoints no longer on the path, whose allocations the next ones reuse (boxed: states
    /// move between here, the checkpoints and the last execution, a pointer each).
    #[allow(clippy::vec_box)]
    retired: Vec<Box<Run>>,
}

/// Checkpoints are taken at every position while they are small, further apart as the state
/// grows (a checkpoint of `size` entries costs about as much as re-stepping `size /
/// CHECKPOINT_STEP` events) and as the position grows (about `CHECKPOINT_BUDGET` location and
/// thread entries in all). 16, not 64, since steps through the engine got cheaper than copies
/// of a large location table (measured: BENCHMARKS.md).
const CHECKPOINT_STEP: usize = 16;
const CHECKPOINT_BUDGET: usize = 1 << 18;

/// Explore every inequivalent execution; stop at the first error (or go on, with
/// `cfg.keep_going`).
pub fn explore(
    exec: &mut dyn Executor,
    model: &dyn Model,
    cfg: &Config,
    progress: Progress,
) -> Result<Outcome, ExecError> {
    if cfg.graph {
        return super::trust::explore(exec, model, cfg, progress);
    }
    explore_part(exec, model, cfg, progress, None)
}

/// [`explore`], or with `split` this worker's part of an exploration shared with others.
pub fn explore_part(
    exec: &mut dyn Executor,
    model: &dyn Model,
    cfg: &Config,
    progress: Progress,
    split: Option<&Split>,
) -> Result<Outcome, ExecError> {
    let mut x = Explorer::new(model, cfg);
    x.split = split.map(|split| Splitting {
        split,
        depth: None,
        leaves: 0,
        leaves_hash: 0,
        current: 0,
    });
    explore_from(x, exec, cfg, progress, false)
}

/// Run one execution along `schedule` (a counterexample's), then on as the exploration would;
/// the steps at `hung` hang again ([`Counterexample::hung`]). With `hand_over`, stop before
/// the schedule's last step and give the execution to [`Executor::hand_over`] (a debugger)
/// instead.
pub fn replay(
    exec: &mut dyn Executor,
    model: &dyn Model,
    cfg: &Config,
    schedule: &Schedule,
    hand_over: bool,
) -> Result<Outcome, ExecError> {
    if cfg.graph {
        return super::trust::replay(exec, cfg, schedule, hand_over);
    }
    let Schedule {
        steps: schedule,
        hung,
        ..
    } = schedule;
    let mut x = Explorer::new(model, cfg);
    x.replay_until = schedule.len();
    x.hand_over = hand_over;
    for (i, s) in schedule.iter().enumerate() {
        let chosen = x.names.intern_path(&s.thread);
        x.nodes.push(Node {
            chosen,
            alt: s.alt,
            alts: s.alt + 1,
            enabled: Threads::new(),
            backtrack: Threads::new(),
            sleep: Vec::new(),
            explored: Vec::new(),
            op: None,
            step: None,
            hangs: hung.contains(&i),
            section: None,
        });
    }
    explore_from(x, exec, cfg, &mut |_| true, true)
}

fn explore_from(
    mut x: Explorer,
    exec: &mut dyn Executor,
    cfg: &Config,
    progress: Progress,
    once: bool,
) -> Result<Outcome, ExecError> {
    let mut o = Outcome::default();
    loop {
        if !once {
            // asked before each execution: a target learns how it runs them with the first
            x.max_prefix = exec.max_prefix();
        }
        let diverged_at = x.replay_until;
        let (end, mut run) = x.run_one(exec)?;
        x.reverse_deferred(&mut run);
        x.gather_sections(&run, diverged_at);
        let end = x.settle_leaf(&run, end);
        let stats = &mut o.stats;
        stats.events += run.trace.len() as u64;
        stats.depth = run.trace.len() as u64;
        let mut stop = false;
        match end {
            RunEnd::Complete => {
                stats.executions += 1;
                let seen = exec.observed();
                if !seen.is_empty() {
                    *o.observations.entry(seen).or_insert(0) += 1;
                }
            }
            RunEnd::Blocked => stats.blocked += 1,
            RunEnd::Bounded => stats.bounded += 1,
            RunEnd::HandedOver | RunEnd::Skipped => {}
            RunEnd::Error(mut cx) => {
                let leaf = x.split.as_ref().map_or(0, |s| s.current);
                cx.found = (leaf, stats.executions + stats.blocked + stats.bounded);
                stats.executions += 1;
                for e in &mut cx.trace {
                    e.pc = exec.code_address(e.pc);
                }
                for p in cx.threads.iter_mut().filter_map(|t| t.pending.as_mut()) {
                    p.pc = exec.code_address(p.pc);
                }
                cx.heap = exec.heap_blocks();
                cx.output = exec.output();
                if let Some(m) = own_report(&cx.kind, cx.signal, cx.output.as_ref()) {
                    cx.message = m;
                }
                match o
                    .errors
                    .iter_mut()
                    .find(|(e, _)| e.kind == cx.kind && e.message == cx.message)
                {
                    Some(e) => e.1 += 1,
                    None => o.errors.push(((*cx).clone(), 1)),
                }
                o.error.get_or_insert(*cx);
                stop = !cfg.keep_going;
            }
        }
        if !once {
            let found = exec.found_shared();
            if !found.is_empty() {
                o.shared_found = found;
                stop = true;
            }
        }
        let runs = o.stats.executions + o.stats.blocked + o.stats.bounded;
        if cfg.max_executions.is_some_and(|m| runs >= m) {
            stop = true;
        }
        if !stop
            && x.split
                .as_ref()
                .is_some_and(|s| s.depth.is_none() && runs >= s.split.after)
        {
            // Every worker has explored the same first executions; the one that claims the
            // empty prefix counts them.
            if !x.begin_split(&run) {
                o = Outcome::default();
            }
        }
        let more = !stop && !once && progress(&o.stats) && x.next_branch(&run);
        if stop {
            progress(&o.stats);
        }
        if !more {
            // ended before the split: every worker explored the same, one counts it
            if x.split.as_ref().is_some_and(|s| s.depth.is_none()) && !x.claims_the_start() {
                return Ok(Outcome::default());
            }
            o.top = x
                .split
                .as_ref()
                .filter(|s| s.depth.is_some())
                .map(|s| (s.leaves, s.leaves_hash));
            return Ok(o);
        }
        x.spare = Some(run);
    }
}

impl Run {
    fn new(model: &dyn Model) -> Run {
        Run {
            sync: SyncState::default(),
            slot_tid: Vec::new(),
            threads: Vec::new(),
            trace: Vec::new(),
            locs: FxHashMap::default(),
            process_exit: None,
            buffers: model
                .buffers()
                .map(|(kind, bound)| Buffers::new(kind, bound)),
            flushing: None,
            claimed: false,
            ended_at: None,
            deferred: Vec::new(),
            streak: (ThreadId::MAIN, 0),
        }
    }

    /// Become a copy of `o` but for the trace, which is kept: a checkpoint (in a retired one,
    /// with an empty trace) or the start of an execution at one (in the last execution's
    /// state, whose trace up to there it shares). Reuses this state's allocations.
    fn copy_from(&mut self, o: &Run) {
        let Run {
            sync,
            slot_tid,
            threads,
            trace: _,
            locs,
            process_exit,
            buffers,
            flushing,
            claimed,
            ended_at,
            deferred,
            streak,
        } = o;
        self.sync.clone_from(sync);
        self.slot_tid.clone_from(slot_tid);
        self.threads.clone_from(threads);
        self.locs.clone_from(locs);
        self.process_exit = *process_exit;
        self.buffers.clone_from(buffers);
        self.flushing.clone_from(flushing);
        self.claimed = *claimed;
        self.ended_at = *ended_at;
        self.deferred.clone_from(deferred);
        self.streak = *streak;
    }

    /// Whether the threads of `snap` wait where they waited in this state.
    fn waits_as(&self, snap: &Snapshot) -> bool {
        snap.ended.is_none()
            && snap.slots.len() == self.slot_tid.len()
            && snap.slots.iter().zip(&self.slot_tid).all(|(view, t)| {
                let pending = self.threads[t.index()].pending;
                match &view.state {
                    SlotState::Stopped(p) => pending.is_some_and(|q| q.op == p.op && q.pc == p.pc),
                    SlotState::Exited => pending.is_none(),
                    SlotState::Hung => pending.is_none() && self.threads[t.index()].hung,
                }
            })
    }

    /// A fresh state that keeps this one's trace and location table allocations.
    fn recycled(mut self: Box<Run>, model: &dyn Model) -> Box<Run> {
        let mut trace = std::mem::take(&mut self.trace);
        let mut locs = std::mem::take(&mut self.locs);
        let mut slot_tid = std::mem::take(&mut self.slot_tid);
        trace.clear();
        locs.clear();
        slot_tid.clear();
        *self = Run {
            trace,
            locs,
            slot_tid,
            ..Run::new(model)
        };
        self
    }

    /// May `t` run `op` as far as its store buffer is concerned?
    fn buffer_allows(&self, t: ThreadId, op: &Op) -> bool {
        let Some(b) = &self.buffers else { return true };
        match op {
            Op::Store { addr, .. } | Op::RmwStore { addr, .. } => b.has_room(t, addr.0),
            op if op.drains_buffer() => b.is_empty(t) || self.sync.only_loads(op),
            Op::HeapRelease { addr, len } => !b.holds(t, addr.0, *len),
            _ => true,
        }
    }

    /// The bytes of its own buffer a load by `t` sees (mask over the access, bytes, entries).
    fn forwarding(&self, t: ThreadId, op: &Op) -> Option<super::buffer::Forwarding> {
        let b = self.buffers.as_ref()?;
        match *op {
            Op::Load { addr, size } | Op::RmwLoad { addr, size } => {
                b.forwarding(t, addr.0, size as u64)
            }
            _ => None,
        }
    }

    fn thread(&mut self, t: ThreadId) -> &mut ThreadRun {
        if self.threads.len() <= t.index() {
            self.threads.resize(t.index() + 1, ThreadRun::default());
        }
        &mut self.threads[t.index()]
    }

    fn join_target(&self, op: &Op) -> Option<ThreadId> {
        match op {
            Op::Join { slot } => self.slot_tid.get(*slot as usize).copied(),
            _ => None,
        }
    }

    fn awaiting(&self, t: ThreadId) -> bool {
        let th = &self.threads[t.index()];
        match (&th.pending, th.pending.and_then(|p| p.op.data())) {
            // (a hash of 0: a load the runtime made for the program, a piece of a string
            // instruction or a memory function, which is no await)
            // (a lock the runtime models waits as soon as the thread read its word taken,
            // which is so still: the inlined compare-exchange that failed before it was
            // called, or its own last attempt)
            (Some(p), Some((addr, size))) if p.hash == crate::channel::LOCK_WAIT_HASH => th
                .window
                .iter()
                .any(|w| w.addr == addr.0 && w.size == size && w.value.is_some_and(|v| v != 0)),
            (Some(p), Some((addr, _)))
                if (p.op.is_load() || matches!(p.op, Op::Rmw { .. })) && p.hash != 0 =>
            {
                th.window
                    .iter()
                    .any(|w| w.pc == p.pc && w.hash == p.hash && w.addr == addr.0)
            }
            // a try that failed in the same state before, its object unchanged since
            (Some(p), None) if p.hash != 0 => p.op.tried().is_some_and(|obj| {
                th.window
                    .iter()
                    .any(|w| w.pc == p.pc && w.hash == p.hash && w.addr == obj.0)
            }),
            _ => false,
        }
    }

    fn live(&self) -> Threads {
        (0..self.threads.len())
            .map(|i| ThreadId(i as u32))
            .filter(|&t| self.threads[t.index()].pending.is_some())
            .collect()
    }

    fn enabled(&self) -> Threads {
        let mut en: Threads = self
            .live()
            .into_iter()
            .filter(|&t| {
                let op = self.threads[t.index()].pending.unwrap().op;
                self.sync.enabled(t, &op, self.join_target(&op))
                    && !self.awaiting(t)
                    && self.buffer_allows(t, &op)
            })
            .collect();
        // an exit that comes last waits while any other thread can run
        if en.iter().any(|&t| !self.exits_last(t)) {
            en.retain(|t| !self.exits_last(*t));
        }
        match self.sync.atomic_owner {
            // inside an atomic section only its thread runs (and its buffer drains); if it
            // cannot, nothing does
            Some(owner) => en
                .into_iter()
                .filter(|&t| self.owner_of(t) == owner)
                .collect(),
            None => en,
        }
    }

    /// Whether `t`'s pending operation is an exit that comes last.
    fn exits_last(&self, t: ThreadId) -> bool {
        self.threads
            .get(t.index())
            .and_then(|th| th.pending)
            .is_some_and(|p| p.op.exits_last())
    }

    /// Whether `t` is in [`Run::enabled`], without building the set (a replayed step asks
    /// only this, and most steps are replayed).
    fn is_enabled(&self, t: ThreadId) -> bool {
        if self.exits_last(t) {
            return self.enabled().contains(&t);
        }
        let ok = |t: ThreadId| {
            self.threads
                .get(t.index())
                .and_then(|th| th.pending)
                .is_some_and(|p| {
                    self.sync.enabled(t, &p.op, self.join_target(&p.op))
                        && !self.awaiting(t)
                        && self.buffer_allows(t, &p.op)
                })
        };
        let yes = ok(t)
            && self
                .sync
                .atomic_owner
                .is_none_or(|owner| self.owner_of(t) == owner);
        debug_assert_eq!(yes, self.enabled().contains(&t));
        yes
    }

    fn enabled_but_awaiting(&self, t: ThreadId) -> bool {
        self.threads
            .get(t.index())
            .and_then(|th| th.pending)
            .is_some_and(|p| {
                self.sync.enabled(t, &p.op, self.join_target(&p.op))
                    && self.buffer_allows(t, &p.op)
                    && self.awaiting(t)
            })
    }

    fn owner_of(&self, t: ThreadId) -> ThreadId {
        self.threads[t.index()].updater.map_or(t, |(o, _)| o)
    }

    /// The events `ev` is ordered after through memory, and those of them it races with: the
    /// last write to each byte it touches, and for a write also the latest reads. A load is
    /// never ordered with its own thread's updates (a load forwarded from the buffer, byte
    /// `n` set in `forwarded`, with nothing yet); an update is ordered after its own thread's
    /// earlier updates of the location but does not race with them (chronological traces).
    fn links(&self, ev: &Event, fp: &Footprint, forwarded: u64) -> (Links, Links) {
        let owner = ev.owner();
        let (mut order, mut race) = (Links::new(), Links::new());
        if matches!(ev.op, Op::ProcessExit { handlers: true, .. }) {
            race.extend(self.threads.iter().filter_map(|t| t.last_event));
        }
        race.extend(self.process_exit);
        for a in fp.iter() {
            let skip = if a.write { 0 } else { forwarded };
            for (word, mask) in word_masks(a.addr, a.size, skip) {
                let Some(h) = self.locs.get(&word) else {
                    continue;
                };
                let mut seen = 0;
                for (i, &lw) in h.last_write.iter().enumerate() {
                    if mask >> i & 1 == 0 || lw == 0 || lw == seen {
                        continue;
                    }
                    seen = lw;
                    let w = lw as usize - 1;
                    if self.trace[w].ev.owner() != owner {
                        race.push(w);
                    } else if a.write {
                        order.push(w);
                    }
                }
                if a.write {
                    race.extend(
                        h.reads
                            .iter()
                            .filter(|r| r.mask & mask != 0 && r.thread != owner)
                            .map(|r| r.pos as usize),
                    );
                }
            }
        }
        for v in [&mut order, &mut race] {
            v.sort_unstable();
            v.dedup();
            v.retain(|i| self.trace[*i].ev.thread != ev.thread);
        }
        order.extend(race.iter().copied());
        (order, race)
    }

    fn hb(&self, a: usize, b: usize) -> bool {
        let ea = &self.trace[a];
        self.trace[b].clock.get(ea.ev.thread) >= ea.seq
    }
}

/// A replay that did not meet what the execution it repeats met at event `pos + 1`.
fn diverged(pos: usize, t: ThreadId) -> ExecError {
    ExecError::Fatal(format!(
        "the program behaved differently when replayed at event {} (thread {t}); \
         it depends on something the checker does not control (time, randomness, input)",
        pos + 1
    ))
}

/// Complete executions of `workers` workers sharing one exploration, run one after the other:
/// each claims leaves first come first served (`-j`), or by prefix hash (`--shard`).
#[cfg(test)]
fn split_executions(
    make: &dyn Fn() -> super::mock::Mock,
    model: &dyn Model,
    workers: u64,
    (after, leaves): (u64, u64),
    by_hash: bool,
) -> u64 {
    use std::collections::HashSet;
    use std::sync::Mutex;
    let taken = Mutex::new(HashSet::new());
    (0..workers)
        .map(|w| {
            let claim = |p: &[Step]| {
                if by_hash {
                    super::prefix_hash(p) % workers == w
                } else {
                    taken.lock().unwrap().insert(p.to_vec())
                }
            };
            let split = Split {
                after,
                leaves,
                claim: &claim,
                on_split: &|| {},
            };
            let mut mock = make();
            let cfg = Config::default();
            let o = explore_part(&mut mock, model, &cfg, &mut |_| true, Some(&split)).unwrap();
            assert!(o.error.is_none());
            o.stats.executions
        })
        .sum()
}

mod explorer;
mod history;
mod reports;
mod sections;
mod split_top;

use history::{word_masks, WordHistory};
pub(super) use reports::own_report;
use reports::{le_value, names};
pub(super) use reports::{renumber, signal_name};
use sections::{Asleep, SectionBody};
use split_top::Splitting;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod brute_force;

#[cfg(test)]
mod brute_force_buffered;
