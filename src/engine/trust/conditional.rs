//! Store-conditionals (POWER's `stwcx.`) under a model where they branch
//! ([`Model::store_conditionals_branch`](crate::model::Model::store_conditionals_branch)), as
//! herd has them: one fails (no write, a `Local` event) whatever memory holds, or writes
//! atomically with its thread's load-reserve. The engine tells the runtime which
//! ([`channel::store_conditional`]).

use crate::channel::store_conditional;
use crate::event::{Reply, StoreBytes};
use crate::graph::{Conditional, EventId, Graph, Label};

use super::Trust;

/// A store-conditional about to be added: its access, the load-reserve it completes (if its
/// thread holds one), and what it did where it refills a hole.
pub(super) struct StoreConditional {
    addr: u64,
    size: u32,
    reserve: Option<u32>,
    /// A store-conditional refilling a hole does what it did: the kept events after it come
    /// from that outcome.
    did: Option<Conditional>,
}

impl StoreConditional {
    /// The store-conditional of `size` bytes at `addr` that goes at place `at`; `None` when it
    /// must do what it cannot (write, refilling a hole, without a reservation).
    pub(super) fn new(g: &Graph, at: EventId, addr: u64, size: u32) -> Option<StoreConditional> {
        let did = g.threads[at.thread as usize]
            .get(at.index as usize)
            .and_then(|ev| ev.conditional);
        let reserve = reservation(g, at, addr, size)
            .filter(|_| !matches!(did, Some(Conditional::Failed { .. })));
        if reserve.is_none() && matches!(did, Some(Conditional::Written { .. })) {
            return None;
        }
        Some(StoreConditional {
            addr,
            size,
            reserve,
            did,
        })
    }

    /// The label it is added with: a write where it may write, else a failure. The write's
    /// bytes are what the runtime says it `stores` (else known once it ran): a graph where it
    /// wrote may be made while this execution has it fail, and a read of that write replayed
    /// before it runs again gets them.
    pub(super) fn label(&self, stores: Option<u64>) -> Label {
        let bytes = stores.map_or_else(StoreBytes::new, |v| {
            StoreBytes::from(&v.to_le_bytes()[..(self.size as usize).min(8)])
        });
        match self.reserve {
            Some(_) => Label::Write {
                addr: self.addr,
                size: self.size,
                bytes,
            },
            None => Label::Local,
        }
    }
}

impl Trust<'_> {
    /// Store-conditional `e`, just added to `g` with [`StoreConditional::label`], takes its
    /// outcome: the write, with its failure left to visit, where it may write and has a
    /// consistent place in coherence order (or only the write, refilling a hole where it
    /// wrote); else the failure. False when it cannot do what it did before.
    pub(super) fn branch_conditional(
        &mut self,
        g: &mut Graph,
        e: EventId,
        c: StoreConditional,
    ) -> bool {
        let mut failed = g.clone();
        *failed.label_mut(e) = Label::Local;
        failed.event_mut(e).conditional = Some(Conditional::Failed {
            addr: c.addr,
            size: c.size,
        });
        failed.event_mut(e).deps = None;
        let Some(reserve) = c.reserve else {
            *g = failed;
            return true;
        };
        g.event_mut(e).conditional = Some(Conditional::Written { reserve });
        let can_write = !self.placements(g, e, c.addr).is_empty();
        match (can_write, c.did) {
            (true, None) => self.todo.push(failed),
            (true, Some(_)) => {}
            (false, None) => {
                // another thread's store-conditional wrote after the write this one's
                // load-reserve read (an update of the same source): this write revisits its
                // reads all the same, as an update taken so does, so that the graphs where
                // this pair comes first are reached; this execution goes on with the failure
                if reservation_taken(g, e, reserve) {
                    self.revisits(g, e);
                }
                *g = failed;
            }
            (false, Some(_)) => return false,
        }
        true
    }
}

/// Does a store-conditional of another thread that wrote complete a load-reserve reading the
/// write that store-conditional `e`'s load-reserve (its thread's event `reserve`) read?
fn reservation_taken(g: &Graph, e: EventId, reserve: u32) -> bool {
    let read = EventId {
        thread: e.thread,
        index: reserve,
    };
    let (source, addr) = (g.label(read).rf(), g.label(read).location());
    g.events().any(|x| {
        let Some(Conditional::Written { reserve }) = g.event(x).conditional else {
            return false;
        };
        let theirs = EventId {
            thread: x.thread,
            index: reserve,
        };
        x.thread != e.thread && g.label(theirs).location() == addr && g.label(theirs).rf() == source
    })
}

/// What the runtime is told to do with a store-conditional.
pub(super) fn reply(c: Conditional) -> Reply {
    let value = match c {
        Conditional::Failed { .. } => store_conditional::FAIL,
        Conditional::Written { .. } => store_conditional::WRITE,
    };
    Reply { value, patch: None }
}

/// The load-reserve a store-conditional of `size` bytes at `addr`, at place `at`, would
/// complete: the latest access of its thread to its location, if a read of the same size (a
/// write, or a store-conditional since, has taken the reservation).
pub(super) fn reservation(g: &Graph, at: EventId, addr: u64, size: u32) -> Option<u32> {
    let evs = &g.threads[at.thread as usize][..at.index as usize];
    let i = evs.iter().rposition(|ev| {
        !ev.hole && (ev.label.location() == Some(addr) || ev.conditional.is_some())
    })?;
    match evs[i].label {
        Label::Read {
            addr: a, size: s, ..
        } if (a, s) == (addr, size) => Some(i as u32),
        _ => None,
    }
}
