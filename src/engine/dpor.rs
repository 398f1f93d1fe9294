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
    Config, Counterexample, Ended, ErrorKind, ExecError, Executor, Outcome, ProcessEnd, Progress,
    Reply, RuntimeErrorKind, ScriptStep, SlotState, Snapshot, Split, Step, ThreadInfo,
};
use crate::event::{Event, FenceKind, Footprint, Op, Pending, TargetAddr, ThreadId};
use crate::model::{BufferKind, Model};

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
    /// Inherited sleep set, with each sleeping thread's next event.
    sleep: Vec<(ThreadId, Event)>,
    /// Threads already explored from this node, with the event they ran.
    explored: Vec<(ThreadId, Event)>,
    /// The operation `chosen` ran here, to check that replays run the same.
    op: Option<Op>,
    /// What the executor was told to do here, for scripting the replay of this position.
    step: Option<ScriptStep>,
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
    children: u32,
    exit_event: Option<usize>,
    last_event: Option<usize>,
    /// Loads since the thread's last effect: (pc, state hash, address, size).
    window: Vec<(u64, u64, u64, u32)>,
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

/// The histories of the 8 bytes of an aligned word, kept together so that an access looks up
/// each word it touches once, not each byte: per byte its last write, and the latest read of
/// each thread.
#[derive(Default)]
struct WordHistory {
    /// Per byte: the position of its last write + 1 (0: none).
    last_write: [u32; 8],
    /// Reads with the bytes of this word for which each is its thread's latest (a later
    /// write is ordered after those of other owners); inline for a few threads: checkpoints
    /// clone every word's history.
    reads: SmallVec<[WordRead; 4]>,
}

/// A read in a [`WordHistory`], with its thread (so that its trace entry, far away in memory,
/// need not be looked at).
#[derive(Clone, Copy)]
struct WordRead {
    pos: u32,
    thread: ThreadId,
    /// Bit i: byte i of the word.
    mask: u8,
}

impl Clone for WordHistory {
    /// Element by element: a few, and a slice copy would be a call to memcpy.
    fn clone(&self) -> Self {
        WordHistory {
            last_write: self.last_write,
            reads: self.reads.iter().copied().collect(),
        }
    }
}

impl WordHistory {
    /// The read at `pos` of the bytes in `mask` by `thread`: the latest of that thread for them.
    fn read(&mut self, pos: usize, mask: u8, thread: ThreadId) {
        self.reads.retain(|r| {
            if r.thread == thread {
                r.mask &= !mask;
            }
            r.mask != 0
        });
        self.reads.push(WordRead {
            pos: pos as u32,
            thread,
            mask,
        });
    }

    fn write(&mut self, pos: usize, mask: u8) {
        for (i, w) in self.last_write.iter_mut().enumerate() {
            if mask >> i & 1 != 0 {
                *w = pos as u32 + 1;
            }
        }
    }
}

/// The words (address / 8) that `size` bytes at `addr` touch, each with the mask of its bytes
/// among them, but for those `skip` names (bit i: byte `addr + i`).
fn word_masks(addr: u64, size: u32, skip: u64) -> impl Iterator<Item = (u64, u8)> {
    let end = addr + size as u64;
    (addr >> 3..=(end.max(addr + 1) - 1) >> 3).filter_map(move |w| {
        let mut mask = 0u8;
        for b in (w << 3).max(addr)..((w << 3) + 8).min(end) {
            let i = b - addr;
            if i >= 64 || skip >> i & 1 == 0 {
                mask |= 1 << (b & 7);
            }
        }
        (mask != 0).then_some((w, mask))
    })
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
/// of a large location table (BENCHMARKS.md, change 14).
const CHECKPOINT_STEP: usize = 16;
const CHECKPOINT_BUDGET: usize = 1 << 18;

/// A worker's part of a split exploration ([`Split`]).
struct Splitting<'a> {
    split: &'a Split<'a>,
    /// The depth of the fully branched top; known after the first execution.
    depth: Option<usize>,
    /// The leaves of the top met so far, and a hash of their prefixes in order: every worker
    /// and every shard must walk the same top, or their parts do not add up.
    leaves: u64,
    leaves_hash: u64,
    /// The number of the leaf this worker explores below now (0: none yet).
    current: u64,
}

/// Explore every inequivalent execution; stop at the first error (or go on, with
/// `cfg.keep_going`).
pub fn explore(
    exec: &mut dyn Executor,
    model: &dyn Model,
    cfg: &Config,
    progress: Progress,
) -> Result<Outcome, ExecError> {
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

/// Run one execution along `schedule` (a counterexample's), then on as the exploration would.
/// With `hand_over`, stop before the schedule's last step and give the execution to
/// [`Executor::hand_over`] (a debugger) instead.
pub fn replay(
    exec: &mut dyn Executor,
    model: &dyn Model,
    cfg: &Config,
    schedule: &[Step],
    hand_over: bool,
) -> Result<Outcome, ExecError> {
    let mut x = Explorer::new(model, cfg);
    x.replay_until = schedule.len();
    x.hand_over = hand_over;
    for s in schedule {
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
        let (end, run) = x.run_one(exec)?;
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
                cx.heap = exec.heap_blocks();
                cx.output = exec.output();
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
        let runs = o.stats.executions + o.stats.blocked + o.stats.bounded;
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
        } = o;
        self.sync.clone_from(sync);
        self.slot_tid.clone_from(slot_tid);
        self.threads.clone_from(threads);
        self.locs.clone_from(locs);
        self.process_exit = *process_exit;
        self.buffers.clone_from(buffers);
        self.flushing.clone_from(flushing);
        self.claimed = *claimed;
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
            op if op.drains_buffer() => b.is_empty(t),
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
            (Some(p), Some((addr, _))) if p.op.is_load() => th
                .window
                .iter()
                .any(|&(pc, h, a, _)| pc == p.pc && h == p.hash && a == addr.0),
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
        let en: Threads = self
            .live()
            .into_iter()
            .filter(|&t| {
                let op = self.threads[t.index()].pending.unwrap().op;
                self.sync.enabled(t, &op, self.join_target(&op))
                    && !self.awaiting(t)
                    && self.buffer_allows(t, &op)
            })
            .collect();
        match self.sync.atomic_owner {
            // inside an atomic section only its thread runs (and its buffer drains)
            Some(owner) if en.iter().any(|&t| self.owner_of(t) == owner) => en
                .into_iter()
                .filter(|&t| self.owner_of(t) == owner)
                .collect(),
            _ => en,
        }
    }

    /// Whether `t` is in [`Run::enabled`], without building the set (a replayed step asks
    /// only this, and most steps are replayed).
    fn is_enabled(&self, t: ThreadId) -> bool {
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
            && match self.sync.atomic_owner {
                // inside an atomic section only its thread runs, if it can
                Some(owner) if self.owner_of(t) != owner => !(0..self.threads.len())
                    .map(|i| ThreadId(i as u32))
                    .any(|u| self.owner_of(u) == owner && ok(u)),
                _ => true,
            };
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
        if matches!(ev.op, Op::ProcessExit { .. }) {
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

impl<'a> Explorer<'a> {
    /// An exploration from the start, alone.
    fn new(model: &'a dyn Model, cfg: &'a Config) -> Self {
        Explorer {
            model,
            cfg,
            nodes: Vec::new(),
            replay_until: 0,
            names: ThreadNames::default(),
            hand_over: false,
            split: None,
            spare: None,
            checkpoints: Vec::new(),
            max_prefix: 0,
            retired: Vec::new(),
        }
    }

    /// Run one execution along the tree's prefix and then onwards.
    /// The state is boxed: it moves between the last execution, checkpoints and retired ones.
    fn run_one(&mut self, exec: &mut dyn Executor) -> Result<(RunEnd, Box<Run>), ExecError> {
        // the positions before replay_until repeat the last execution's decisions
        let replayed = self.replay_until.min(self.nodes.len());
        let valid = self.checkpoints.partition_point(|(p, _)| *p <= replayed);
        self.retired
            .extend(self.checkpoints.drain(valid..).map(|(_, run)| run));
        let mut spare = self.spare.take();
        let (mut run, mut snap, mut pos) = match self.fast_forward(exec, &mut spare)? {
            Some(at) => at,
            None => {
                let run = match spare {
                    Some(old) => old.recycled(self.model),
                    None => Box::new(Run::new(self.model)),
                };
                let script: Vec<ScriptStep> = self.nodes[..replayed]
                    .iter()
                    .map_while(|n| n.step.clone())
                    .collect();
                exec.script(script);
                match exec.begin() {
                    Err(ExecError::Timeout { .. }) => {
                        return Ok((self.timed_out(&run, ThreadId::MAIN), run))
                    }
                    r => (run, r?, 0),
                }
            }
        };
        let mut sleep: Vec<(ThreadId, Event)> = Vec::new();
        loop {
            self.absorb(&mut run, &snap);
            self.refresh_updaters(&mut run);
            if self.top_depth() == Some(pos) {
                // a new leaf of the split top: explore below it only if it is ours
                if self.nodes.len() <= pos && !self.leaf(pos) {
                    exec.end()?;
                    return Ok((RunEnd::Skipped, run));
                }
                run.claimed = true;
            }
            if let Some(ended) = snap.ended.take() {
                exec.recycle(std::mem::take(&mut snap));
                return Ok((self.finish(&mut run, ended), run));
            }
            if pos >= self.cfg.max_steps {
                exec.end()?;
                return Ok((RunEnd::Bounded, run));
            }
            self.take_checkpoint(&run, pos);
            let t = if pos < self.nodes.len() {
                let t = self.nodes[pos].chosen;
                let pending_op = run
                    .threads
                    .get(t.index())
                    .and_then(|th| th.pending)
                    .map(|p| p.op);
                let node = &mut self.nodes[pos];
                if node.op.is_none() {
                    if let Some(op) = pending_op {
                        node.op = Some(op);
                        node.alts = run.sync.alternatives(&op);
                    }
                }
                // Await detection is only a hint that a spin would repeat itself: its hash can
                // take in dead values the runtime's own calls leave behind, which differ between
                // runs. A replay follows the recorded choice whatever the hint says now.
                if !(run.is_enabled(t) || run.enabled_but_awaiting(t)) || node.op != pending_op {
                    exec.end()?;
                    return Err(diverged(pos, t));
                }
                t
            } else {
                let enabled = run.enabled();
                let awake: Threads = enabled
                    .iter()
                    .copied()
                    .filter(|t| !sleep.iter().any(|(s, _)| s == t))
                    .collect();
                let in_top = self.top_depth().is_some_and(|d| pos < d);
                let first = if in_top {
                    awake.iter().copied().min_by_key(|&t| self.names.path(t))
                } else {
                    awake.first().copied()
                };
                let Some(t) = first else {
                    exec.end()?;
                    if enabled.is_empty() {
                        return Ok((self.stuck(&mut run), run));
                    }
                    return Ok((RunEnd::Blocked, run)); // every enabled thread is asleep
                };
                let op = run.threads[t.index()].pending.unwrap().op;
                self.nodes.push(Node {
                    chosen: t,
                    alt: 0,
                    alts: run.sync.alternatives(&op),
                    enabled: enabled.clone(),
                    // the split top branches every way
                    backtrack: if in_top {
                        awake
                    } else {
                        smallvec::smallvec![t]
                    },
                    sleep: std::mem::take(&mut sleep),
                    explored: Vec::new(),
                    op: Some(op),
                    step: None,
                });
                t
            };
            let pending = run.threads[t.index()].pending.unwrap();
            if self.hand_over && pos + 1 == self.nodes.len() {
                let (value, _) = run.sync.apply(t, &pending.op, self.nodes[pos].alt);
                let patch = run.forwarding(t, &pending.op).map(|f| (f.mask, f.bytes));
                let slot = run.threads[t.index()].slot;
                exec.hand_over(slot, &Reply { value, patch })?;
                exec.end()?;
                return Ok((RunEnd::HandedOver, run));
            }
            if let Some((owner, key)) = run.threads[t.index()].updater {
                // a buffered store reaches memory; no thread of the program runs for it
                let entry = run
                    .buffers
                    .as_mut()
                    .and_then(|b| b.take(owner, key))
                    .expect("an updater has an entry");
                exec.commit(entry.addr, &entry.bytes)?;
                self.nodes[pos].step = Some(ScriptStep::Commit {
                    addr: entry.addr,
                    bytes: entry.bytes.clone(),
                });
                let mut ev = Event::from_pending(t, &pending);
                ev.value_written = Some(le_value(&entry.bytes));
                ev.bytes = Some(entry.bytes.clone());
                run.threads[t.index()].pending = None;
                run.flushing = Some(entry);
                self.record(&mut run, ev, pos >= self.replay_until, false);
                sleep = self.child_sleep(&run, pos, t, &run.trace[pos].ev);
                pos += 1;
                continue;
            }
            let (value, wrote) = run.sync.apply(t, &pending.op, self.nodes[pos].alt);
            let patch = run.forwarding(t, &pending.op).map(|f| (f.mask, f.bytes));
            let slot = run.threads[t.index()].slot;
            let reply = Reply { value, patch };
            exec.recycle(std::mem::take(&mut snap));
            let stepped = exec.step(slot, &reply);
            self.nodes[pos].step = Some(ScriptStep::Run {
                slot,
                reply,
                pc: pending.pc,
                addr: pending.op.location().unwrap_or(0),
            });
            let mut ev = Event::from_pending(t, &pending);
            ev.reply = value;
            ev.wrote = wrote;
            snap = match stepped {
                Err(ExecError::Timeout { .. }) => {
                    run.threads[t.index()].pending = None;
                    self.record(&mut run, ev, false, false);
                    return Ok((self.timed_out(&run, t), run));
                }
                r => r?,
            };
            if let Some(prev) = snap
                .slots
                .get_mut(slot as usize)
                .and_then(|s| s.prev.take())
            {
                if matches!(pending.op, Op::Cas { .. }) {
                    ev.wrote = prev.wrote;
                }
                ev.value_read = prev.read;
                ev.value_written = prev.written;
                ev.bytes = prev.stored;
            }
            run.threads[t.index()].pending = None;
            self.record(&mut run, ev, pos >= self.replay_until, false);
            sleep = self.child_sleep(&run, pos, t, &run.trace[pos].ev);
            pos += 1;
        }
    }

    /// Start the execution at the deepest checkpoint of the prefix it repeats, the executor
    /// carrying out the steps before it by itself: the engine's state there (the trace up to
    /// there taken from the last execution, `spare`), the live snapshot and the position.
    /// None when there is no such checkpoint or the executor cannot: the execution then
    /// starts from the start.
    fn fast_forward(
        &mut self,
        exec: &mut dyn Executor,
        spare: &mut Option<Box<Run>>,
    ) -> Result<Option<(Box<Run>, Snapshot, usize)>, ExecError> {
        let Some(&(at, _)) = self.checkpoints.last() else {
            return Ok(None);
        };
        let usable = at > 0
            && at <= self.max_prefix
            && spare.as_ref().is_some_and(|r| r.trace.len() >= at)
            && self.nodes[..at].iter().all(|n| n.step.is_some());
        if !usable {
            return Ok(None);
        }
        let mut steps = self.nodes[..at].iter().filter_map(|n| n.step.as_ref());
        let (snap, ran) = match exec.begin_after(&mut steps) {
            // a step ran out of time where it did not before: run it step by step
            Err(ExecError::Timeout { .. }) => return Ok(None),
            r => r?,
        };
        let saved = &self.checkpoints.last().expect("a checkpoint").1;
        if ran < at || !saved.waits_as(&snap) {
            exec.end()?;
            return Err(diverged(ran, self.nodes[ran].chosen));
        }
        let mut run = spare.take().expect("a last execution");
        run.copy_from(saved);
        // past the split top (which may have been set after the checkpoint was taken)
        run.claimed = self.top_depth().is_some_and(|d| d < at);
        run.trace.truncate(at);
        // the pending events as the runtime reports them now: the saved ones but for their
        // await hashes, which are this execution's (equal unless the program reads state the
        // checker does not reset)
        for (view, t) in snap.slots.iter().zip(&run.slot_tid) {
            if let SlotState::Stopped(p) = view.state {
                run.threads[t.index()].pending = Some(p);
            }
        }
        Ok(Some((run, snap, at)))
    }

    /// Keep the state at `pos` for the executions that will branch there or after it: at
    /// every position while the states are small, further apart as they grow.
    fn take_checkpoint(&mut self, run: &Run, pos: usize) {
        if pos == 0 || pos > self.max_prefix {
            return;
        }
        let last = self.checkpoints.last().map_or(0, |(p, _)| *p);
        // a word's history counts as its 8 bytes' did when the constants were tuned; a thread
        // as 2 since threads are copied field by field into kept allocations (change 17)
        let size = 8 * run.locs.len() + 2 * run.threads.len() + 8;
        let spacing = (size / CHECKPOINT_STEP).max(pos * size / CHECKPOINT_BUDGET);
        if pos > last + spacing {
            let mut saved = self
                .retired
                .pop()
                .unwrap_or_else(|| Box::new(Run::new(self.model)));
            saved.copy_from(run);
            self.checkpoints.push((pos, saved));
        }
    }

    /// The sleep set after `t` ran `ev` at node `pos`: sleeping or explored threads whose next
    /// event is independent of it.
    fn child_sleep(
        &self,
        run: &Run,
        pos: usize,
        t: ThreadId,
        ev: &Event,
    ) -> Vec<(ThreadId, Event)> {
        let node = &self.nodes[pos];
        node.sleep
            .iter()
            .chain(node.explored.iter())
            .filter(|(q, e)| *q != t && !self.model.conflicts(e, ev))
            .map(|(q, e)| {
                let mut e = e.clone();
                if matches!(ev.op, Op::Update { owner, .. } if owner == *q) && e.forwarded != 0 {
                    // its own store reached memory: the sleeping load now reads memory instead
                    // (the same value; a load is independent of its thread's updates)
                    e.forwarded = run.forwarding(*q, &e.op).map_or(0, |f| f.mask);
                }
                (*q, e)
            })
            .collect()
    }

    /// The updaters of store buffers, as threads: each entry that may reach memory next is the
    /// pending update of its updater.
    fn refresh_updaters(&mut self, run: &mut Run) {
        let Some(buffers) = &mut run.buffers else {
            return;
        };
        if !buffers.take_changed() {
            return; // the updaters' pending updates are still those of the buffers
        }
        let ready: SmallVec<[_; 4]> = buffers
            .ready()
            .into_iter()
            .map(|(owner, key, e)| {
                let pc = run.trace[e.store].ev.pc;
                (owner, key, e.addr, e.bytes.len() as u32, pc)
            })
            .collect();
        for th in run.threads.iter_mut().filter(|th| th.updater.is_some()) {
            th.pending = None;
        }
        for (owner, key, addr, size, pc) in ready {
            let id = self.names.child(owner, UPDATER | key);
            let th = run.thread(id);
            th.updater = Some((owner, key));
            th.parent = Some(owner);
            let op = Op::Update {
                addr: TargetAddr(addr),
                size,
                owner,
            };
            th.pending = Some(Pending {
                op,
                pc,
                hash: 0,
                site: 0,
            });
        }
    }

    /// Take in new threads and pending operations from a snapshot.
    fn absorb(&mut self, run: &mut Run, snap: &Snapshot) {
        for (slot, view) in snap.slots.iter().enumerate() {
            if slot >= run.slot_tid.len() {
                let tid = if slot == 0 {
                    ThreadId::MAIN
                } else {
                    let parent = run
                        .slot_tid
                        .get(view.parent as usize)
                        .copied()
                        .unwrap_or(ThreadId::MAIN);
                    let nth = run.thread(parent).children;
                    run.thread(parent).children += 1;
                    let id = self.names.child(parent, nth as u64);
                    let spawn_clock = run.threads[parent.index()].clock.clone();
                    let th = run.thread(id);
                    th.parent = Some(parent);
                    th.clock = spawn_clock;
                    id
                };
                run.slot_tid.push(tid);
                run.thread(tid).slot = slot as u32;
            }
            let tid = run.slot_tid[slot];
            let th = run.thread(tid);
            match &view.state {
                SlotState::Stopped(p) => {
                    if th.pending.is_none() && !th.exited {
                        if matches!(p.op, Op::ThreadStart) {
                            th.start = p.pc;
                        }
                        th.pending = Some(*p);
                    }
                }
                SlotState::Exited => th.pending = None,
            }
        }
    }

    /// Add an executed event: vector clock, race analysis (when `analyse`), histories.
    /// A `virtual_` event is a pending operation analysed as if it ran next; it is removed again.
    fn record(&mut self, run: &mut Run, ev: Event, analyse: bool, virtual_: bool) {
        let t = ev.thread;
        let buffered = run.buffers.is_some();
        let forwarding = run.forwarding(t, &ev.op);
        let forwarded = forwarding.as_ref().map_or(0, |f| f.mask);
        let mut ev = ev;
        ev.forwarded = forwarded;
        let fp = ev.op.footprint(ev.wrote, buffered);
        let (preds, race_preds) = run.links(&ev, &fp, forwarded);
        let th = &run.threads[t.index()];
        let seq = th.seq + 1;
        let mut clock = th.clock.clone();
        if let Op::Join { .. } = ev.op {
            if let Some(x) = run
                .join_target(&ev.op)
                .and_then(|c| run.threads[c.index()].exit_event)
            {
                clock.join(&run.trace[x].clock);
            }
        }
        if buffered && ev.op.drains_buffer() {
            // the buffer is empty: everything it held reached memory before this event
            clock.join(&run.threads[t.index()].flushed);
        }
        let flushing = if virtual_ { None } else { run.flushing.take() };
        if let (Some(e), Op::Update { owner, .. }) = (&flushing, ev.op) {
            // after its store, and (PSO) after the updates of earlier sfence epochs
            clock.join(&run.trace[e.store].clock);
            for c in run.threads[owner.index()]
                .epoch_clocks
                .iter()
                .take(e.epoch as usize)
            {
                clock.join(c);
            }
        }
        let mut races: SmallVec<[usize; 4]> = SmallVec::new();
        if analyse {
            for &c in &race_preds {
                let p = run.trace[c].ev.thread;
                let cseq = run.trace[c].seq;
                let immediate = clock.get(p) < cseq
                    && !preds
                        .iter()
                        .any(|&o| o != c && run.trace[o].clock.get(p) >= cseq);
                if !immediate {
                    continue;
                }
                match (
                    ev.op.acquired_object(),
                    run.trace[c].ev.op.released_object(),
                ) {
                    (Some(a), Some(r)) if a == r => {
                        // A blocked acquire cannot move before the release; reverse it with the
                        // acquire that release ended instead.
                        if let Some(acq) = (0..c).rev().find(|&i| {
                            run.trace[i].ev.thread == p
                                && run.trace[i].ev.op.takes_object(run.trace[i].ev.wrote) == Some(a)
                        }) {
                            races.push(acq);
                        }
                    }
                    // an event inside an atomic section moves with the whole section
                    _ => races.push(run.trace[c].section.unwrap_or(c)),
                }
            }
        }
        for &c in &preds {
            clock.join(&run.trace[c].clock);
        }
        clock.set(t, seq);
        let pos = run.trace.len();
        let section = match ev.op {
            Op::AtomicBegin => Some(pos),
            _ => run.threads[t.index()].atomic_begin,
        };
        run.trace.push(TraceEvent {
            ev,
            clock,
            seq,
            section,
        });
        for e in races {
            self.reverse(&*run, e, pos);
        }
        if virtual_ {
            run.trace.pop();
            return;
        }
        // histories (a forwarded byte joins them when the entry it read reaches memory)
        for a in fp.iter() {
            let skip = if a.write { 0 } else { forwarded };
            for (word, mask) in word_masks(a.addr, a.size, skip) {
                let h = run.locs.entry(word).or_default();
                if a.write {
                    h.write(pos, mask);
                } else {
                    h.read(pos, mask, t);
                }
            }
        }
        self.record_buffers(run, pos, flushing, forwarding.map(|f| f.sources));
        let (op, wrote, pc, hash) = {
            let ev = &run.trace[pos].ev;
            (ev.op, ev.wrote, ev.pc, ev.hash)
        };
        let clock = run.trace[pos].clock.clone();
        let th = run.thread(t);
        th.seq = seq;
        th.clock = clock;
        th.last_event = Some(pos);
        // await-loop windows
        let is_read_only = op.is_load() && !(matches!(op, Op::Cas { .. }) && wrote);
        if is_read_only {
            let (addr, size) = op.data().unwrap();
            th.window.push((pc, hash, addr.0, size));
        } else if !matches!(op, Op::Yield | Op::Fence { .. } | Op::ThreadStart) {
            run.threads[t.index()].window.clear();
        }
        if fp.writes() {
            for (i, other) in run.threads.iter_mut().enumerate() {
                if i != t.index()
                    && other.window.iter().any(|&(_, _, a, s)| {
                        fp.iter()
                            .any(|w| w.write && w.addr < a + s as u64 && a < w.addr + w.size as u64)
                    })
                {
                    other.window.clear();
                }
            }
        }
        match op {
            Op::ThreadExit => {
                let th = run.thread(t);
                th.exited = true;
                th.exit_event = Some(pos);
            }
            Op::ProcessExit { .. } => run.process_exit = Some(pos),
            Op::AtomicBegin => run.thread(t).atomic_begin = Some(pos),
            Op::AtomicEnd => run.thread(t).atomic_begin = None,
            _ => {}
        }
    }

    /// Store-buffer bookkeeping of an executed event: a store enters its buffer, a forwarded
    /// load is remembered with its entries, an update hands its forwarded load to memory.
    fn record_buffers(
        &mut self,
        run: &mut Run,
        pos: usize,
        flushing: Option<Entry>,
        sources: Option<SmallVec<[usize; 4]>>,
    ) {
        let per_location = self
            .model
            .buffers()
            .is_some_and(|(k, _)| k == BufferKind::PerLocation);
        let Some(buffers) = run.buffers.as_mut() else {
            return;
        };
        let ev = &run.trace[pos].ev;
        let t = ev.thread;
        match ev.op {
            Op::Store { addr, size } | Op::RmwStore { addr, size } => {
                let bytes = ev
                    .bytes
                    .clone()
                    .unwrap_or_else(|| smallvec::smallvec![0; size as usize]);
                buffers.push(t, addr.0, bytes, pos);
            }
            Op::Load { .. } | Op::RmwLoad { .. } => {
                if let Some(sources) = sources {
                    buffers.forwarded(&sources, pos);
                }
            }
            Op::Fence {
                kind: FenceKind::Store,
            } if per_location => buffers.store_fence(t),
            Op::Update { owner, .. } => {
                let e = flushing.expect("an update has its entry");
                if let Some(l) = e.forwarded_to {
                    let lt = run.trace[l].ev.thread;
                    for (word, mask) in word_masks(e.addr, e.bytes.len() as u32, 0) {
                        let h = run.locs.entry(word).or_default();
                        h.read(l, mask, lt);
                    }
                }
                let clock = run.trace[pos].clock.clone();
                let th = run.thread(owner);
                th.flushed.join(&clock);
                if th.epoch_clocks.len() <= e.epoch as usize {
                    th.epoch_clocks
                        .resize(e.epoch as usize + 1, Clock::default());
                }
                th.epoch_clocks[e.epoch as usize].join(&clock);
            }
            _ => {}
        }
    }

    /// Source-DPOR's backtracking for the race `e` < `e2` (trace positions): make sure some
    /// initial of notdep(e).proc(e2) is explored right before `e`.
    fn reverse(&mut self, run: &Run, e: usize, e2: usize) {
        let q = run.trace[e2].ev.thread;
        // first event of each thread in v = notdep(e) . e2
        let mut firsts: SmallVec<[(ThreadId, usize); 8]> = SmallVec::new();
        for j in (e + 1..e2).chain(std::iter::once(e2)) {
            if j < e2 && run.hb(e, j) {
                continue;
            }
            let t = run.trace[j].ev.thread;
            if !firsts.iter().any(|(u, _)| *u == t) {
                firsts.push((t, j));
            }
        }
        let initials: Threads = firsts
            .iter()
            .filter(|&&(_, fj)| !firsts.iter().any(|&(_, gj)| gj < fj && run.hb(gj, fj)))
            .map(|&(t, _)| t)
            .collect();
        let Some(node) = self.nodes.get_mut(e) else {
            return;
        };
        if initials.iter().any(|&t| node.covers(t)) {
            return;
        }
        let candidates: Threads = initials
            .iter()
            .copied()
            .filter(|t| node.enabled.contains(t))
            .collect();
        if candidates.contains(&q) {
            node.backtrack.push(q);
        } else if let Some(&c) = candidates.first() {
            node.backtrack.push(c);
        } else {
            // the initials are blocked here: fall back to every enabled thread
            for &t in &node.enabled {
                if !node.covers(t) {
                    node.backtrack.push(t);
                }
            }
        }
    }

    /// No thread can run: deadlock, livelock, or an execution blocked by an assumption.
    fn stuck(&mut self, run: &mut Run) -> RunEnd {
        self.analyse_pending(run);
        let live = run.live();
        if live.is_empty() {
            return RunEnd::Complete; // every thread left; the process exits on its own
        }
        let assumed = |t: &ThreadId| {
            matches!(
                run.threads[t.index()].pending,
                Some(Pending {
                    op: Op::Assume { cond: false },
                    ..
                })
            )
        };
        if live.iter().any(assumed) {
            return RunEnd::Blocked; // an __VERIFIER_assume failed: this execution does not count
        }
        let spinning: Vec<ThreadId> = live.iter().copied().filter(|&t| run.awaiting(t)).collect();
        let (kind, message) = if spinning.is_empty() {
            (
                ErrorKind::Deadlock,
                format!("deadlock: every live thread is blocked ({})", names(&live)),
            )
        } else {
            (
                ErrorKind::Hang,
                format!(
                    "livelock: {} spin forever re-reading memory that no other thread can change",
                    names(&spinning)
                ),
            )
        };
        RunEnd::Error(self.counterexample(run, kind, message, None, None))
    }

    fn timed_out(&self, run: &Run, t: ThreadId) -> RunEnd {
        let msg = format!(
            "{t} ran past the per-execution time limit without reaching another visible operation \
             (an endless loop on thread-local data?); see --exec-timeout"
        );
        RunEnd::Error(self.counterexample(run, ErrorKind::Hang, msg, None, None))
    }

    fn finish(&mut self, run: &mut Run, ended: Ended) -> RunEnd {
        self.analyse_pending(run);
        let Some(err) = ended.error else {
            return match ended.how {
                ProcessEnd::Signaled(sig) => {
                    let msg = format!(
                        "the program was killed by signal {} ({})",
                        sig,
                        signal_name(sig)
                    );
                    RunEnd::Error(self.counterexample(run, ErrorKind::Crash, msg, None, Some(sig)))
                }
                ProcessEnd::Exited(status) if status != 0 && !self.cfg.allow_exit_status => {
                    let msg = format!("the program exited with status {status}");
                    RunEnd::Error(self.counterexample(run, ErrorKind::Exit, msg, None, None))
                }
                ProcessEnd::Exited(_) => RunEnd::Complete,
            };
        };
        let thread = err.slot.and_then(|s| run.slot_tid.get(s as usize).copied());
        let fault = thread.map(|t| (t, err.pc, err.addr));
        match err.kind {
            RuntimeErrorKind::Assertion => RunEnd::Error(self.counterexample(
                run,
                ErrorKind::Assertion,
                err.message,
                fault,
                None,
            )),
            RuntimeErrorKind::Verifier => RunEnd::Error(self.counterexample(
                run,
                ErrorKind::Assertion,
                err.message,
                fault,
                None,
            )),
            RuntimeErrorKind::Signal(sig) => {
                let msg = match sig {
                    libc::SIGABRT => "abort() called".to_string(),
                    libc::SIGFPE | libc::SIGILL | libc::SIGTRAP => signal_name(sig).to_string(),
                    _ => format!("{} at address {:#x}", signal_name(sig), err.addr),
                };
                RunEnd::Error(self.counterexample(run, ErrorKind::Crash, msg, fault, Some(sig)))
            }
        }
    }

    /// Races of the operations threads were still waiting to run when the execution ended:
    /// a blocked lock, or a thread cut off by the process exit, may have run earlier.
    fn analyse_pending(&mut self, run: &mut Run) {
        for t in run.live() {
            let p = run.threads[t.index()].pending.unwrap();
            self.record(run, Event::from_pending(t, &p), true, true);
        }
    }

    fn counterexample(
        &self,
        run: &Run,
        kind: ErrorKind,
        message: String,
        fault: Option<(ThreadId, u64, u64)>,
        signal: Option<i32>,
    ) -> Box<Counterexample> {
        let updaters = (0..run.threads.len() as u32)
            .map(ThreadId)
            .filter(|t| run.threads[t.index()].updater.is_some());
        let threads = run
            .slot_tid
            .iter()
            .copied()
            .chain(updaters)
            .map(|t| {
                let th = &run.threads[t.index()];
                ThreadInfo {
                    id: t,
                    parent: th.parent,
                    start: th.start,
                    pending: th.pending.filter(|_| th.updater.is_none()),
                    buffer_of: th.updater.map(|(o, _)| o),
                }
            })
            .collect();
        let schedule = self.nodes[..run.trace.len().min(self.nodes.len())]
            .iter()
            .map(|n| Step {
                thread: self.names.path(n.chosen),
                alt: n.alt,
            })
            .collect();
        let mut cx = Counterexample {
            kind,
            message,
            trace: run.trace.iter().map(|t| t.ev.clone()).collect(),
            threads,
            fault,
            signal,
            schedule,
            buffered: run.buffers.is_some(),
            heap: Vec::new(),
            output: None,
            found: (0, 0),
        };
        renumber(&mut cx);
        Box::new(cx)
    }

    fn top_depth(&self) -> Option<usize> {
        self.split.as_ref().and_then(|s| s.depth)
    }

    /// The decisions of the first `k` nodes, as a schedule names them.
    fn prefix(&self, k: usize) -> Vec<Step> {
        self.nodes[..k]
            .iter()
            .map(|n| Step {
                thread: self.names.path(n.chosen),
                alt: n.alt,
            })
            .collect()
    }

    /// A leaf of the split top, reached by the first `k` decisions: count it into the top's
    /// fingerprint; does this worker explore it?
    fn leaf(&mut self, k: usize) -> bool {
        let prefix = self.prefix(k);
        let Some(s) = self.split.as_mut() else {
            return true;
        };
        s.leaves += 1;
        s.leaves_hash =
            (s.leaves_hash ^ super::prefix_hash(&prefix)).wrapping_mul(0x0100_0000_01b3);
        let ours = (s.split.claim)(&prefix);
        if ours {
            s.current = s.leaves;
        }
        ours
    }

    /// Does this worker count the executions explored before the split (the empty prefix)?
    fn claims_the_start(&self) -> bool {
        self.split.as_ref().is_none_or(|s| (s.split.claim)(&[]))
    }

    /// Split exploration, once the top is set: an execution that ended inside the top (before
    /// reaching a leaf) is a leaf of its own, counted by the worker that claims it only.
    fn settle_leaf(&mut self, run: &Run, end: RunEnd) -> RunEnd {
        match self.top_depth() {
            Some(depth) if !run.claimed && !matches!(end, RunEnd::Skipped) => {
                let k = depth.min(run.trace.len()).min(self.nodes.len());
                if self.leaf(k) {
                    end
                } else {
                    RunEnd::Skipped
                }
            }
            _ => end,
        }
    }

    /// Split the exploration after its first executions (those of `run` the last): the top
    /// ends where the branching along `run` reaches the aim, its nodes branch every way, and
    /// what is left of the current leaf goes to the worker that claims it. False when this
    /// worker does not count the executions so far (another one claims them).
    fn begin_split(&mut self, run: &Run) -> bool {
        let split = self.split.as_ref().expect("splitting");
        let mut product = 1u64;
        let depth = self
            .nodes
            .iter()
            .position(|n| {
                product = product.saturating_mul((n.awake().count() as u64 * n.alts as u64).max(1));
                product >= split.split.leaves
            })
            .map_or(self.nodes.len(), |p| p + 1);
        (split.split.on_split)();
        self.split.as_mut().unwrap().depth = Some(depth);
        for n in &mut self.nodes[..depth] {
            let missing: Vec<ThreadId> = n.awake().filter(|t| !n.backtrack.contains(t)).collect();
            n.backtrack.extend(missing);
        }
        let k = depth.min(run.trace.len()).min(self.nodes.len());
        if !self.leaf(k) {
            self.nodes.truncate(depth);
        }
        self.claims_the_start()
    }

    /// Move to the deepest node with something left to explore. False when done.
    fn next_branch(&mut self, run: &Run) -> bool {
        while let Some(i) = self.nodes.len().checked_sub(1) {
            let in_top = self.top_depth().is_some_and(|d| i < d);
            let names = &self.names;
            let node = &mut self.nodes[i];
            if node.alt + 1 < node.alts {
                node.alt += 1;
                self.replay_until = i;
                return true;
            }
            if let Some(te) = run.trace.get(i) {
                if !node.explored.iter().any(|(t, _)| *t == node.chosen) {
                    node.explored.push((node.chosen, te.ev.clone()));
                }
            }
            let candidates = node.backtrack.iter().copied().filter(|&t| {
                node.enabled.contains(&t)
                    && !node.explored.iter().any(|(s, _)| *s == t)
                    && !node.asleep(t)
            });
            // In the split top every worker must take the same order: ids depend on which
            // subtrees a worker explored, spawn-tree paths do not.
            let next = if in_top {
                candidates.min_by_key(|&t| names.path(t))
            } else {
                candidates.min()
            };
            if let Some(p) = next {
                node.chosen = p;
                node.alt = 0;
                node.alts = 1;
                node.op = None; // its operation and outcomes are learnt when it runs
                node.step = None;
                self.nodes.truncate(i + 1);
                self.replay_until = i;
                return true;
            }
            self.nodes.pop();
        }
        false
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

/// The first (up to) 8 bytes as a little-endian number, for reports.
/// Name the threads of a counterexample in the order they appear in it (main first), so that
/// the report does not depend on the order the exploration met them (replays show the same).
fn renumber(cx: &mut Counterexample) {
    let mut order: Vec<ThreadId> = vec![ThreadId::MAIN];
    let seen = cx
        .trace
        .iter()
        .map(|e| e.thread)
        .chain(cx.threads.iter().map(|t| t.id));
    for t in seen {
        if !order.contains(&t) {
            order.push(t);
        }
    }
    let new = |t: ThreadId| ThreadId(order.iter().position(|&o| o == t).unwrap() as u32);
    for e in &mut cx.trace {
        e.thread = new(e.thread);
        if let Op::Update { owner, .. } = &mut e.op {
            *owner = new(*owner);
        }
    }
    for th in &mut cx.threads {
        th.id = new(th.id);
        th.parent = th.parent.map(new);
        th.buffer_of = th.buffer_of.map(new);
    }
    if let Some((t, _, _)) = &mut cx.fault {
        *t = new(*t);
    }
}

fn le_value(bytes: &[u8]) -> u64 {
    let mut v = [0u8; 8];
    let n = bytes.len().min(8);
    v[..n].copy_from_slice(&bytes[..n]);
    u64::from_le_bytes(v)
}

fn names(ts: &[ThreadId]) -> String {
    ts.iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGSEGV => "SIGSEGV (segmentation fault)",
        libc::SIGBUS => "SIGBUS (bus error)",
        libc::SIGFPE => "SIGFPE (arithmetic error)",
        libc::SIGILL => "SIGILL (illegal instruction)",
        libc::SIGABRT => "SIGABRT (abort)",
        libc::SIGTRAP => "SIGTRAP (trap)",
        libc::SIGKILL => "SIGKILL",
        _ => "signal",
    }
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

#[cfg(test)]
mod tests {
    use super::super::mock::{load, lock, store, unlock, Check, Mock};
    use super::super::{Config, ErrorKind, Outcome};
    use super::word_masks;
    use crate::event::Op;
    use crate::model::Sc;

    const X: u64 = 0x100;
    const Y: u64 = 0x104;
    const M: u64 = 0x200;

    /// Explore `threads` (spawned and joined by main) under SC.
    fn check(threads: Vec<Vec<(Op, u64)>>, assertion: Option<Check>) -> (Outcome, u32) {
        let mut mock = Mock::new(threads, assertion);
        let outcome = super::explore(&mut mock, &Sc, &Config::default(), &mut |_| true).unwrap();
        (outcome, mock.executions)
    }

    fn count(threads: Vec<Vec<(Op, u64)>>) -> (u64, u64) {
        let (o, _) = check(threads, None);
        assert!(o.error.is_none());
        (o.stats.executions, o.stats.blocked)
    }

    #[test]
    fn accesses_are_split_into_words() {
        let masks = |addr, size, skip| word_masks(addr, size, skip).collect::<Vec<_>>();
        assert_eq!(masks(8, 4, 0), [(1, 0x0f)]);
        assert_eq!(masks(6, 4, 0), [(0, 0xc0), (1, 0x03)]);
        // byte 1 of the access (address 7) forwarded
        assert_eq!(masks(6, 4, 0b10), [(0, 0x40), (1, 0x03)]);
        assert_eq!(masks(0, 16, 0xff), [(1, 0xff)]);
        assert_eq!(masks(5, 0, 0), []);
    }

    #[test]
    fn store_buffering_has_three_traces() {
        assert_eq!(
            count(vec![vec![store(X, 1), load(Y)], vec![store(Y, 1), load(X)]]).0,
            3
        );
    }

    #[test]
    fn independent_threads_have_one_trace() {
        assert_eq!(
            count(vec![vec![store(X, 1), load(X)], vec![store(Y, 1), load(Y)]]),
            (1, 0)
        );
    }

    #[test]
    fn readers_commute() {
        // two readers and a writer: each reader before or after the write
        assert_eq!(
            count(vec![vec![load(X)], vec![load(X)], vec![store(X, 1)]]).0,
            4
        );
    }

    #[test]
    fn writers_are_ordered_every_way() {
        assert_eq!(count(vec![vec![store(X, 1)], vec![store(X, 2)]]).0, 2);
        assert_eq!(
            count(vec![
                vec![store(X, 1)],
                vec![store(X, 2)],
                vec![store(X, 3)]
            ])
            .0,
            6
        );
    }

    #[test]
    fn lost_update_has_four_traces() {
        let inc = || vec![load(X), store(X, 1)];
        assert_eq!(count(vec![inc(), inc()]).0, 4);
    }

    #[test]
    fn critical_sections_are_ordered_both_ways() {
        let cs = |v| vec![lock(M), load(X), store(X, v), unlock(M)];
        assert_eq!(count(vec![cs(1), cs(2)]).0, 2);
        assert_eq!(count(vec![cs(1), cs(2), cs(3)]).0, 6);
    }

    #[test]
    fn finds_the_store_buffering_outcome_that_sc_allows() {
        // r1 = y and r2 = x both 1 is reachable; assert it is not, to see it found
        let (o, _) = check(
            vec![vec![store(X, 1), store(Y, 1)], vec![load(Y), load(X)]],
            Some(|m| m.get(&0x100) != Some(&1) || m.get(&0x104) != Some(&1)),
        );
        assert_eq!(o.error.map(|e| e.kind), Some(ErrorKind::Assertion));
    }

    #[test]
    fn lock_order_inversion_deadlocks() {
        const N: u64 = 0x300;
        let (o, _) = check(
            vec![
                vec![lock(M), lock(N), unlock(N), unlock(M)],
                vec![lock(N), lock(M), unlock(M), unlock(N)],
            ],
            None,
        );
        let e = o.error.expect("deadlock expected");
        assert_eq!(e.kind, ErrorKind::Deadlock);
        assert_eq!(
            e.threads.iter().filter(|t| t.pending.is_some()).count(),
            3,
            "main and both workers wait"
        );
    }
}

/// The engine against brute force: on random small programs of loads and stores, the number of
/// complete executions must equal the number of Mazurkiewicz traces, counted by enumerating
/// every interleaving and keeping the order of each conflicting pair.
#[cfg(test)]
mod brute_force {
    use std::collections::BTreeSet;

    use super::super::mock::{load, lock, store, unlock, Mock};
    use super::super::{Config, Outcome};
    use crate::event::{Op, TargetAddr};
    use crate::model::Sc;

    fn interleavings(
        threads: &[Vec<(Op, u64)>],
        pos: &mut Vec<usize>,
        seq: &mut Vec<(usize, usize)>,
        out: &mut BTreeSet<Vec<bool>>,
    ) {
        if threads.iter().zip(pos.iter()).all(|(t, &p)| p == t.len()) {
            // the trace: for every conflicting pair of events of different threads, which came first
            let at = |e: (usize, usize)| seq.iter().position(|&x| x == e).unwrap();
            let mut events = seq.clone();
            events.sort();
            let mut key = Vec::new();
            for (i, &a) in events.iter().enumerate() {
                for &b in &events[i + 1..] {
                    let (oa, ob) = (threads[a.0][a.1].0, threads[b.0][b.1].0);
                    if a.0 != b.0
                        && oa
                            .footprint(true, false)
                            .conflicts(&ob.footprint(true, false))
                    {
                        key.push(at(a) < at(b));
                    }
                }
            }
            out.insert(key);
            return;
        }
        // the one mutex of these programs: held by whoever locked it last and has not unlocked
        let held = seq.iter().rev().find_map(|&(t, i)| match threads[t][i].0 {
            Op::MutexLock { .. } => Some(true),
            Op::MutexUnlock { .. } => Some(false),
            _ => None,
        });
        for t in 0..threads.len() {
            if pos[t] < threads[t].len() {
                if matches!(threads[t][pos[t]].0, Op::MutexLock { .. }) && held == Some(true) {
                    continue;
                }
                seq.push((t, pos[t]));
                pos[t] += 1;
                interleavings(threads, pos, seq, out);
                pos[t] -= 1;
                seq.pop();
            }
        }
    }

    /// Exploring with every step through the engine (no checkpoints restored) must give the
    /// same as `mock` gave with its prefixes carried out alone, which it must have used.
    pub(super) fn same_without_prefixes(
        mock: &Mock,
        o: &Outcome,
        explore: impl Fn(&mut Mock) -> Outcome,
    ) {
        let mut stepwise = Mock::new(mock.scripts.clone(), None);
        stepwise.buffered = mock.buffered;
        stepwise.prefixes = false;
        let s = explore(&mut stepwise);
        assert_eq!(
            (s.stats.executions, s.stats.blocked, s.stats.events),
            (o.stats.executions, o.stats.blocked, o.stats.events),
            "program {:?}",
            mock.scripts
        );
        assert_eq!(stepwise.skipped, 0);
        if o.stats.executions > 1 {
            assert!(
                mock.skipped > 0,
                "no prefix carried out: {:?}",
                mock.scripts
            );
            assert!(mock.steps < stepwise.steps);
        }
    }

    #[test]
    fn executions_equal_mazurkiewicz_traces_on_random_programs() {
        let mut seed: u64 = 0x9e3779b97f4a7c15;
        let mut next = move |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for _ in 0..400 {
            let nthreads = 2 + next(2) as usize;
            let threads: Vec<Vec<(Op, u64)>> = (0..nthreads)
                .map(|t| {
                    (0..1 + next(3))
                        .map(|i| {
                            let addr = 0x100 + 4 * next(3);
                            match next(5) {
                                0 | 1 => load(addr),
                                2 => (
                                    Op::Rmw {
                                        addr: TargetAddr(addr),
                                        size: 4,
                                    },
                                    0,
                                ),
                                _ => store(addr, (t * 10 + i as usize) as u64),
                            }
                        })
                        .collect()
                })
                .collect();
            let mut threads = threads;
            for ops in threads.iter_mut() {
                // sometimes wrap a stretch of the thread in the mutex
                if next(3) == 0 {
                    let from = next(ops.len() as u64) as usize;
                    let to = from + 1 + next((ops.len() - from) as u64) as usize;
                    ops.insert(to, unlock(0x200));
                    ops.insert(from, lock(0x200));
                }
            }
            let mut traces = BTreeSet::new();
            interleavings(
                &threads,
                &mut vec![0; nthreads],
                &mut Vec::new(),
                &mut traces,
            );
            let mut mock = Mock::new(threads.clone(), None);
            let o = super::explore(&mut mock, &Sc, &Config::default(), &mut |_| true).unwrap();
            assert_eq!(
                o.stats.executions,
                traces.len() as u64,
                "program {threads:?}"
            );
            same_without_prefixes(&mock, &o, |m| {
                super::explore(m, &Sc, &Config::default(), &mut |_| true).unwrap()
            });
            // shared by workers (-j) and split into shards (--shard): the same executions
            let make = || Mock::new(threads.clone(), None);
            for (workers, split, by_hash) in
                [(2, (1, 4), false), (3, (2, 6), true), (2, (1000, 4), false)]
            {
                assert_eq!(
                    super::split_executions(&make, &Sc, workers, split, by_hash),
                    traces.len() as u64,
                    "{workers} workers, split {split:?}, by hash {by_hash}: program {threads:?}"
                );
            }
        }
    }
}

/// The engine against brute force under TSO and PSO: on random small programs, the number of
/// complete executions must equal the number of Shasha-Snir traces (reads-from and coherence
/// order), counted by enumerating every run of the operational store-buffer semantics.
#[cfg(test)]
mod brute_force_buffered {
    use std::collections::BTreeSet;

    use super::super::mock::{load, store, Mock};
    use super::super::Config;
    use crate::event::Op;
    use crate::model::{Model, Pso, Tso};

    type Event = (usize, usize); // (thread, index in its script)

    #[derive(Clone)]
    struct State {
        pc: Vec<usize>,
        /// Per thread: buffered stores (addr, store) in program order.
        buffers: Vec<Vec<(u64, Event)>>,
        memory: Vec<(u64, Event)>,
        rf: Vec<(Event, Option<Event>)>,
        co: Vec<(u64, Event)>,
    }

    type ReadsFrom = Vec<(Event, Option<Event>)>;
    type Coherence = Vec<(u64, Event)>;
    type Key = (Vec<usize>, Vec<Vec<(u64, Event)>>, ReadsFrom, Coherence);

    fn explore(
        threads: &[Vec<(Op, u64)>],
        pso: bool,
        s: State,
        seen: &mut BTreeSet<Key>,
        out: &mut BTreeSet<(ReadsFrom, Coherence)>,
    ) {
        // runs that reach the same state have the same futures
        let mut rf = s.rf.clone();
        rf.sort();
        if !seen.insert((s.pc.clone(), s.buffers.clone(), rf, s.co.clone())) {
            return;
        }
        let done = threads.iter().zip(&s.pc).all(|(t, &p)| p == t.len())
            && s.buffers.iter().all(|b| b.is_empty());
        if done {
            let mut rf = s.rf.clone();
            rf.sort();
            let mut co = s.co.clone();
            co.sort_by_key(|&(a, _)| a); // stable: keeps the order of updates per location
            out.insert((rf, co));
            return;
        }
        for t in 0..threads.len() {
            // the thread's next instruction
            if s.pc[t] < threads[t].len() {
                let mut n = s.clone();
                let e = (t, s.pc[t]);
                match threads[t][s.pc[t]].0 {
                    Op::Load { addr, .. } => {
                        let from_buffer = s.buffers[t]
                            .iter()
                            .rev()
                            .find(|(a, _)| *a == addr.0)
                            .map(|&(_, st)| st);
                        let from_memory = s
                            .memory
                            .iter()
                            .rev()
                            .find(|(a, _)| *a == addr.0)
                            .map(|&(_, st)| st);
                        n.rf.push((e, from_buffer.or(from_memory)));
                    }
                    Op::Store { addr, .. } => n.buffers[t].push((addr.0, e)),
                    _ => unreachable!(),
                }
                n.pc[t] += 1;
                explore(threads, pso, n, seen, out);
            }
            // one of its buffered stores reaches memory
            for i in 0..s.buffers[t].len() {
                let (addr, st) = s.buffers[t][i];
                let oldest_for_addr = !s.buffers[t][..i].iter().any(|(a, _)| *a == addr);
                if (i == 0 || pso) && oldest_for_addr {
                    let mut n = s.clone();
                    n.buffers[t].remove(i);
                    n.memory.push((addr, st));
                    n.co.push((addr, st));
                    explore(threads, pso, n, seen, out);
                }
            }
        }
    }

    fn check(model: &dyn Model, pso: bool, programs: usize, seed: u64) {
        let mut seed = seed;
        let mut next = move |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for _ in 0..programs {
            let nthreads = 2 + next(2) as usize;
            let threads: Vec<Vec<(Op, u64)>> = (0..nthreads)
                .map(|t| {
                    (0..1 + next(3))
                        .map(|i| {
                            let addr = 0x100 + 4 * next(2);
                            if next(2) == 0 {
                                load(addr)
                            } else {
                                store(addr, (t * 10 + i as usize + 1) as u64)
                            }
                        })
                        .collect()
                })
                .collect();
            let mut traces = BTreeSet::new();
            let init = State {
                pc: vec![0; nthreads],
                buffers: vec![Vec::new(); nthreads],
                memory: Vec::new(),
                rf: Vec::new(),
                co: Vec::new(),
            };
            explore(&threads, pso, init, &mut BTreeSet::new(), &mut traces);
            let mut mock = Mock::new(threads.clone(), None);
            mock.buffered = true;
            let o = super::explore(&mut mock, model, &Config::default(), &mut |_| true).unwrap();
            assert_eq!(
                o.stats.executions,
                traces.len() as u64,
                "{} program {threads:?}",
                model.name()
            );
            super::brute_force::same_without_prefixes(&mock, &o, |m| {
                super::explore(m, model, &Config::default(), &mut |_| true).unwrap()
            });
            let make = || {
                let mut mock = Mock::new(threads.clone(), None);
                mock.buffered = true;
                mock
            };
            for (workers, split, by_hash) in [(2, (1, 4), false), (3, (3, 8), true)] {
                assert_eq!(
                    super::split_executions(&make, model, workers, split, by_hash),
                    traces.len() as u64,
                    "{} split {workers}/{split:?}/{by_hash}: program {threads:?}",
                    model.name()
                );
            }
        }
    }

    #[test]
    fn tso_executions_equal_shasha_snir_traces() {
        check(&Tso { bound: None }, false, 300, 7);
    }

    #[test]
    fn pso_executions_equal_shasha_snir_traces() {
        check(&Pso { bound: None }, true, 300, 11);
    }
}
