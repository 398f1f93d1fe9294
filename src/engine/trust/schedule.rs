//! Which thread adds the next event of an execution: the lowest that can run, with turns for
//! a thread that added a long run of events in a row.

use crate::event::{Op, Pending};
use crate::graph::Graph;

use super::{stopped, SlotState, Snapshot, Trust};

impl Trust<'_> {
    /// The thread to add an event of next: the lowest that can run, but the one in slot
    /// `last` only if no other can, and one that added the last [`Config::fair_after`] events
    /// only if no other can. (Any order of adding events explores the same graphs: a revisit
    /// drops what was added after the read, whatever that was.)
    pub(super) fn next_fair(
        &self,
        g: &Graph,
        snap: &Snapshot,
        last: Option<u32>,
    ) -> Option<(u32, Pending)> {
        // (the lowest but the one in slot `skip`, `last`'s only if no other can run)
        let lowest = |skip: Option<u32>| {
            (self.next_but(g, snap, last, skip)).or_else(|| self.next_but(g, snap, None, skip))
        };
        let first = lowest(None)?;
        let thread = self.slots[first.0 as usize];
        if !added_last(g, thread, self.cfg.fair_after) {
            return Some(first);
        }
        lowest(Some(first.0)).or(Some(first))
    }

    /// The lowest graph thread but the ones in slots `but` and `skip` with an operation that
    /// can run: a join once its thread has exited; the end of the process only once no other
    /// thread but `but`'s can run (`skip`'s counts), as the interleaving engine has it: the
    /// others have exited, or wait for good (a lock, a join, an await loop), which is no
    /// deadlock when the process ends.
    pub(super) fn next_but(
        &self,
        g: &Graph,
        snap: &Snapshot,
        but: Option<u32>,
        skip: Option<u32>,
    ) -> Option<(u32, Pending)> {
        // (a thread that has run some pieces of an access adds the others first)
        if let Some(t) = self.split.iter().position(|&n| n > 0) {
            let slot = self.slot_of(t as u32)?;
            return stopped(snap, slot).map(|p| (slot, p));
        }
        // (slot, graph thread)
        let mut best: Option<(u32, u32)> = None;
        let mut exit: Option<(u32, u32)> = None;
        let mut others_run = false;
        for (slot, view) in (0..).zip(&snap.slots) {
            let (false, SlotState::Stopped(p)) = (Some(slot) == but, &view.state) else {
                continue;
            };
            let Some(&thread) = self.slots.get(slot as usize) else {
                continue;
            };
            // (a lower thread was found: the checks below are the expensive part)
            if best.is_some_and(|(_, t)| t <= thread) {
                continue;
            }
            let ran = self.ran.get(thread as usize).copied().unwrap_or(0);
            let evs = &g.threads[thread as usize];
            if evs.get(ran as usize).is_some_and(|ev| !ev.hole) {
                // its next event is in the graph: replayed once it can be
                others_run = true;
                continue;
            }
            if p.op.exits_last() {
                if Some(slot) != skip && exit.is_none_or(|(_, t)| thread < t) {
                    exit = Some((slot, thread));
                }
                continue;
            }
            if self.awaiting(g, thread, ran, p).is_some() || !can_run(snap, slot, &p.op) {
                continue;
            }
            others_run = true;
            if Some(slot) != skip {
                best = Some((slot, thread));
            }
        }
        let (slot, _) = best.or(exit.filter(|_| !others_run))?;
        stopped(snap, slot).map(|p| (slot, p))
    }
}

/// Has `thread` added the last `n` events of `g` (by their stamps; restriction keeps those,
/// so it is a matter of the graph alone)?
fn added_last(g: &Graph, thread: u32, n: u32) -> bool {
    let evs = &g.threads[thread as usize];
    let (Some(last), Some(first)) = (evs.last(), evs.len().checked_sub(n as usize)) else {
        return false;
    };
    n > 0 && last.stamp + 1 == g.next_stamp && evs[first].stamp + n == g.next_stamp
}

/// Can `slot`'s pending `op` run: a join once its thread has exited, the end of the process
/// once every other thread has? ([`Trust::next_but`] lets an exit run sooner, once no other
/// thread can.)
pub(super) fn can_run(snap: &Snapshot, slot: u32, op: &Op) -> bool {
    match *op {
        Op::Join { slot: s } => matches!(
            snap.slots.get(s as usize).map(|v| &v.state),
            Some(SlotState::Exited)
        ),
        ref op if op.exits_last() => {
            (0..snap.slots.len() as u32).all(|s| s == slot || stopped(snap, s).is_none())
        }
        _ => true,
    }
}
