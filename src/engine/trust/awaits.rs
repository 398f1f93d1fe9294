//! Await loops in the graph engine: a thread whose pending read repeats its last iteration
//! waits (a later write revisits that read instead of the loop spinning), and an object's
//! operation that would wait reads only the latest state.

use crate::event::{Op, Pending};
use crate::graph::{EventId, Graph, Label};

use super::objects::{self, object_of};
use super::Trust;

impl Trust<'_> {
    /// An object's operation that waits where it reads some states (a lock where its mutex
    /// is taken) reads only the latest of those, as a read is added maximally: one that waits
    /// on an older state is never revisited (a revisit needs its read maximal), and ends as
    /// the graph where it waits on the latest does, blocked or in the same deadlock. (Where
    /// the latest lets it go on, it waits on none.) A read that nothing follows in its thread
    /// or reads from keeps a graph consistent reading the latest write, so that graph is
    /// there; not under porf cycles, where kept events may follow it.
    pub(super) fn wait_on_latest(
        &self,
        g: &mut Graph,
        e: EventId,
        addr: u64,
        candidates: &mut Vec<Option<EventId>>,
    ) {
        let Some(op) = g.event(e).op.filter(objects::may_only_read) else {
            return;
        };
        if self.model.porf_cycles() {
            return;
        }
        let latest = self.model.latest_write(g, addr, &|x| x != e, None);
        // (should the latest not keep the graph consistent, every state stays a source)
        if self.would_wait(g, e, &op, latest) && !self.reads_consistently(g, e, latest, None) {
            return;
        }
        candidates.retain(|&w| w == latest || !self.would_wait(g, e, &op, w));
    }

    /// Could another read of `r`'s thread, right after it, read another write than `r` did,
    /// one that must come after `r`'s source in coherence order? (Where coherence could also
    /// put that write first, `r`'s source may be the last write there: its thread spins on it
    /// for good, a livelock this graph is the one to report. Models that order the writes of a
    /// location in the graph have one order or the other; ra has both where nothing orders
    /// two threads' writes.)
    pub(super) fn could_read_another(&self, g: &Graph, r: EventId) -> bool {
        let (Some((addr, size)), Some(rf)) = (g.label(r).access(), g.label(r).rf()) else {
            return false;
        };
        let writes: Vec<EventId> = g.events_at(addr).filter(|&w| g.label(w).writes()).collect();
        // an object's operation waits for a state it can go on from (a lock for a free mutex)
        let op = g.event(r).op;
        std::iter::once(None)
            .chain(writes.into_iter().map(Some))
            .filter(|&w| w != rf && !op.is_some_and(|op| self.would_wait(g, r, &op, w)))
            .any(|w| {
                let mut h = g.clone();
                let again = h.push(r.thread, Label::Read { addr, size, rf: w }, 0, 0);
                if !self.model.consistent_after(&h, again) {
                    return false;
                }
                // (and `r`'s source cannot come after it: a thread that nothing orders with
                // the others, reading `w` and then the source, is inconsistent)
                let mut back = g.clone();
                let observer = back.add_thread(None);
                back.push(observer, Label::Read { addr, size, rf: w }, 0, 0);
                let after = back.push(observer, Label::Read { addr, size, rf }, 0, 0);
                !self.model.consistent_after(&back, after)
            })
    }

    /// The read `thread` waits at in an await loop: its pending load repeats its last event, a
    /// read of the same location from the same instruction in the same state (so reading what
    /// it read then changes nothing; a later write revisits that read instead). An update that
    /// wrote back what it read (a test-and-set that found the flag set) counts as a read: it
    /// left memory as it was.
    pub(super) fn awaiting(
        &self,
        g: &Graph,
        thread: u32,
        ran: u32,
        p: &Pending,
    ) -> Option<EventId> {
        let addr = match p.op {
            // (a load with no state hash, as a piece of a copy has, is not known to repeat)
            Op::Load { .. } | Op::Cas { .. } | Op::Rmw { .. } if p.hash == 0 => return None,
            Op::Load { addr, .. } | Op::Cas { addr, .. } | Op::Rmw { addr, .. } => addr.0,
            // (a try's loop is the program's: it repeats only in the same state of the caller;
            // a wait's is the runtime's, in the state it was called in)
            ref op if op.tried().is_some() && p.hash == 0 => return None,
            ref op if objects::may_only_read(op) => object_of(op)?.0,
            _ => return None,
        };
        // the thread's latest iteration: reads only since a read of the same location by the
        // same instruction in the same state (a yield between changes nothing; a loop of
        // several loads repeats as one)
        let evs = g.threads.get(thread as usize)?;
        let mut index = (ran as usize).min(evs.len());
        let oldest = index.saturating_sub(AWAIT_ITERATION);
        while index > oldest {
            index -= 1;
            let ev = &evs[index];
            let e = EventId {
                thread,
                index: index as u32,
            };
            let reads_only = match ev.label {
                // (a fence writes nothing: the iteration repeats as well)
                Label::Local | Label::Fence | Label::Lwsync | Label::Eieio => continue,
                Label::Read { .. } => true,
                Label::Update { .. } => self.wrote_back(g, e),
                _ => false,
            };
            if !reads_only {
                return None;
            }
            let repeats = ev.pc == p.pc && ev.hash == p.hash;
            if repeats && ev.label.location() == Some(addr) {
                return Some(e);
            }
        }
        None
    }

    /// Whether update `e` wrote the bytes it read.
    fn wrote_back(&self, g: &Graph, e: EventId) -> bool {
        let Label::Update {
            addr, rf, bytes, ..
        } = g.label(e)
        else {
            return false;
        };
        let read = match rf {
            Some(w) => g.label(*w).written(),
            None => self.memory.before.get(addr),
        };
        read == Some(bytes)
    }
}

/// The longest iteration of an await loop recognised, in events (a longer one is explored
/// iteration by iteration; the check runs at every step).
const AWAIT_ITERATION: usize = 32;

/// The events of an await loop's iteration that begins at `first`, up to where its thread has
/// run (`ran`; what follows is kept events not run yet, or holes): a write any of its reads
/// could read ends the wait.
pub(super) fn iteration(first: EventId, ran: &[u32]) -> impl Iterator<Item = EventId> {
    let end = ran.get(first.thread as usize).copied().unwrap_or(0);
    (first.index..end).map(move |index| EventId {
        thread: first.thread,
        index,
    })
}
