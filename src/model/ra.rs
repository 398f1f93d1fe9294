//! Release/acquire (RA: Lahav, Giannarakis, Vafeiadis, POPL 2016; the `ra.cat` of the seeds):
//! every load an acquire, every store a release, a locked instruction one atomic update.
//! Explored over weak traces (program order and reads-from): coherence order is not
//! enumerated, only its existence checked, by saturation (Abdulla, Atig, Jonsson, Ngo,
//! OOPSLA 2018): the coherence edges every consistent order must have are derived from
//! happens-before (`(po | rf)+`, with thread creation and joining) and reads-from, and the
//! trace is consistent iff happens-before and those edges have no cycle.

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
        let scope = Scope::new(g, &|_| true, None);
        scope.is_some_and(|s| {
            let mut addrs: Vec<u64> = g.events().filter_map(|e| g.label(e).location()).collect();
            addrs.sort_unstable();
            addrs.dedup();
            addrs.iter().all(|&a| s.coherence(a).is_some())
        })
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
        let order = scope.coherence(addr)?;
        let n = order.writes.len();
        (0..n)
            .filter(|&i| !(0..n).any(|j| order.before[i + 1][j + 1]))
            .map(|i| order.writes[i])
            .max_by_key(|&w| g.event(w).stamp)
    }
}

/// The events of a graph in scope, with their happens-before clocks.
struct Scope<'a> {
    g: &'a Graph,
    within: &'a dyn Fn(EventId) -> bool,
    /// An update whose write is not counted (not added yet), only its read.
    read_only: Option<EventId>,
    /// Per thread, per event in scope: how many events of each thread happen before it or are
    /// it.
    clocks: Vec<Vec<Vec<u32>>>,
}

/// The coherence edges every consistent order of one location has (index 0: the initial
/// value, i + 1: `writes[i]`), transitively closed.
struct Forced {
    writes: Vec<EventId>,
    before: Vec<Vec<bool>>,
}

impl<'a> Scope<'a> {
    /// `None` when happens-before has a cycle.
    fn new(
        g: &'a Graph,
        within: &'a dyn Fn(EventId) -> bool,
        read_only: Option<EventId>,
    ) -> Option<Scope<'a>> {
        let nthreads = g.threads.len();
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
        let mut clocks: Vec<Vec<Vec<u32>>> = lens.iter().map(|&n| Vec::with_capacity(n)).collect();
        let total: usize = lens.iter().sum();
        let mut done = 0;
        while done < total {
            let mut progressed = false;
            for t in 0..nthreads {
                while clocks[t].len() < lens[t] {
                    let e = EventId {
                        thread: t as u32,
                        index: clocks[t].len() as u32,
                    };
                    let mut clock = match clocks[t].last() {
                        Some(c) => c.clone(),
                        None => vec![0; nthreads],
                    };
                    if let Some(p) = g.outside_predecessor(e) {
                        // a source outside the scope orders nothing
                        if p.index < lens[p.thread as usize] as u32 {
                            let Some(pc) = clocks[p.thread as usize].get(p.index as usize) else {
                                break;
                            };
                            for (c, &x) in clock.iter_mut().zip(pc) {
                                *c = (*c).max(x);
                            }
                        }
                    }
                    clock[t] = e.index + 1;
                    clocks[t].push(clock);
                    done += 1;
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
            clocks,
        })
    }

    fn in_scope(&self, e: EventId) -> bool {
        (e.index as usize) < self.clocks[e.thread as usize].len()
    }

    /// Does `a` happen before `b` (both in scope, `a` ≠ `b`)?
    fn hb(&self, a: EventId, b: EventId) -> bool {
        a != b && self.clocks[b.thread as usize][b.index as usize][a.thread as usize] > a.index
    }

    /// The forced coherence order of `addr`, `None` if it has a cycle.
    fn coherence(&self, addr: u64) -> Option<Forced> {
        let g = self.g;
        let mut writes = Vec::new();
        // reads with their source (None: the initial value), sources in scope only
        let mut reads: Vec<(EventId, Option<EventId>)> = Vec::new();
        for t in 0..self.clocks.len() {
            for i in 0..self.clocks[t].len() {
                let e = EventId {
                    thread: t as u32,
                    index: i as u32,
                };
                let label = g.label(e);
                if label.location() != Some(addr) {
                    continue;
                }
                if label.writes() && Some(e) != self.read_only {
                    writes.push(e);
                }
                if let Some(rf) = label.rf() {
                    if rf.is_none_or(|w| self.in_scope(w) && (self.within)(w)) {
                        reads.push((e, rf));
                    }
                }
            }
        }
        let n = writes.len() + 1;
        let node =
            |w: Option<EventId>| w.map_or(0, |w| writes.iter().position(|&x| x == w).unwrap() + 1);
        let mut before = vec![vec![false; n]; n];
        before[0][1..].iter_mut().for_each(|b| *b = true);
        for (i, &a) in writes.iter().enumerate() {
            for (j, &b) in writes.iter().enumerate() {
                if self.hb(a, b) {
                    before[i + 1][j + 1] = true;
                }
            }
        }
        for &(r, s) in &reads {
            let sn = node(s);
            for (j, &w) in writes.iter().enumerate() {
                if Some(w) == s {
                    continue;
                }
                if w == r {
                    // an update's write comes after what it read
                    before[sn][j + 1] = true;
                    continue;
                }
                if self.hb(w, r) {
                    before[j + 1][sn] = true;
                }
                if self.hb(r, w) {
                    before[sn][j + 1] = true;
                }
            }
            for &(r2, s2) in &reads {
                if s2 != s && self.hb(r, r2) {
                    before[sn][node(s2)] = true;
                }
            }
        }
        // atomicity: nothing between an update and its source; close transitively until
        // nothing changes
        let updates: Vec<(usize, usize)> = reads
            .iter()
            .filter(|(r, _)| {
                matches!(g.label(*r), Label::Update { .. }) && Some(*r) != self.read_only
            })
            .map(|&(u, s)| (node(Some(u)), node(s)))
            .collect();
        loop {
            close(&mut before);
            if (0..n).any(|i| before[i][i]) {
                return None;
            }
            let mut changed = false;
            for &(u, s) in &updates {
                for w in (0..n).filter(|&w| w != u && w != s) {
                    if before[s][w] && !before[u][w] {
                        before[u][w] = true;
                        changed = true;
                    }
                    if before[w][u] && !before[w][s] {
                        before[w][s] = true;
                        changed = true;
                    }
                }
            }
            if !changed {
                return Some(Forced { writes, before });
            }
        }
    }
}

/// Transitive closure (Floyd–Warshall).
fn close(m: &mut [Vec<bool>]) {
    for k in 0..m.len() {
        let through = m[k].clone();
        for row in m.iter_mut().filter(|row| row[k]) {
            for (x, &y) in row.iter_mut().zip(&through) {
                *x |= y;
            }
        }
    }
}
