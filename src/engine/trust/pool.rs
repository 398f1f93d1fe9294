//! The graphs still to visit that the graph engine's workers (`-j`) share, and a shard's part
//! of them (`--shard`).

use crate::engine::parallel::Shard;
use crate::graph::Graph;

use super::pieces::{Pieces, Split};

/// Graphs the workers of one exploration share (see [`super::explore_shared`]).
pub struct Pool {
    state: std::sync::Mutex<PoolState>,
    wake: std::sync::Condvar,
    /// Executions by all the workers so far.
    executions: std::sync::atomic::AtomicU64,
    /// This check's part of the exploration (`--shard`).
    shard: Option<Shard>,
    /// The pieces of memory the workers know ([`super::pieces`]), and whether one cut a
    /// piece: the exploration then starts again.
    pieces: std::sync::Mutex<Pieces>,
    cut: std::sync::atomic::AtomicBool,
}

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
        Pool::with_pieces(workers, shard, Pieces::default())
    }

    fn with_pieces(workers: usize, shard: Option<Shard>, pieces: Pieces) -> Pool {
        Pool {
            state: std::sync::Mutex::new(PoolState {
                graphs: Vec::new(),
                workers,
                idle: 0,
                done: false,
            }),
            wake: std::sync::Condvar::new(),
            executions: std::sync::atomic::AtomicU64::new(0),
            shard,
            pieces: std::sync::Mutex::new(pieces),
            cut: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Once the exploration is over: the pool to explore again with if a worker cut a piece
    /// of memory (what was explored took it whole), with the pieces known.
    pub fn again(&self) -> Option<Pool> {
        if !self.was_cut() {
            return None;
        }
        let workers = self.state.lock().unwrap().workers;
        let pieces = self.pieces.lock().unwrap().clone();
        Some(Pool::with_pieces(workers, self.shard, pieces))
    }

    /// Whether a worker cut a piece of memory (the exploration stops, to start again).
    pub(super) fn was_cut(&self) -> bool {
        self.cut.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The pieces known to all workers.
    pub(super) fn pieces(&self) -> Pieces {
        self.pieces.lock().unwrap().clone()
    }

    /// Takes in an access no worker's pieces make up yet ([`Pieces::add`]): its pieces and
    /// all those known now, or `None` when it cut one (the exploration then stops, to start
    /// again).
    pub(super) fn add_access(&self, addr: u64, size: u32) -> Option<(Split, Pieces)> {
        let mut known = self.pieces.lock().unwrap();
        let (split, cut) = known.add(addr, size);
        if cut {
            self.cut.store(true, std::sync::atomic::Ordering::SeqCst);
            drop(known);
            self.stop();
            return None;
        }
        Some((split, known.clone()))
    }

    /// This exploration's shard, if it is one.
    pub(super) fn shard(&self) -> Option<Shard> {
        self.shard
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
    /// waiting for work, if any (and once the exploration is large enough). In a sharded
    /// exploration only graphs of this shard's own: the top and the dealing are worker 0's,
    /// in the order every shard meets them.
    pub(super) fn share(&self, todo: &mut Vec<Graph>, executions: u64) {
        let sharded = self.shard.is_some();
        let mine = |g: &Graph| !sharded || g.owned;
        let n = todo.iter().filter(|g| mine(g)).count() / 2;
        if n == 0 || executions < SHARE_AFTER {
            return;
        }
        let mut s = self.state.lock().unwrap();
        if s.idle == 0 || !s.graphs.is_empty() {
            return;
        }
        let mut given = 0;
        let mut kept = Vec::with_capacity(todo.len());
        for g in todo.drain(..) {
            if given < n && mine(&g) {
                s.graphs.push(g);
                given += 1;
            } else {
                kept.push(g);
            }
        }
        *todo = kept;
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

/// A sharded exploration (`--shard`) is split past its first executions, which every shard
/// visits (the first counts them): at the split depth, this far below the shallowest graph
/// still to visit then (plus a level per doubling of the shards), graphs are dealt round the
/// shards, each exploring below its own.
const SHARD_AFTER: u64 = 64;
const SPLIT_LEVELS: u32 = 3;

/// A worker claims this many of its shard's graphs at once (a claim is a round trip to the
/// checker).
const CLAIM_BLOCK: u64 = 8;

/// How a shard visits a graph.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Visit {
    Count,
    /// The top of the tree, which the first shard counts.
    Uncounted,
    /// Another shard's.
    Skip,
}

/// How the graphs below the top are dealt: round the shards, each taking every `count`-th, and
/// among the workers of one shard to the first that claims each block of them (`claim`, with
/// the block's number: `CLAIM_BLOCK` of the shard's graphs in the order every worker meets
/// them).
#[derive(Clone, Copy)]
pub struct Dealing<'a> {
    pub shard: Shard,
    /// Whether this worker counts the top (the first worker of the first shard).
    pub counts_top: bool,
    pub claim: Option<&'a (dyn Fn(u64) -> bool + Sync)>,
}

impl Dealing<'_> {
    /// A shard's dealing, with no other worker to claim from.
    pub fn shard(shard: Shard) -> Dealing<'static> {
        Dealing {
            shard,
            counts_top: shard.index == 0,
            claim: None,
        }
    }
}

/// A shard's (or a worker's) part of the tree of visits: every worker visits the same top (the
/// exploration is deterministic), so the graphs it deals are the same in each, met in the same
/// order.
pub(super) struct Part<'a> {
    dealing: Dealing<'a>,
    /// The split depth, once decided.
    depth: Option<u32>,
    /// Graphs dealt so far.
    dealt: u64,
    /// The block of this shard's graphs last claimed, and whether this worker got it.
    claimed: Option<(u64, bool)>,
}

impl<'a> Part<'a> {
    pub(super) fn new(dealing: Dealing<'a>) -> Part<'a> {
        Part {
            dealing,
            depth: None,
            dealt: 0,
            claimed: None,
        }
    }

    /// Whether this worker visits `g` (taking it for its own when dealt to it).
    pub(super) fn visit(&mut self, g: &mut Graph) -> Visit {
        if g.owned {
            return Visit::Count;
        }
        let Dealing {
            shard,
            counts_top,
            claim,
        } = self.dealing;
        match self.depth {
            Some(d) if g.depth >= d => {
                let nth = self.dealt;
                self.dealt += 1;
                let block = nth / shard.count / CLAIM_BLOCK;
                let mine = nth % shard.count == shard.index
                    && claim.is_none_or(|c| match self.claimed {
                        Some((b, yes)) if b == block => yes,
                        _ => {
                            let yes = c(block);
                            self.claimed = Some((block, yes));
                            yes
                        }
                    });
                if mine {
                    g.owned = true;
                    Visit::Count
                } else {
                    Visit::Skip
                }
            }
            _ if counts_top => Visit::Count,
            _ => Visit::Uncounted,
        }
    }

    /// Whether the graphs below the split depth are being dealt (the shards' trees part).
    pub(super) fn split(&self) -> bool {
        self.depth.is_some()
    }

    /// After a visit, with `todo` still to visit: the split depth, once past the first
    /// executions.
    pub(super) fn after(&mut self, todo: &[Graph], executions: u64) {
        if self.depth.is_some() || executions < SHARD_AFTER {
            return;
        }
        let levels = SPLIT_LEVELS + (64 - (self.dealing.shard.count - 1).leading_zeros());
        let shallowest = todo.iter().filter(|g| !g.owned).map(|g| g.depth).min();
        self.depth = shallowest.map(|m| m + levels);
    }
}
