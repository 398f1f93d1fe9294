//! Exploration shared by workers (`-j`) and shards (`--shard`): every worker explores the same
//! first executions; then the top of the tree (branched every way, down to a depth with
//! enough leaves) is split, and each leaf is explored by the worker that claims it.

use super::*;

/// A worker's part of a split exploration ([`Split`]).
pub(super) struct Splitting<'a> {
    pub(super) split: &'a Split<'a>,
    /// The depth of the fully branched top; known after the first execution.
    pub(super) depth: Option<usize>,
    /// The leaves of the top met so far, and a hash of their prefixes in order: every worker
    /// and every shard must walk the same top, or their parts do not add up.
    pub(super) leaves: u64,
    pub(super) leaves_hash: u64,
    /// The number of the leaf this worker explores below now (0: none yet).
    pub(super) current: u64,
}

impl Explorer<'_> {
    pub(super) fn top_depth(&self) -> Option<usize> {
        self.split.as_ref().and_then(|s| s.depth)
    }

    /// The decisions of the first `k` nodes, as a schedule names them.
    pub(super) fn prefix(&self, k: usize) -> Vec<Step> {
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
    pub(super) fn leaf(&mut self, k: usize) -> bool {
        let prefix = self.prefix(k);
        let Some(s) = self.split.as_mut() else {
            return true;
        };
        s.leaves += 1;
        s.leaves_hash =
            (s.leaves_hash ^ crate::engine::prefix_hash(&prefix)).wrapping_mul(0x0100_0000_01b3);
        let ours = (s.split.claim)(&prefix);
        if ours {
            s.current = s.leaves;
        }
        ours
    }

    /// Does this worker count the executions explored before the split (the empty prefix)?
    pub(super) fn claims_the_start(&self) -> bool {
        self.split.as_ref().is_none_or(|s| (s.split.claim)(&[]))
    }

    /// Split exploration, once the top is set: an execution that ended inside the top (before
    /// reaching a leaf) is a leaf of its own, counted by the worker that claims it only.
    pub(super) fn settle_leaf(&mut self, run: &Run, end: RunEnd) -> RunEnd {
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
    pub(super) fn begin_split(&mut self, run: &Run) -> bool {
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
}
