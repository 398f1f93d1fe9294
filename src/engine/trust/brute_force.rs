//! Every run of a small program under the operational SC, TSO and PSO semantics (memory;
//! one FIFO store buffer per thread; one buffer per thread and location), each reduced to its
//! reads-from and coherence order: the graphs the graph engine must visit, once each.

use std::collections::BTreeSet;

use crate::event::Op;

/// (thread, index in its script).
type Event = (usize, usize);
/// Per read, its source (`None`: the initial value); per location, its writes in order.
pub type Trace = (Vec<(Event, Option<Event>)>, Vec<(u64, Vec<Event>)>);

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Semantics {
    Sc,
    Tso,
    Pso,
}

#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
struct State {
    pc: Vec<usize>,
    buffers: Vec<Vec<(u64, Event)>>,
    rf: Vec<(Event, Option<Event>)>,
    co: Vec<(u64, Vec<Event>)>,
}

impl State {
    fn last(&self, addr: u64) -> Option<Event> {
        self.co
            .iter()
            .find(|(a, _)| *a == addr)
            .and_then(|(_, l)| l.last().copied())
    }

    fn reach_memory(&mut self, addr: u64, e: Event) {
        match self.co.iter_mut().find(|(a, _)| *a == addr) {
            Some((_, l)) => l.push(e),
            None => {
                self.co.push((addr, vec![e]));
                self.co.sort();
            }
        }
    }
}

/// The distinct traces of every run of `threads` (loads, stores, fetch-and-adds, full fences).
pub fn traces(threads: &[Vec<(Op, u64)>], sem: Semantics) -> BTreeSet<Trace> {
    let init = State {
        pc: vec![0; threads.len()],
        buffers: vec![Vec::new(); threads.len()],
        rf: Vec::new(),
        co: Vec::new(),
    };
    let mut out = BTreeSet::new();
    visit(threads, sem, init, &mut BTreeSet::new(), &mut out);
    out
}

fn visit(
    threads: &[Vec<(Op, u64)>],
    sem: Semantics,
    s: State,
    seen: &mut BTreeSet<State>,
    out: &mut BTreeSet<Trace>,
) {
    let mut key = s.clone();
    key.rf.sort();
    if !seen.insert(key) {
        return;
    }
    let done = (0..threads.len()).all(|t| s.pc[t] == threads[t].len() && s.buffers[t].is_empty());
    if done {
        let mut rf = s.rf.clone();
        rf.sort();
        out.insert((rf, s.co.clone()));
        return;
    }
    for t in 0..threads.len() {
        if s.pc[t] < threads[t].len() {
            let e = (t, s.pc[t]);
            let mut n = s.clone();
            n.pc[t] += 1;
            let ok = match threads[t][s.pc[t]].0 {
                Op::Load { addr, .. } => {
                    let own = s.buffers[t].iter().rev().find(|(a, _)| *a == addr.0);
                    n.rf.push((e, own.map(|&(_, w)| w).or(s.last(addr.0))));
                    true
                }
                Op::Store { addr, .. } => {
                    if sem == Semantics::Sc {
                        n.reach_memory(addr.0, e);
                    } else {
                        n.buffers[t].push((addr.0, e));
                    }
                    true
                }
                Op::Rmw { addr, .. } => {
                    n.rf.push((e, s.last(addr.0)));
                    n.reach_memory(addr.0, e);
                    s.buffers[t].is_empty()
                }
                Op::Fence { .. } => s.buffers[t].is_empty(),
                _ => unreachable!("not in brute-force programs"),
            };
            if ok {
                visit(threads, sem, n, seen, out);
            }
        }
        for i in 0..s.buffers[t].len() {
            let (addr, w) = s.buffers[t][i];
            let first_for_addr = !s.buffers[t][..i].iter().any(|(a, _)| *a == addr);
            if (i == 0 || sem == Semantics::Pso) && first_for_addr {
                let mut n = s.clone();
                n.buffers[t].remove(i);
                n.reach_memory(addr, w);
                visit(threads, sem, n, seen, out);
            }
        }
    }
}
