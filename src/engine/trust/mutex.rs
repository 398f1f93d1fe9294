//! Mutexes in the graph engine: a one-byte lock word the engine keeps (the runtime does not
//! touch the mutex). A lock is added as a read, and becomes an update when it finds the word
//! free; one that finds it taken is told to ask again (an await loop until an unlock comes).
//! An unlock is an update that writes the word free.

use crate::event::{Event, Op, Pending, Reply, ThreadId};
use crate::graph::{EventId, Graph, Label, Order};

use super::{Snapshot, Trust};

/// A mutex's lock word: free, or taken.
pub(super) const MUTEX_FREE: u8 = 0;
const MUTEX_TAKEN: u8 = 1;
/// The reply to a lock that found its mutex taken: it asks again (an await loop until an
/// unlock comes; runtime/sync.c); a try-lock returns EBUSY.
const MUTEX_BUSY: u64 = 1;
const EBUSY: u64 = 16;

/// The mutex a lock, try-lock or unlock operates on.
pub(super) fn mutex_of(op: &Op) -> Option<u64> {
    match op {
        Op::MutexLock { obj } | Op::MutexTryLock { obj } | Op::MutexUnlock { obj } => Some(obj.0),
        _ => None,
    }
}

/// Does a lock that reads from `w` (`None`: the initial state) find its mutex free?
pub(super) fn mutex_free(g: &Graph, w: Option<EventId>) -> bool {
    w.is_none_or(|w| {
        g.label(w)
            .written()
            .is_some_and(|b| b.first() == Some(&MUTEX_FREE))
    })
}

impl Trust<'_> {
    /// A lock gets its mutex when it reads it free, else it is told to ask again (a try-lock:
    /// EBUSY); an unlock just runs.
    pub(super) fn mutex_reply(&self, g: &Graph, e: EventId, op: &Op) -> Reply {
        let free = g.label(e).rf().is_some_and(|rf| mutex_free(g, rf));
        let value = match op {
            Op::MutexLock { .. } if !free => MUTEX_BUSY,
            Op::MutexTryLock { .. } if !free => EBUSY,
            _ => 0,
        };
        Reply { value, patch: None }
    }

    /// After a mutex operation ran: a lock that got its mutex becomes an update (its place
    /// and revisits still to be made); the step goes into the trace.
    pub(super) fn mutex_stepped(
        &mut self,
        g: &mut Graph,
        p: &Pending,
        e: EventId,
        reply: Reply,
        snap: Snapshot,
    ) -> Snapshot {
        let mut ev = Event::from_pending(ThreadId(e.thread), p);
        let lock = !matches!(p.op, Op::MutexUnlock { .. });
        if let (Label::Read { addr, size, rf }, 0, true) = (g.label(e), reply.value, lock) {
            *g.label_mut(e) = Label::Update {
                addr: *addr,
                size: *size,
                rf: *rf,
                bytes: smallvec::smallvec![MUTEX_TAKEN],
            };
            g.event_mut(e).order = Some(Order::Acquire);
            self.converted = Some(e);
        }
        if !lock {
            g.event_mut(e).order = Some(Order::Release);
        }
        ev.wrote = reply.value == 0;
        self.trace.push(ev);
        self.trace_events.push(Some(e));
        snap
    }

    /// If `r` is a lock that took its mutex and now reads the taken state `a` wrote, it
    /// becomes the read of a lock that waits.
    pub(super) fn lock_finds_taken(&self, h: &mut Graph, r: EventId, a: EventId) -> bool {
        let Label::Update { addr, size, rf, .. } = h.label(r).clone() else {
            return false;
        };
        if !self.mutexes.contains(&addr) || mutex_free(h, Some(a)) {
            return false;
        }
        *h.label_mut(r) = Label::Read { addr, size, rf };
        true
    }
}
