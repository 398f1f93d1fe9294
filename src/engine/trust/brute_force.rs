//! Every run of a small program under the operational SC, TSO and PSO semantics (memory;
//! one FIFO store buffer per thread; one buffer per thread and location), each reduced to its
//! reads-from and coherence order: the graphs the graph engine must visit, once each. For the
//! models with no such semantics here, every choice of sources (RA: and whether some coherence
//! order makes it consistent; POWER: with every coherence order, as the model judges it).

use std::collections::BTreeSet;

use crate::event::Op;

/// (thread, index in its script).
type Event = (usize, usize);
/// Per read, its source (`None`: the initial value); per location, its writes in order.
pub type Trace = (Sources, Vec<(u64, Vec<Event>)>);
/// Per read, its source (`None`: the initial value).
pub type Sources = Vec<(Event, Option<Event>)>;

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

/// What each read of a trace reads, keyed as the mock observes it: a store's value, or one
/// more than its source's for a fetch-and-add (the programs' only update), 0 initially.
pub fn values_read(threads: &[Vec<(Op, u64)>], rf: &[(Event, Option<Event>)]) -> Vec<(u32, u64)> {
    fn written(threads: &[Vec<(Op, u64)>], rf: &[(Event, Option<Event>)], w: Event) -> u64 {
        match threads[w.0][w.1] {
            (Op::Rmw { .. }, add) => (read(threads, rf, w) + add) & 0xffff_ffff,
            (_, v) => v,
        }
    }
    fn read(threads: &[Vec<(Op, u64)>], rf: &[(Event, Option<Event>)], r: Event) -> u64 {
        let source = rf.iter().find(|(e, _)| *e == r).and_then(|(_, w)| *w);
        source.map_or(0, |w| written(threads, rf, w))
    }
    let mut out: Vec<(u32, u64)> = rf
        .iter()
        .map(|&(r, _)| (super::super::mock::read_key(r.0, r.1), read(threads, rf, r)))
        .collect();
    out.sort_unstable();
    out
}

/// The word a brute-force program's operation accesses (`None`: a fence).
fn location(op: &Op) -> Option<u64> {
    match *op {
        Op::Load { addr, .. } | Op::Store { addr, .. } | Op::Rmw { addr, .. } => Some(addr.0),
        _ => None,
    }
}

/// How many candidates [`ra_assignments`] may try: per read, the initial value and every
/// other write to its location; with each choice, every coherence order (per location, every
/// order of its writes). Saturating.
pub fn ra_candidates(threads: &[Vec<(Op, u64)>]) -> u64 {
    let ops: Vec<&Op> = threads.iter().flatten().map(|(op, _)| op).collect();
    let writes = |a: u64| {
        (ops.iter())
            .filter(|op| matches!(op, Op::Store { .. } | Op::Rmw { .. }) && location(op) == Some(a))
            .count() as u64
    };
    let sources = ops.iter().filter_map(|op| match op {
        // (an update is one of its location's writes, not its own source)
        Op::Load { addr, .. } => Some(1 + writes(addr.0)),
        Op::Rmw { addr, .. } => Some(writes(addr.0)),
        _ => None,
    });
    let mut locations: Vec<u64> = ops.iter().filter_map(|op| location(op)).collect();
    locations.sort_unstable();
    locations.dedup();
    let orders = locations
        .into_iter()
        .map(|a| (1..=writes(a)).fold(1u64, u64::saturating_mul));
    sources.chain(orders).fold(1u64, u64::saturating_mul)
}

/// Every choice of sources (per read, its source as (thread, index); `None`: the initial
/// value), and whether some coherence order makes it RA-consistent.
#[allow(clippy::type_complexity)]
pub fn ra_assignments(threads: &[Vec<(Op, u64)>]) -> Vec<(Vec<(Event, Option<Event>)>, bool)> {
    let events: Vec<(usize, usize)> = threads
        .iter()
        .enumerate()
        .flat_map(|(t, ops)| (0..ops.len()).map(move |i| (t, i)))
        .collect();
    let op = |e: usize| &threads[events[e].0][events[e].1].0;
    let addr = |e: usize| location(op(e)).expect("not in brute-force programs");
    let reads: Vec<usize> = (0..events.len())
        .filter(|&e| matches!(op(e), Op::Load { .. } | Op::Rmw { .. }))
        .collect();
    let writes: Vec<usize> = (0..events.len())
        .filter(|&e| matches!(op(e), Op::Store { .. } | Op::Rmw { .. }))
        .collect();
    // per read, its possible sources (None: the initial value)
    let choices: Vec<Vec<Option<usize>>> = reads
        .iter()
        .map(|&r| {
            std::iter::once(None)
                .chain(
                    writes
                        .iter()
                        .filter(|&&w| w != r && addr(w) == addr(r))
                        .map(|&w| Some(w)),
                )
                .collect()
        })
        .collect();
    let mut out = Vec::new();
    let mut pick = vec![0usize; reads.len()];
    loop {
        let rf: Vec<(usize, Option<usize>)> = reads
            .iter()
            .zip(&pick)
            .map(|(&r, &k)| (r, choices[reads.iter().position(|&x| x == r).unwrap()][k]))
            .collect();
        let ok = ra_consistent(&events, &writes, &addr, &rf);
        out.push((
            rf.iter()
                .map(|&(r, w)| (events[r], w.map(|w| events[w])))
                .collect(),
            ok,
        ));
        if !advance(&mut pick, |i| choices[i].len()) {
            return out;
        }
    }
}

/// The next combination of `pick` (an odometer: digit i counts up to `len(i)`); false after the
/// last.
fn advance(pick: &mut [usize], len: impl Fn(usize) -> usize) -> bool {
    for (i, digit) in pick.iter_mut().enumerate() {
        *digit += 1;
        if *digit < len(i) {
            return true;
        }
        *digit = 0;
    }
    false
}

fn closure(m: &mut [Vec<bool>]) {
    for k in 0..m.len() {
        let through = m[k].clone();
        for row in m.iter_mut().filter(|row| row[k]) {
            for (x, &y) in row.iter_mut().zip(&through) {
                *x |= y;
            }
        }
    }
}

fn ra_consistent(
    events: &[(usize, usize)],
    writes: &[usize],
    addr: &dyn Fn(usize) -> u64,
    rf: &[(usize, Option<usize>)],
) -> bool {
    let n = events.len();
    let mut hb = vec![vec![false; n]; n];
    for a in 0..n {
        for b in 0..n {
            if events[a].0 == events[b].0 && events[a].1 < events[b].1 {
                hb[a][b] = true;
            }
        }
    }
    for &(r, w) in rf {
        if let Some(w) = w {
            hb[w][r] = true;
        }
    }
    closure(&mut hb);
    if (0..n).any(|i| hb[i][i]) {
        return false;
    }
    // every coherence order: per location, every permutation of its writes
    let mut addrs: Vec<u64> = writes.iter().map(|&w| addr(w)).collect();
    addrs.sort_unstable();
    addrs.dedup();
    let per: Vec<Vec<Vec<usize>>> = addrs
        .iter()
        .map(|&a| permutations(writes.iter().copied().filter(|&w| addr(w) == a).collect()))
        .collect();
    let mut pick = vec![0usize; per.len()];
    loop {
        // position of each write in its location's order
        let mut pos = vec![usize::MAX; n];
        for (l, &k) in pick.iter().enumerate() {
            for (i, &w) in per[l][k].iter().enumerate() {
                pos[w] = i;
            }
        }
        let co = |a: usize, b: usize| addr(a) == addr(b) && pos[a] < pos[b];
        let co_init = |b: usize| pos[b] != usize::MAX; // init before every write
        let mut eco = vec![vec![false; n]; n];
        let mut atomic = true;
        for &a in writes {
            for &b in writes {
                if co(a, b) {
                    eco[a][b] = true;
                }
            }
        }
        for &(r, w) in rf {
            if let Some(w) = w {
                eco[w][r] = true;
            }
            for &x in writes {
                let after = match w {
                    None => co_init(x),
                    Some(w) => co(w, x),
                };
                if after && x != r && addr(x) == addr(r) {
                    eco[r][x] = true; // fr
                                      // atomicity: nothing between an update's source and the update
                    if pos[r] != usize::MAX && co(x, r) {
                        atomic = false;
                    }
                }
            }
        }
        closure(&mut eco);
        let coherent = (0..n).all(|x| (0..n).all(|y| !(hb[x][y] && eco[y][x])) && !eco[x][x]);
        if atomic && coherent {
            return true;
        }
        if !advance(&mut pick, |i| per[i].len()) {
            return false;
        }
    }
}

fn permutations(items: Vec<usize>) -> Vec<Vec<usize>> {
    if items.len() <= 1 {
        return vec![items];
    }
    let mut out = Vec::new();
    for i in 0..items.len() {
        let mut rest = items.clone();
        let x = rest.remove(i);
        for mut p in permutations(rest) {
            p.insert(0, x);
            out.push(p);
        }
    }
    out
}

/// Every execution graph of `threads` (loads, stores, fetch-and-adds, fences) that `model`
/// accepts, tried with every choice of sources and every coherence order of each location:
/// the sources of each (once per coherence order that makes them consistent). For a model
/// with no operational semantics here (POWER). `None` where there are more than `orders`
/// coherence orders to try.
pub fn consistent_graphs(
    threads: &[Vec<(Op, u64)>],
    model: &dyn crate::model::Model,
    orders: usize,
) -> Option<Vec<Sources>> {
    let events: Vec<Event> = threads
        .iter()
        .enumerate()
        .flat_map(|(t, ops)| (0..ops.len()).map(move |i| (t, i)))
        .collect();
    let op = |e: Event| &threads[e.0][e.1].0;
    let addr = |e: Event| location(op(e));
    let reads: Vec<Event> = (events.iter().copied())
        .filter(|&e| matches!(op(e), Op::Load { .. } | Op::Rmw { .. }))
        .collect();
    // each location written, with its writes
    let mut locations: Vec<(u64, Vec<Event>)> = Vec::new();
    for &w in events
        .iter()
        .filter(|&&e| matches!(op(e), Op::Store { .. } | Op::Rmw { .. }))
    {
        let a = addr(w).unwrap();
        match locations.iter_mut().find(|(x, _)| *x == a) {
            Some((_, ws)) => ws.push(w),
            None => locations.push((a, vec![w])),
        }
    }
    let writes = |a: u64| {
        locations
            .iter()
            .find(|(x, _)| *x == a)
            .map_or(&[][..], |(_, ws)| ws)
    };
    let choices: Vec<Vec<Option<Event>>> = reads
        .iter()
        .map(|&r| {
            let others = writes(addr(r).unwrap()).iter().filter(|&&w| w != r);
            std::iter::once(None)
                .chain(others.map(|&w| Some(w)))
                .collect()
        })
        .collect();
    if (locations.iter().flat_map(|(_, ws)| 1..=ws.len())).product::<usize>() > orders {
        return None;
    }
    let orders: Vec<Vec<Vec<usize>>> = (locations.iter())
        .map(|(_, ws)| permutations((0..ws.len()).collect()))
        .collect();
    let mut g = graph_of(threads);
    let mut out = Vec::new();
    let mut sources = vec![0usize; reads.len()];
    loop {
        let rf: Sources = (reads.iter().zip(&sources).zip(&choices))
            .map(|((&r, &k), c)| (r, c[k]))
            .collect();
        set_sources(&mut g, &rf);
        let mut order = vec![0usize; locations.len()];
        loop {
            for (l, (a, ws)) in locations.iter().enumerate() {
                let co = orders[l][order[l]].iter().map(|&i| id(ws[i])).collect();
                g.co.insert(*a, co);
            }
            if model.consistent(&g) {
                out.push(rf.clone());
            }
            if !advance(&mut order, |l| orders[l].len()) {
                break;
            }
        }
        if !advance(&mut sources, |i| choices[i].len()) {
            return Some(out);
        }
    }
}

/// The graph event of an operation of a brute-force program.
fn id((t, i): Event) -> crate::graph::EventId {
    crate::graph::EventId {
        thread: t as u32,
        index: i as u32,
    }
}

/// The events of `threads` (loads, stores, fetch-and-adds, fences) as a graph, each thread
/// created by none, every read of the initial value and no coherence order.
pub fn graph_of(threads: &[Vec<(Op, u64)>]) -> crate::graph::Graph {
    use crate::graph::{Graph, Label};
    let mut g = Graph::default();
    for (t, ops) in threads.iter().enumerate() {
        g.add_thread(None);
        for (op, _) in ops {
            let label = match *op {
                Op::Load { addr, size } => Label::Read {
                    addr: addr.0,
                    size,
                    rf: None,
                },
                Op::Store { addr, size } => Label::Write {
                    addr: addr.0,
                    size,
                    bytes: Default::default(),
                },
                Op::Rmw { addr, size } => Label::Update {
                    addr: addr.0,
                    size,
                    rf: None,
                    bytes: Default::default(),
                },
                ref op => super::step::label_of(op, &[])
                    .ok()
                    .flatten()
                    .expect("a fence has a label"),
            };
            g.push(t as u32, label, 0, 0);
        }
    }
    g
}

/// Gives each read of `g` (from [`graph_of`]) its source in `rf`.
pub fn set_sources(g: &mut crate::graph::Graph, rf: &[(Event, Option<Event>)]) {
    for &(r, w) in rf {
        super::revisit::set_source(g, id(r), w.map(id));
    }
}
