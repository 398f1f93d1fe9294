//! Happens-before clocks of a graph's events (`(po | rf)+` with thread creation and joining):
//! per event, how many events of each thread happen before it or are it. Release/acquire
//! derives its coherence from them; one write's revisit checks share those of the whole graph
//! ([`GraphClocks`]) instead of each computing its own.

use std::cell::OnceCell;

use crate::graph::{EventId, Graph};
use smallvec::SmallVec;

/// The clocks of a prefix of each thread's events.
#[derive(Clone)]
pub(super) struct Clocks {
    /// How many events of each thread have a clock.
    lens: SmallVec<[usize; 16]>,
    /// Where each thread's clocks begin in `clocks`, in events.
    offsets: SmallVec<[usize; 16]>,
    /// Per event, `threads` counts.
    clocks: Vec<u32>,
    threads: usize,
}

impl Clocks {
    /// The clocks of each thread's first `lens` events, where a source outside them orders
    /// nothing: `None` when happens-before has a cycle.
    pub(super) fn of(g: &Graph, lens: SmallVec<[usize; 16]>) -> Option<Clocks> {
        let threads = g.threads.len();
        let mut offsets = SmallVec::with_capacity(threads);
        let mut total = 0;
        for &n in &lens {
            offsets.push(total);
            total += n;
        }
        let mut clocks = vec![0u32; total * threads];
        // how many events of each thread have their clock
        let mut done: SmallVec<[usize; 16]> = SmallVec::from_elem(0, threads);
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
        Some(Clocks {
            lens,
            offsets,
            clocks,
            threads,
        })
    }

    pub(super) fn whole(g: &Graph) -> Option<Clocks> {
        Clocks::of(g, g.threads.iter().map(|evs| evs.len()).collect())
    }

    pub(super) fn threads(&self) -> usize {
        self.threads
    }

    /// How many events of each thread happen before `e` (one with a clock) or are it.
    pub(super) fn clock(&self, e: EventId) -> &[u32] {
        let at = (self.offsets[e.thread as usize] + e.index as usize) * self.threads;
        &self.clocks[at..at + self.threads]
    }

    /// Takes `e`, which no event with a clock follows, as having `w` (one with a clock, or
    /// none) as its source: only its own clock changes.
    pub(super) fn reread(&mut self, e: EventId, w: Option<EventId>) {
        let threads = self.threads;
        let at = (self.offsets[e.thread as usize] + e.index as usize) * threads;
        if e.index > 0 {
            self.clocks.copy_within(at - threads..at, at);
        } else {
            self.clocks[at..at + threads].fill(0);
        }
        if let Some(w) = w {
            let from = (self.offsets[w.thread as usize] + w.index as usize) * threads;
            for k in 0..threads {
                self.clocks[at + k] = self.clocks[at + k].max(self.clocks[from + k]);
            }
        }
        self.clocks[at + e.thread as usize] = e.index + 1;
    }

    /// Are these the clocks of `h`'s first `lens` events of each thread, as [`Clocks::of`]
    /// finds them? Where those events are the ones these clocks were computed from, in the
    /// same places (`but` aside, whose clock the caller makes again, and which none of them
    /// may follow): none of their clocks counts an event past `lens` (a source left out, a
    /// join of a thread cut shorter). As a thread's clocks only grow along it, its last
    /// event's says it for all.
    pub(super) fn serve(&self, h: &Graph, lens: &[usize], but: Option<EventId>) -> bool {
        if lens.len() != self.threads || h.threads.len() != self.threads {
            return false;
        }
        lens.iter().enumerate().all(|(t, &n)| {
            let last = match but {
                Some(b) if b.thread as usize == t && b.index as usize + 1 == n => n - 1,
                _ => n,
            };
            if n > self.lens[t] || last == 0 {
                return n <= self.lens[t];
            }
            let clock = self.clock(EventId {
                thread: t as u32,
                index: last as u32 - 1,
            });
            (clock.iter().zip(lens)).all(|(&c, &n)| c as usize <= n)
                && but.is_none_or(|b| clock[b.thread as usize] <= b.index)
        })
    }
}

/// The clocks of every event of a graph, computed when first asked for: what the checks of
/// one write's revisits share (the graph does not change while they run).
pub struct GraphClocks<'g> {
    g: &'g Graph,
    clocks: OnceCell<Option<Clocks>>,
}

impl<'g> GraphClocks<'g> {
    pub fn new(g: &'g Graph) -> GraphClocks<'g> {
        GraphClocks {
            g,
            clocks: OnceCell::new(),
        }
    }

    /// The graph they are of.
    pub fn graph(&self) -> &'g Graph {
        self.g
    }

    /// `None` when happens-before has a cycle.
    pub(super) fn get(&self) -> Option<&Clocks> {
        self.clocks.get_or_init(|| Clocks::whole(self.g)).as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::StoreBytes;
    use crate::graph::Label;

    fn write(addr: u64) -> Label {
        Label::Write {
            addr,
            size: 4,
            bytes: StoreBytes::new(),
        }
    }

    fn read(addr: u64, rf: Option<EventId>) -> Label {
        Label::Read { addr, size: 4, rf }
    }

    /// Main spawns two threads: the first writes x and y, the second reads y (from the first)
    /// and then x; main joins the second.
    fn message_passing() -> (Graph, [EventId; 5]) {
        let mut g = Graph::default();
        let main = g.add_thread(None);
        g.push(main, Label::Start, 0, 0);
        let s1 = g.push(main, Label::Spawn { child: 1 }, 0, 0);
        let t1 = g.add_thread(Some(s1));
        let s2 = g.push(main, Label::Spawn { child: 2 }, 0, 0);
        let t2 = g.add_thread(Some(s2));
        g.push(t1, Label::Start, 0, 0);
        let wx = g.push(t1, write(0x100), 0, 0);
        let wy = g.push(t1, write(0x200), 0, 0);
        g.push(t2, Label::Start, 0, 0);
        let ry = g.push(t2, read(0x200, Some(wy)), 0, 0);
        let rx = g.push(t2, read(0x100, None), 0, 0);
        let join = g.push(main, Label::Join { child: t2 }, 0, 0);
        (g, [wx, wy, ry, rx, join])
    }

    #[test]
    fn a_scope_is_served_the_whole_graphs_clocks_only_where_they_are_its_own() {
        let (g, [wx, wy, ry, rx, join]) = message_passing();
        let whole = Clocks::whole(&g).unwrap();
        assert_eq!(whole.clock(rx), &[3, 3, 3]);
        assert_eq!(whole.clock(join), &[4, 3, 3]);
        let lens = |l: [usize; 3]| -> SmallVec<[usize; 16]> { l.into_iter().collect() };
        // every event, and one cut where no source is left out: its own clocks
        for l in [[4, 3, 3], [3, 3, 3], [3, 2, 1], [2, 0, 0]] {
            assert!(whole.serve(&g, &lens(l), None), "{l:?}");
            let own = Clocks::of(&g, lens(l)).unwrap();
            for (t, &n) in l.iter().enumerate() {
                for index in 0..n as u32 {
                    let e = EventId {
                        thread: t as u32,
                        index,
                    };
                    assert_eq!(whole.clock(e), own.clock(e), "{e:?} of {l:?}");
                }
            }
        }
        // the read of y without the write it reads (and a join without all of the thread it
        // joins): there the whole graph's clocks count what is left out
        assert!(!whole.serve(&g, &lens([3, 2, 3]), None));
        assert_ne!(
            whole.clock(ry),
            Clocks::of(&g, lens([3, 2, 3])).unwrap().clock(ry)
        );
        assert!(!whole.serve(&g, &lens([4, 3, 2]), None));
        // a read given another source: nothing kept may follow it
        assert!(whole.serve(&g, &lens([3, 3, 3]), Some(rx)));
        assert!(!whole.serve(&g, &lens([3, 3, 3]), Some(ry)));
        assert!(whole.serve(&g, &lens([3, 3, 2]), Some(ry)));
        let mut h = whole.clone();
        h.reread(ry, None);
        assert_eq!(h.clock(ry), &[3, 0, 2]);
        h.reread(rx, Some(wx));
        assert_eq!(h.clock(rx), &[3, 2, 3]);
        assert_eq!(whole.clock(wy), &[2, 3, 0]);
    }
}
