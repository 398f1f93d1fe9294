//! Source-DPOR with sleep sets over Mazurkiewicz traces.
//!
//! The exploration tree is a stack of nodes, one per position of the current execution. Each
//! node remembers which thread ran there, the backtrack set that race analysis added to, and
//! the sleep set. An execution replays the tree's prefix and extends it; afterwards the deepest
//! node with an unexplored backtrack thread (or an unexplored outcome of a choice) is taken.

use std::collections::{BTreeMap, HashMap};

use super::sync::SyncState;
use super::{
    Config, Counterexample, Ended, ErrorKind, ExecError, Executor, Outcome, ProcessEnd, Progress,
    RuntimeErrorKind, SlotState, Snapshot, Stats, ThreadInfo,
};
use crate::event::{Event, Footprint, Op, Pending, ThreadId};
use crate::model::Model;

/// Vector clock indexed by thread id; entry t = number of t's events known.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Clock(Vec<u32>);

impl Clock {
    fn get(&self, t: ThreadId) -> u32 {
        self.0.get(t.index()).copied().unwrap_or(0)
    }
    fn set(&mut self, t: ThreadId, v: u32) {
        if self.0.len() <= t.index() {
            self.0.resize(t.index() + 1, 0);
        }
        self.0[t.index()] = v;
    }
    fn join(&mut self, o: &Clock) {
        if self.0.len() < o.0.len() {
            self.0.resize(o.0.len(), 0);
        }
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a = (*a).max(*b);
        }
    }
}

struct Node {
    chosen: ThreadId,
    alt: u32,
    alts: u32,
    enabled: Vec<ThreadId>,
    backtrack: Vec<ThreadId>,
    /// Inherited sleep set, with each sleeping thread's next event.
    sleep: Vec<(ThreadId, Event)>,
    /// Threads already explored from this node, with the event they ran.
    explored: Vec<(ThreadId, Event)>,
    /// The operation `chosen` ran here, to check that replays run the same.
    op: Option<Op>,
}

impl Node {
    fn covers(&self, t: ThreadId) -> bool {
        self.chosen == t
            || self.backtrack.contains(&t)
            || self.sleep.iter().any(|(s, _)| *s == t)
            || self.explored.iter().any(|(s, _)| *s == t)
    }
}

/// Spawn-tree interning: (parent, n-th child) -> dense id, stable across executions.
#[derive(Default)]
struct ThreadNames {
    ids: BTreeMap<(u32, u32), ThreadId>,
    count: u32,
}

impl ThreadNames {
    fn child(&mut self, parent: ThreadId, nth: u32) -> ThreadId {
        let next = ThreadId(self.count + 1);
        let id = *self.ids.entry((parent.0, nth)).or_insert(next);
        if id == next {
            self.count += 1;
        }
        id
    }
}

struct TraceEvent {
    ev: Event,
    clock: Clock,
    /// 1-based index among its thread's events.
    seq: u32,
    /// Position of the `__VERIFIER_atomic_begin` whose section holds this event.
    section: Option<usize>,
}

#[derive(Default, Clone)]
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
}

#[derive(Default)]
struct LocHistory {
    last_write: Option<usize>,
    /// Latest read of each thread since the last write.
    reads: Vec<usize>,
}

/// State of one execution.
struct Run {
    sync: SyncState,
    slot_tid: Vec<ThreadId>,
    threads: Vec<ThreadRun>,
    trace: Vec<TraceEvent>,
    locs: HashMap<u64, LocHistory>,
    process_exit: Option<usize>,
}

enum RunEnd {
    Complete,
    Blocked,
    Bounded,
    Error(Counterexample),
}

struct Explorer<'a> {
    model: &'a dyn Model,
    cfg: &'a Config,
    nodes: Vec<Node>,
    /// Positions before this one replay events already analysed.
    replay_until: usize,
    names: ThreadNames,
}

/// Explore every inequivalent execution; stop at the first error.
pub fn explore(
    exec: &mut dyn Executor,
    model: &dyn Model,
    cfg: &Config,
    progress: Progress,
) -> Result<Outcome, ExecError> {
    let mut x = Explorer {
        model,
        cfg,
        nodes: Vec::new(),
        replay_until: 0,
        names: ThreadNames::default(),
    };
    let mut stats = Stats::default();
    loop {
        let (end, run) = x.run_one(exec)?;
        stats.events += run.trace.len() as u64;
        match end {
            RunEnd::Complete => stats.executions += 1,
            RunEnd::Blocked => stats.blocked += 1,
            RunEnd::Bounded => stats.bounded += 1,
            RunEnd::Error(cx) => {
                stats.executions += 1;
                progress(&stats);
                return Ok(Outcome {
                    stats,
                    error: Some(cx),
                });
            }
        }
        if !progress(&stats) || !x.next_branch(&run) {
            return Ok(Outcome { stats, error: None });
        }
    }
}

impl Run {
    fn new() -> Run {
        Run {
            sync: SyncState::default(),
            slot_tid: Vec::new(),
            threads: Vec::new(),
            trace: Vec::new(),
            locs: HashMap::new(),
            process_exit: None,
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

    fn live(&self) -> Vec<ThreadId> {
        (0..self.threads.len())
            .map(|i| ThreadId(i as u32))
            .filter(|&t| self.threads[t.index()].pending.is_some())
            .collect()
    }

    fn enabled(&self) -> Vec<ThreadId> {
        let en: Vec<ThreadId> = self
            .live()
            .into_iter()
            .filter(|&t| {
                let op = self.threads[t.index()].pending.unwrap().op;
                self.sync.enabled(t, &op, self.join_target(&op)) && !self.awaiting(t)
            })
            .collect();
        match self.sync.atomic_owner {
            Some(owner) if en.contains(&owner) => vec![owner],
            _ => en,
        }
    }

    /// Candidates for immediate predecessors of `ev` among other events: the last write to
    /// each byte it touches, and for a write also the reads since.
    fn predecessors(&self, ev: &Event, fp: &Footprint) -> Vec<usize> {
        let mut out = Vec::new();
        if matches!(ev.op, Op::ProcessExit { .. }) {
            out.extend(self.threads.iter().filter_map(|t| t.last_event));
        }
        if let Some(x) = self.process_exit {
            out.push(x);
        }
        for a in fp.iter() {
            for b in a.addr..a.addr + a.size as u64 {
                if let Some(h) = self.locs.get(&b) {
                    out.extend(h.last_write);
                    if a.write {
                        out.extend(h.reads.iter().copied());
                    }
                }
            }
        }
        out.sort_unstable();
        out.dedup();
        out.retain(|&i| self.trace[i].ev.thread != ev.thread);
        out
    }

    fn hb(&self, a: usize, b: usize) -> bool {
        let ea = &self.trace[a];
        self.trace[b].clock.get(ea.ev.thread) >= ea.seq
    }
}

impl Explorer<'_> {
    /// Run one execution along the tree's prefix and then onwards.
    fn run_one(&mut self, exec: &mut dyn Executor) -> Result<(RunEnd, Run), ExecError> {
        let mut run = Run::new();
        let mut snap = match exec.begin() {
            Err(ExecError::Timeout { .. }) => {
                return Ok((self.timed_out(&run, ThreadId::MAIN), run))
            }
            r => r?,
        };
        let mut pos = 0usize;
        let mut sleep: Vec<(ThreadId, Event)> = Vec::new();
        loop {
            self.absorb(&mut run, &snap);
            if let Some(ended) = snap.ended.take() {
                return Ok((self.finish(&mut run, ended), run));
            }
            if pos >= self.cfg.max_steps {
                exec.end()?;
                return Ok((RunEnd::Bounded, run));
            }
            let enabled = run.enabled();
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
                if !enabled.contains(&t) || node.op != pending_op {
                    exec.end()?;
                    return Err(ExecError::Fatal(format!(
                        "the program behaved differently when replayed at event {} (thread {t}); \
                         it depends on something the checker does not control (time, randomness, input)",
                        pos + 1
                    )));
                }
                t
            } else {
                let awake: Vec<ThreadId> = enabled
                    .iter()
                    .copied()
                    .filter(|t| !sleep.iter().any(|(s, _)| s == t))
                    .collect();
                let Some(&t) = awake.first() else {
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
                    backtrack: vec![t],
                    sleep: std::mem::take(&mut sleep),
                    explored: Vec::new(),
                    op: Some(op),
                });
                t
            };
            let pending = run.threads[t.index()].pending.unwrap();
            let (reply, wrote) = run.sync.apply(t, &pending.op, self.nodes[pos].alt);
            let slot = run.threads[t.index()].slot;
            let stepped = exec.step(slot, reply);
            let mut ev = Event::from_pending(t, &pending);
            ev.reply = reply;
            ev.wrote = wrote;
            snap = match stepped {
                Err(ExecError::Timeout { .. }) => {
                    run.threads[t.index()].pending = None;
                    self.record(&mut run, ev, false, false);
                    return Ok((self.timed_out(&run, t), run));
                }
                r => r?,
            };
            if let Some(Some(prev)) = snap.slots.get(slot as usize).map(|s| s.prev) {
                if matches!(pending.op, Op::Cas { .. }) {
                    ev.wrote = prev.wrote;
                }
                ev.value_read = prev.read;
                ev.value_written = prev.written;
            }
            run.threads[t.index()].pending = None;
            self.record(&mut run, ev.clone(), pos >= self.replay_until, false);
            let node = &self.nodes[pos];
            sleep = node
                .sleep
                .iter()
                .chain(node.explored.iter())
                .filter(|(q, e)| *q != t && !self.model.conflicts(e, &ev))
                .cloned()
                .collect();
            pos += 1;
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
                    let id = self.names.child(parent, nth);
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
        let fp = ev.footprint();
        let preds = run.predecessors(&ev, &fp);
        let th = &run.threads[t.index()];
        let seq = th.seq + 1;
        let mut clock = th.clock.clone();
        if let Op::Join { .. } = ev.op {
            if let Some(x) = run
                .join_target(&ev.op)
                .and_then(|c| run.threads[c.index()].exit_event)
            {
                clock.join(&run.trace[x].clock.clone());
            }
        }
        let mut races = Vec::new();
        if analyse {
            for &c in &preds {
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
            clock.join(&run.trace[c].clock.clone());
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
        // histories
        for a in fp.iter() {
            for b in a.addr..a.addr + a.size as u64 {
                let h = run.locs.entry(b).or_default();
                if a.write {
                    h.last_write = Some(pos);
                    h.reads.clear();
                } else {
                    h.reads.retain(|&r| run.trace[r].ev.thread != t);
                    h.reads.push(pos);
                }
            }
        }
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
        } else if !matches!(op, Op::Yield | Op::Fence | Op::ThreadStart) {
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

    /// Source-DPOR's backtracking for the race `e` < `e2` (trace positions): make sure some
    /// initial of notdep(e).proc(e2) is explored right before `e`.
    fn reverse(&mut self, run: &Run, e: usize, e2: usize) {
        let q = run.trace[e2].ev.thread;
        // first event of each thread in v = notdep(e) . e2
        let mut firsts: Vec<(ThreadId, usize)> = Vec::new();
        for j in (e + 1..e2).chain(std::iter::once(e2)) {
            if j < e2 && run.hb(e, j) {
                continue;
            }
            let t = run.trace[j].ev.thread;
            if !firsts.iter().any(|(u, _)| *u == t) {
                firsts.push((t, j));
            }
        }
        let initials: Vec<ThreadId> = firsts
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
        let candidates: Vec<ThreadId> = initials
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
    ) -> Counterexample {
        let threads = run
            .slot_tid
            .iter()
            .map(|&t| {
                let th = &run.threads[t.index()];
                ThreadInfo {
                    id: t,
                    parent: th.parent,
                    start: th.start,
                    pending: th.pending,
                }
            })
            .collect();
        Counterexample {
            kind,
            message,
            trace: run.trace.iter().map(|t| t.ev.clone()).collect(),
            threads,
            fault,
            signal,
        }
    }

    /// Move to the deepest node with something left to explore. False when done.
    fn next_branch(&mut self, run: &Run) -> bool {
        while let Some(i) = self.nodes.len().checked_sub(1) {
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
            let next = node
                .backtrack
                .iter()
                .copied()
                .filter(|t| {
                    node.enabled.contains(t)
                        && !node.explored.iter().any(|(s, _)| s == t)
                        && !node.sleep.iter().any(|(s, _)| s == t)
                })
                .min();
            if let Some(p) = next {
                node.chosen = p;
                node.alt = 0;
                node.alts = 1;
                node.op = None; // its operation and outcomes are learnt when it runs
                self.nodes.truncate(i + 1);
                self.replay_until = i;
                return true;
            }
            self.nodes.pop();
        }
        false
    }
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

#[cfg(test)]
mod tests {
    use super::super::mock::{load, lock, store, unlock, Check, Mock};
    use super::super::{Config, ErrorKind, Outcome};
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
    use super::super::Config;
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
                    if a.0 != b.0 && oa.footprint(true).conflicts(&ob.footprint(true)) {
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
        }
    }
}
