//! An access that spans several pieces of memory ([`super::pieces`]): one event per piece, in
//! address order, added one at a time (each read piece branching over its sources, each write
//! piece over its places and revisits) while the thread waits at the operation, which runs
//! once. A load runs after its last piece, with each piece's bytes; a store runs before its
//! first piece is added, so that every piece has its bytes when it is added (and when a graph
//! that keeps it is visited). A graph may keep only the first pieces of an operation (a revisit
//! of a read piece drops the pieces after it; the branches of a piece do not have them): the
//! thread then adds the others before any other thread goes on.

use crate::engine::{ExecError, Snapshot};
use crate::event::{Event, Op, Pending, Reply, StoreBytes, ThreadId, MAX_ACCESS};
use crate::graph::{EventId, Graph, GraphEvent, Label, Piece};

use super::pieces::Split;
use super::revisit::set_source;
use super::step::reply_to;
use super::{le_value, Trust};

/// The reply to a load whose access is the `count` read pieces from `first` on: each piece's
/// ([`reply_to`], with `last` the write memory holds at an address and `initial` what it held
/// before the first), at its offset. `None` when an initial value is not known.
pub(super) fn merged_reply<'b>(
    g: &'b Graph,
    first: EventId,
    count: u8,
    last: impl Fn(u64) -> Option<EventId>,
    initial: impl Fn(u64) -> Option<&'b StoreBytes>,
) -> Option<Reply> {
    let start = g.label(first).location()?;
    let (mut mask, mut patch) = (0u64, [0u8; MAX_ACCESS]);
    for index in first.index..first.index + count as u32 {
        let e = EventId {
            thread: first.thread,
            index,
        };
        let (addr, size) = g.label(e).access()?;
        let Some((m, bytes)) = reply_to(g, e, last(addr), initial(addr))?.patch else {
            continue; // memory holds what it reads
        };
        let at = (addr - start) as usize;
        let size = size as usize;
        if at + size > MAX_ACCESS {
            return None;
        }
        mask |= m << at;
        patch[at..at + size].copy_from_slice(&bytes[..size]);
    }
    Some(Reply {
        patch: (mask != 0).then_some((mask, patch)),
        ..Reply::default()
    })
}

/// Does x86 make an access of `size` bytes at `addr` single-copy atomic? At most 8 bytes
/// within one aligned 8-byte word (wider and straddling accesses may be done in parts).
fn atomic(addr: u64, size: u32) -> bool {
    size <= 8 && addr / 8 == (addr + size as u64 - 1) / 8
}

/// The first of the events of `e`'s operation, which spans several pieces (`e` itself if not).
pub(super) fn first_piece(g: &Graph, e: EventId) -> EventId {
    let back = g.event(e).piece.map_or(0, |p| p.index as u32);
    EventId {
        thread: e.thread,
        index: e.index - back,
    }
}

impl Trust<'_> {
    /// The pieces of an access; `None` when it cut a known piece (the exploration stops, to
    /// start again: [`super::Pool::again`]).
    pub(super) fn pieces_of(&mut self, addr: u64, size: u32) -> Option<Split> {
        if let Some(split) = self.pieces.known(addr, size) {
            return Some(split);
        }
        let (split, known) = self.pool.add_access(addr, size)?;
        self.pieces = known;
        Some(split)
    }

    /// Runs `slot`'s pending access `p`, whose `label` spans the pieces `split`, the first
    /// `self.split` of which its thread has already run: adds the others, the branches of
    /// each left to visit. `None` when the execution ended (blocked).
    pub(super) fn split_step(
        &mut self,
        g: &mut Graph,
        slot: u32,
        p: &Pending,
        label: &Label,
        split: &Split,
    ) -> Result<Option<Snapshot>, ExecError> {
        let thread = self.slots[slot as usize];
        if !matches!(
            p.op,
            Op::Load { .. } | Op::Store { .. } | Op::RmwLoad { .. } | Op::RmwStore { .. }
        ) {
            return Err(self.unsupported_split(label, "atomic operations on memory"));
        }
        let atomic = label.access().is_some_and(|(a, s)| atomic(a, s));
        self.atomic_split |= atomic;
        let count = split.len() as u8;
        self.split.resize(g.threads.len(), 0);
        let done = std::mem::take(&mut self.split[thread as usize]);
        let first = EventId {
            thread,
            index: self.ran[thread as usize] - done as u32,
        };
        let mut snap = None;
        let mut stored = None;
        if label.writes() {
            let (s, bytes) = self.run_split(g, slot, p, first, done, split)?;
            snap = Some(s);
            stored = Some(bytes);
        }
        for (index, &(addr, size)) in split.iter().enumerate().skip(done as usize) {
            let at = EventId {
                thread,
                index: first.index + index as u32,
            };
            let label = match &stored {
                Some(bytes) => {
                    let off = (addr - split[0].0) as usize;
                    let bytes = bytes
                        .get(off..off + size as usize)
                        .map_or_else(StoreBytes::new, StoreBytes::from);
                    Label::Write { addr, size, bytes }
                }
                None => Label::Read {
                    addr,
                    size,
                    rf: None,
                },
            };
            let mut ev = GraphEvent::new(label, p.pc, p.hash);
            ev.skipped = p.skipped;
            ev.piece = Some(Piece {
                index: index as u8,
                count,
                atomic,
            });
            let e = g.insert(at, ev);
            if stored.is_some() {
                self.memory.last.insert(addr, e);
                let places = self.placements(g, e, addr);
                self.revisits(g, e);
                self.take_place(g, e, places)?;
            } else {
                let candidates = self.sources(g, e, addr);
                if let [w] = candidates[..] {
                    if self.sinks_stay_consistent(g, e) {
                        set_source(g, e, w);
                        self.ran[thread as usize] = e.index + 1;
                        continue;
                    }
                }
                let ok = self.consistent_candidates(g, e, &candidates);
                let ok = ok.as_deref();
                let Some((k, last)) = self.source_to_take(g, e, &candidates, ok) else {
                    self.outcome.stats.blocked += 1;
                    self.exec.end()?;
                    return Ok(None);
                };
                let others = self.other_sources(g, e, &candidates, ok, last, Some(k));
                self.todo.extend(others);
                set_source(g, e, candidates[k]);
            }
            self.ran[thread as usize] = e.index + 1;
        }
        match snap {
            Some(s) => Ok(Some(s)),
            None => Ok(Some(self.run_split(g, slot, p, first, count, split)?.0)),
        }
    }

    /// Runs the access `p` over the pieces `split`, whose events begin at `first`, `count` of
    /// them in the graph (all of a load's; a store's first ones, or none): a load gets each
    /// piece's bytes. Notes the step, where memory now holds the store's pieces that are
    /// events, and what each piece held before; returns what it stored.
    pub(super) fn run_split(
        &mut self,
        g: &Graph,
        slot: u32,
        p: &Pending,
        first: EventId,
        count: u8,
        split: &Split,
    ) -> Result<(Snapshot, StoreBytes), ExecError> {
        let store = matches!(p.op, Op::Store { .. } | Op::RmwStore { .. });
        let reply = if store {
            Reply::default()
        } else {
            let memory = &self.memory;
            merged_reply(
                g,
                first,
                count,
                |a| memory.last.get(&a).copied(),
                |a| memory.before.get(&a),
            )
            .ok_or_else(|| {
                ExecError::Fatal("internal: a store did not report what it wrote over".into())
            })?
        };
        if self.script.take(slot, &reply).is_err() {
            return Err(ExecError::Fatal(super::LEFT_SCRIPT.into()));
        }
        let snap = self.exec.step(slot, &reply)?;
        self.replies.push((slot, reply));
        let executed = snap.slots.get(slot as usize).and_then(|v| v.prev.clone());
        let mut ev = Event::from_pending(ThreadId(first.thread), p);
        ev.wrote = store;
        let mut stored = StoreBytes::new();
        if store {
            stored = executed
                .as_ref()
                .and_then(|x| x.stored.clone())
                .unwrap_or_default();
            ev.value_written = Some(le_value(&stored));
            let start = split[0].0;
            let replaced = executed.and_then(|x| x.replaced);
            for (index, &(addr, size)) in split.iter().enumerate() {
                if index < count as usize {
                    let e = EventId {
                        thread: first.thread,
                        index: first.index + index as u32,
                    };
                    self.memory.last.insert(addr, e);
                }
                let off = (addr - start) as usize;
                let before = replaced
                    .as_ref()
                    .and_then(|b| b.get(off..off + size as usize));
                if let Some(before) = before.map(StoreBytes::from) {
                    self.note_replaced(addr, before);
                }
            }
        } else {
            ev.value_read = executed.as_ref().and_then(|x| x.read);
        }
        self.trace.push(ev);
        self.trace_events.push(Some(first));
        Ok((snap, stored))
    }

    /// Replays piece event `e` of `slot`'s pending access `p`, and runs the access after its
    /// last piece: the state then, `Some(None)` while pieces remain, `None` when `p` is not
    /// the access that `e` is a piece of.
    pub(super) fn replay_piece(
        &mut self,
        g: &Graph,
        slot: u32,
        p: &Pending,
        e: EventId,
    ) -> Result<Option<Option<Snapshot>>, ExecError> {
        let Some(piece) = g.event(e).piece else {
            return Ok(None);
        };
        let store = matches!(p.op, Op::Store { .. } | Op::RmwStore { .. });
        let load = matches!(p.op, Op::Load { .. } | Op::RmwLoad { .. });
        let Some(split) =
            p.op.data()
                .filter(|_| store || load)
                .and_then(|(addr, size)| self.pieces.known(addr.0, size))
        else {
            return Ok(None);
        };
        let thread = e.thread as usize;
        self.split.resize(g.threads.len(), 0);
        let done = self.split[thread];
        if piece.index != done
            || piece.count as usize != split.len()
            || g.label(e).access() != Some(split[done as usize])
            || g.label(e).writes() != store
        {
            return Ok(None);
        }
        if piece.index + 1 < piece.count {
            self.split[thread] = done + 1;
            return Ok(Some(None));
        }
        self.split[thread] = 0;
        let (snap, _) = self.run_split(g, slot, p, first_piece(g, e), piece.count, &split)?;
        Ok(Some(Some(snap)))
    }

    /// A piece was cut: the exploration stops, to start again with the pieces known then.
    /// The execution runs on first (its threads in turn, each access reading memory as it is)
    /// to learn the pieces of the accesses it has left, so that one start usually does, up to
    /// an operation whose answer needs the graph (a pthread object's).
    pub(super) fn learn_pieces(&mut self, mut snap: Snapshot) -> Result<(), ExecError> {
        for _ in 0..self.cfg.max_steps {
            if snap.ended.is_some() {
                break;
            }
            let next = (0..snap.slots.len() as u32).find_map(|slot| {
                let p = super::stopped(&snap, slot)?;
                super::schedule::can_run(&snap, slot, &p.op).then_some((slot, p))
            });
            let Some((slot, p)) = next else {
                break;
            };
            let plain = matches!(
                p.op,
                Op::Load { .. }
                    | Op::Store { .. }
                    | Op::RmwLoad { .. }
                    | Op::RmwStore { .. }
                    | Op::Rmw { .. }
                    | Op::Fence { .. }
                    | Op::Yield
                    | Op::HeapRelease { .. }
                    | Op::Spawn
                    | Op::ThreadStart
                    | Op::ThreadExit
                    | Op::Join { .. }
                    | Op::Assume { cond: true }
            );
            if !plain || self.script.take(slot, &Reply::default()).is_err() {
                break;
            }
            if let Some((addr, size)) = p.op.data() {
                let _ = self.pool.add_access(addr.0, size);
            }
            snap = match self.exec.step(slot, &Reply::default()) {
                Ok(s) => s,
                Err(ExecError::Timeout { .. }) => break,
                Err(e) => return Err(e),
            };
        }
        self.exec.end()
    }

    /// Refuses a graph where an access the processor makes atomic, taken in pieces, races
    /// with another thread's access to one of them (one of the two writing: neither depends
    /// on the other through program order, reads-from, creation and joining). Its pieces are
    /// each atomic, the whole is not, which would let a thread see half of one write and half
    /// of another, a behaviour x86 does not have. Where every other access to the pieces is
    /// ordered with it (a record written before the thread that reads it is created, as
    /// Rust's std does with a thread's result), no thread can tell the pieces from the whole.
    /// As exploring in pieces only adds graphs, a run where no graph has such a race has
    /// visited exactly those of the whole accesses.
    pub(super) fn check_atomic_pieces(&self, g: &Graph) -> Result<(), ExecError> {
        if !self.atomic_split {
            return Ok(());
        }
        let atomic: Vec<EventId> = g
            .events()
            .filter(|&e| g.event(e).piece.is_some_and(|p| p.atomic))
            .collect();
        let mut prefixes = rustc_hash::FxHashMap::default();
        for a in atomic {
            let Some(addr) = g.label(a).location() else {
                continue;
            };
            let others: Vec<EventId> = g
                .events()
                .filter(|&b| {
                    b.thread != a.thread
                        && g.label(b).location() == Some(addr)
                        && (g.label(a).writes() || g.label(b).writes())
                })
                .collect();
            for b in others {
                let mut before = |x: EventId, y: EventId| {
                    prefixes
                        .entry(y)
                        .or_insert_with(|| g.porf_prefix(y))
                        .contains(x)
                };
                if !before(a, b) && !before(b, a) {
                    return Err(ExecError::Fatal(format!(
                        "the graph engine does not support memory that threads access \
                         concurrently where one access takes it whole, atomically, and another \
                         only in part yet (at {addr:#x}{})",
                        self.instead()
                    )));
                }
            }
        }
        Ok(())
    }

    /// What to use instead where the graph engine refuses a program: the interleaving engine,
    /// if the model has one.
    fn instead(&self) -> &'static str {
        if self.model.graph_only() {
            ""
        } else {
            "; use --engine interleaving"
        }
    }

    fn unsupported_split(&self, label: &Label, what: &str) -> ExecError {
        let (addr, size) = label.access().unwrap_or_default();
        ExecError::Fatal(format!(
            "the graph engine does not support {what} that other accesses cover in part yet \
             ({size} bytes at {addr:#x}{})",
            self.instead()
        ))
    }
}
