//! Release/acquire (RA: Lahav, Giannarakis, Vafeiadis, POPL 2016; the `ra.cat` of the seeds):
//! every load an acquire, every store a release, a locked instruction one atomic update.
//! Explored over weak traces (program order and reads-from): coherence order is not
//! enumerated, only its existence checked, by saturation (Abdulla, Atig, Jonsson, Ngo,
//! OOPSLA 2018): the coherence edges every consistent order must have are derived from
//! happens-before (`(po | rf)+`, with thread creation and joining) and reads-from, and the
//! trace is consistent iff happens-before and those edges have no cycle.

use super::relation::Rel;
use super::Model;
use crate::event::Event;
use crate::graph::{EventId, Graph, Label};

pub struct Ra;

impl Model for Ra {
    fn name(&self) -> &'static str {
        "ra"
    }

    fn conflicts(&self, a: &Event, b: &Event) -> bool {
        super::Sc.conflicts(a, b)
    }

    fn fences_visible(&self) -> bool {
        false
    }

    fn consistent(&self, g: &Graph) -> bool {
        let Some(scope) = Scope::new(g, &|_| true, None) else {
            return false;
        };
        let mut addrs: Vec<u64> = g.events().filter_map(|e| g.label(e).location()).collect();
        addrs.sort_unstable();
        addrs.dedup();
        addrs.iter().all(|&a| scope.coherence(a).is_some())
    }

    /// Happens-before changes for `e` alone (it has no successor, or only reads of its
    /// location that read from it), so coherence changes at its location alone.
    fn consistent_after(&self, g: &Graph, e: EventId) -> bool {
        let Some(addr) = g.label(e).location() else {
            return self.consistent(g);
        };
        let quick = Scope::new(g, &|_| true, None).is_some_and(|s| s.coherence(addr).is_some());
        if cfg!(test) {
            assert_eq!(
                quick,
                self.consistent(g),
                "consistency after {e:?} at {addr:#x}"
            );
        }
        quick
    }

    fn enumerates_coherence(&self) -> bool {
        false
    }

    fn graph_only(&self) -> bool {
        true
    }

    fn fences_are_updates(&self) -> bool {
        true
    }

    /// Of the writes no other must follow in coherence order, the one added last.
    fn latest_write(
        &self,
        g: &Graph,
        addr: u64,
        within: &dyn Fn(EventId) -> bool,
        except: Option<EventId>,
    ) -> Option<EventId> {
        let scope = Scope::new(g, within, except)?;
        let last = scope.coherence(addr)?;
        last.into_iter().max_by_key(|&w| g.event(w).stamp)
    }
}

/// The events of a graph in scope, with their happens-before clocks.
struct Scope<'a> {
    g: &'a Graph,
    within: &'a dyn Fn(EventId) -> bool,
    /// An update whose write is not counted (not added yet), only its read.
    read_only: Option<EventId>,
    /// How many events of each thread are in scope (a prefix of each).
    lens: Vec<usize>,
    /// Where each thread's clocks begin in `clocks`.
    offsets: Vec<usize>,
    /// Per event in scope, `threads` counts: how many events of each thread happen before it
    /// or are it.
    clocks: Vec<u32>,
    threads: usize,
}

impl<'a> Scope<'a> {
    /// `None` when happens-before has a cycle.
    fn new(
        g: &'a Graph,
        within: &'a dyn Fn(EventId) -> bool,
        read_only: Option<EventId>,
    ) -> Option<Scope<'a>> {
        let threads = g.threads.len();
        let lens: Vec<usize> = g
            .threads
            .iter()
            .enumerate()
            .map(|(t, evs)| {
                (0..evs.len())
                    .take_while(|&i| {
                        within(EventId {
                            thread: t as u32,
                            index: i as u32,
                        })
                    })
                    .count()
            })
            .collect();
        let mut offsets = Vec::with_capacity(threads);
        let mut total = 0;
        for &n in &lens {
            offsets.push(total);
            total += n;
        }
        let mut clocks = vec![0u32; total * threads];
        // how many events of each thread have their clock
        let mut done = vec![0usize; threads];
        let mut left = total;
        while left > 0 {
            let mut progressed = false;
            for t in 0..threads {
                while done[t] < lens[t] {
                    let i = done[t];
                    let e = EventId {
                        thread: t as u32,
                        index: i as u32,
                    };
                    let at = (offsets[t] + i) * threads;
                    // a source outside the scope orders nothing
                    let source = g
                        .outside_predecessor(e)
                        .filter(|p| (p.index as usize) < lens[p.thread as usize]);
                    if let Some(p) = source {
                        if p.index as usize >= done[p.thread as usize] {
                            break;
                        }
                    }
                    if i > 0 {
                        clocks.copy_within(at - threads..at, at);
                    }
                    if let Some(p) = source {
                        let from = (offsets[p.thread as usize] + p.index as usize) * threads;
                        for k in 0..threads {
                            clocks[at + k] = clocks[at + k].max(clocks[from + k]);
                        }
                    }
                    clocks[at + t] = i as u32 + 1;
                    done[t] += 1;
                    left -= 1;
                    progressed = true;
                }
            }
            if !progressed {
                return None;
            }
        }
        Some(Scope {
            g,
            within,
            read_only,
            lens,
            offsets,
            clocks,
            threads,
        })
    }

    fn in_scope(&self, e: EventId) -> bool {
        (e.index as usize) < self.lens[e.thread as usize]
    }

    /// Does `a` happen before `b` (both in scope, `a` ≠ `b`)?
    fn hb(&self, a: EventId, b: EventId) -> bool {
        let at = (self.offsets[b.thread as usize] + b.index as usize) * self.threads;
        a != b && self.clocks[at + a.thread as usize] > a.index
    }

    /// Checks the coherence order of `addr` some consistent order has: `None` if there is
    /// none, else the writes no other must follow (none: the initial value).
    fn coherence(&self, addr: u64) -> Option<Vec<EventId>> {
        let g = self.g;
        let mut writes = Vec::new();
        // reads with their source (None: the initial value), sources in scope only
        let mut reads: Vec<(EventId, Option<EventId>)> = Vec::new();
        for (t, &n) in self.lens.iter().enumerate() {
            for (i, ev) in g.threads[t][..n].iter().enumerate() {
                if ev.hole || ev.label.location() != Some(addr) {
                    continue;
                }
                let e = EventId {
                    thread: t as u32,
                    index: i as u32,
                };
                if ev.label.writes() && Some(e) != self.read_only {
                    writes.push(e);
                }
                if let Some(rf) = ev.label.rf() {
                    if rf.is_none_or(|w| self.in_scope(w) && (self.within)(w)) {
                        reads.push((e, rf));
                    }
                }
            }
        }
        let one_thread = writes
            .iter()
            .chain(reads.iter().map(|(r, _)| r))
            .all(|e| e.thread == writes.first().map_or(e.thread, |w| w.thread));
        if one_thread {
            return one_thread_coherence(&writes, &reads);
        }
        forced_coherence(self, writes, &reads)
    }
}

/// Coherence where one thread alone accesses the location: its program order. Each read
/// reads from the latest write before it (or the initial value where there is none).
fn one_thread_coherence(
    writes: &[EventId],
    reads: &[(EventId, Option<EventId>)],
) -> Option<Vec<EventId>> {
    // writes and reads are in program order
    let mut w = 0;
    for &(r, source) in reads {
        while w < writes.len() && writes[w].index < r.index {
            w += 1;
        }
        let latest = w.checked_sub(1).map(|k| writes[k]);
        if source != latest {
            return None;
        }
    }
    Some(writes.last().copied().into_iter().collect())
}

/// The coherence edges every consistent order of a location must have (node 0: the initial
/// value, i + 1: `writes[i]`), transitively closed; `None` if they have a cycle.
fn forced_coherence(
    scope: &Scope,
    writes: Vec<EventId>,
    reads: &[(EventId, Option<EventId>)],
) -> Option<Vec<EventId>> {
    let n = writes.len() + 1;
    let node =
        |w: Option<EventId>| w.map_or(0, |w| writes.iter().position(|&x| x == w).unwrap() + 1);
    let mut before = Rel::empty(n);
    (1..n).for_each(|j| before.add(0, j));
    for (i, &a) in writes.iter().enumerate() {
        for (j, &b) in writes.iter().enumerate() {
            if scope.hb(a, b) {
                before.add(i + 1, j + 1);
            }
        }
    }
    let sources: Vec<usize> = reads.iter().map(|&(_, s)| node(s)).collect();
    for (k, &(r, s)) in reads.iter().enumerate() {
        let sn = sources[k];
        for (j, &w) in writes.iter().enumerate() {
            if Some(w) == s {
                continue;
            }
            if w == r {
                // an update's write comes after what it read
                before.add(sn, j + 1);
                continue;
            }
            if scope.hb(w, r) {
                before.add(j + 1, sn);
            }
            if scope.hb(r, w) {
                before.add(sn, j + 1);
            }
        }
        for (k2, &(r2, s2)) in reads.iter().enumerate() {
            if s2 != s && scope.hb(r, r2) {
                before.add(sn, sources[k2]);
            }
        }
    }
    // atomicity: nothing between an update and its source; close transitively until
    // nothing changes
    let updates: Vec<(usize, usize)> = reads
        .iter()
        .zip(&sources)
        .filter(|((r, _), _)| {
            matches!(scope.g.label(*r), Label::Update { .. }) && Some(*r) != scope.read_only
        })
        .map(|(&(u, _), &s)| (node(Some(u)), s))
        .collect();
    let last = |before: &Rel| {
        let last = (0..writes.len()).filter(|&i| before.succ(i + 1).next().is_none());
        Some(last.map(|i| writes[i]).collect())
    };
    if updates.is_empty() {
        // no atomicity to propagate: the edges as they are, not their closure (a write with
        // no edge out has no successor in the closure either)
        return if before.acyclic_sparse() {
            last(&before)
        } else {
            None
        };
    }
    loop {
        before = before.plus();
        if !before.irreflexive() {
            return None;
        }
        let mut changed = false;
        for &(u, s) in &updates {
            for w in (0..n).filter(|&w| w != u && w != s) {
                if before.has(s, w) && !before.has(u, w) {
                    before.add(u, w);
                    changed = true;
                }
                if before.has(w, u) && !before.has(w, s) {
                    before.add(w, s);
                    changed = true;
                }
            }
        }
        if !changed {
            return last(&before);
        }
    }
}
