//! The graphs still to visit that the graph engine's workers (`-j`) share.

use crate::engine::parallel::Shard;
use crate::graph::Graph;

/// Graphs the workers of one exploration share (see [`super::explore_shared`]).
pub struct Pool {
    state: std::sync::Mutex<PoolState>,
    wake: std::sync::Condvar,
    /// Executions by all the workers so far.
    executions: std::sync::atomic::AtomicU64,
    /// This check's part of the exploration (`--shard`), until worker 0 has split it off.
    shard: std::sync::Mutex<Option<Shard>>,
}

/// When worker 0 splits a sharded exploration: the graphs it has to visit then, dealt round the
/// shards, are their parts. Past its first executions (every shard explores those, the first
/// counts them), as soon as there is a graph for each shard. (The stack of graphs to visit
/// stays short, about the depth of an execution, and its oldest graph is the largest subtree:
/// the parts are uneven.)
const SHARD_AFTER: u64 = 64;

struct PoolState {
    graphs: Vec<Graph>,
    workers: usize,
    /// Workers with nothing to visit, waiting for a graph.
    idle: usize,
    /// The exploration is over (explored, or stopped).
    done: bool,
}

/// Executions worker 0 explores alone before it shares: a small exploration is not worth
/// starting another worker's process.
const SHARE_AFTER: u64 = 64;

impl Pool {
    pub fn new(workers: usize, shard: Option<Shard>) -> Pool {
        Pool {
            state: std::sync::Mutex::new(PoolState {
                graphs: Vec::new(),
                workers,
                idle: 0,
                done: false,
            }),
            wake: std::sync::Condvar::new(),
            executions: std::sync::atomic::AtomicU64::new(0),
            shard: std::sync::Mutex::new(shard),
        }
    }

    /// Worker 0's graphs to visit `todo`, after `executions`: in a sharded exploration, once
    /// it is large enough, cut down to this shard's part (every `count`-th graph, from the
    /// graph at `index`). True when this shard does not count what was explored so far (the
    /// first shard does). Not split yet: no other worker may take a graph.
    pub(super) fn split(&self, todo: &mut Vec<Graph>, executions: u64) -> Option<bool> {
        let mut shard = self.shard.lock().unwrap();
        let s = (*shard)?;
        if executions < SHARD_AFTER || todo.len() < s.count as usize {
            return Some(false);
        }
        *shard = None;
        let all = std::mem::take(todo);
        todo.extend(
            all.into_iter()
                .enumerate()
                .filter(|(i, _)| *i as u64 % s.count == s.index)
                .map(|(_, g)| g),
        );
        Some(s.index != 0)
    }

    /// Whether a sharded exploration still waits to be split (its workers must not share).
    fn unsplit(&self) -> bool {
        self.never_split().is_some()
    }

    /// The shard of a sharded exploration not split (yet).
    pub(super) fn never_split(&self) -> Option<Shard> {
        *self.shard.lock().unwrap()
    }

    /// A graph to visit, waiting for one while any worker is still visiting; None when the
    /// exploration is over.
    pub fn take(&self) -> Option<Graph> {
        let mut s = self.state.lock().unwrap();
        s.idle += 1;
        loop {
            if s.done {
                return None;
            }
            if let Some(g) = s.graphs.pop() {
                s.idle -= 1;
                return Some(g);
            }
            if s.idle == s.workers {
                s.done = true;
                self.wake.notify_all();
                return None;
            }
            s = self.wake.wait(s).unwrap();
        }
    }

    /// `n` more executions (a visit may end blocked, with none); all workers' total so far.
    pub(super) fn executed(&self, n: u64) -> u64 {
        self.executions
            .fetch_add(n, std::sync::atomic::Ordering::SeqCst)
            + n
    }

    /// Hands the older half of `todo` (the larger subtrees, at its bottom) to the workers
    /// waiting for work, if any (and once the exploration is large enough).
    pub(super) fn share(&self, todo: &mut Vec<Graph>, executions: u64) {
        if todo.len() < 2 || executions < SHARE_AFTER || self.unsplit() {
            return;
        }
        let mut s = self.state.lock().unwrap();
        if s.idle == 0 || !s.graphs.is_empty() {
            return;
        }
        let n = todo.len() / 2;
        s.graphs.extend(todo.drain(..n));
        self.wake.notify_all();
    }

    /// Ends the exploration for every worker.
    pub fn stop(&self) {
        self.state.lock().unwrap().done = true;
        self.wake.notify_all();
    }

    /// Whether the exploration is over.
    pub fn done(&self) -> bool {
        self.state.lock().unwrap().done
    }
}
