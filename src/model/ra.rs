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
use crate::graph::{EventId, Graph, Label, Relation};
use smallvec::SmallVec;

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
        let Some(scope) = Scope::whole(g) else {
            return false;
        };
        scope
            .by_location()
            .each()
            .all(|(_, accesses)| scope.coherence_of(accesses).is_some())
    }

    /// Happens-before changes for `e` alone (it has no successor, or only reads of its
    /// location that read from it), so coherence changes at its location alone.
    fn consistent_after(&self, g: &Graph, e: EventId) -> bool {
        let Some(addr) = g.label(e).location() else {
            return self.consistent(g);
        };
        let quick = Scope::whole(g).is_some_and(|s| s.coherence_of(s.accesses(addr)).is_some());
        if cfg!(test) {
            assert_eq!(
                quick,
                self.consistent(g),
                "consistency after {e:?} at {addr:#x}"
            );
        }
        quick
    }

    /// One happens-before scope for all of them ([`sources_in_one_scope`]).
    fn consistent_sources(
        &self,
        g: &Graph,
        e: EventId,
        sources: &[Option<EventId>],
    ) -> Option<Vec<bool>> {
        matches!(g.label(e), Label::Read { .. })
            .then(|| sources_in_one_scope(g, e, sources, false))
            .flatten()
    }

    /// As for a read's sources: an update with no successor, its write the last of its thread.
    fn consistent_update_sources(
        &self,
        g: &Graph,
        e: EventId,
        sources: &[Option<EventId>],
    ) -> Option<Vec<bool>> {
        matches!(g.label(e), Label::Read { .. } | Label::Update { .. })
            .then(|| sources_in_one_scope(g, e, sources, true))
            .flatten()
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

    /// Of the writes no other must follow in coherence order, the first in the graph's order of
    /// events (thread, then program order): an order no revisit changes. Not the one added
    /// last: a revisit drops writes that are added again later, so a graph whose read had to
    /// read the other of two such writes to be revisited was reached by no exploration. (The
    /// first rather than the last: either reaches every weak trace once; the first deals
    /// sigma's tree round `--shard`s more evenly.)
    fn latest_write(
        &self,
        g: &Graph,
        addr: u64,
        within: &dyn Fn(EventId) -> bool,
        except: Option<EventId>,
    ) -> Option<EventId> {
        let lens = Scope::lens(g, within);
        if let Some(last) = sole_writer_last(g, addr, &lens, except) {
            // (checked against the general way wherever the tests explore)
            if cfg!(test) {
                let general =
                    Scope::of(g, within, except, lens.clone()).and_then(|s| s.latest(addr));
                assert_eq!(general, last, "the latest write of one writer thread");
            }
            return last;
        }
        Scope::of(g, within, except, lens)?.latest(addr)
    }

    /// One happens-before scope for all of them.
    fn latest_writes(&self, g: &Graph, addrs: &[u64]) -> Vec<Option<EventId>> {
        let mut latest = vec![None; addrs.len()];
        if let Some(scope) = Scope::whole(g) {
            for (addr, accesses) in scope.by_location().each() {
                if let Ok(i) = addrs.binary_search(&addr) {
                    latest[i] = scope.latest_of(accesses);
                }
            }
        }
        latest
    }
}

/// Which of `sources` read `e` (an update reading from them, with `update`) keeps `g`
/// consistent, in one happens-before scope: `e` has no successor, so its clock alone depends
/// on its source, and coherence at its location alone changes.
fn sources_in_one_scope(
    g: &Graph,
    e: EventId,
    sources: &[Option<EventId>],
    update: bool,
) -> Option<Vec<bool>> {
    let addr = g.label(e).location()?;
    let mut scope = Scope::whole(g)?;
    let ok = sources.iter().map(|&w| {
        scope.reread(e, w, update);
        scope.coherence_of(scope.accesses(addr)).is_some()
    });
    Some(ok.collect())
}

/// Where every write to `addr` among the first `lens` events of each thread (but `except`)
/// is of one thread, and none an update, the latest: program order is in happens-before, so
/// coherence follows it and the last of them is the only one no other must follow (none
/// written: the initial value), where the location has a consistent order. It has one but
/// where an update reads what it may not (the engine revisits from an update's every
/// source, and from a source another update took): `None` where an update is in scope, or
/// several threads write there (their clocks decide).
fn sole_writer_last(
    g: &Graph,
    addr: u64,
    lens: &[usize],
    except: Option<EventId>,
) -> Option<Option<EventId>> {
    let mut last = None;
    for e in g.events_at(addr) {
        if (e.index as usize) >= lens[e.thread as usize] {
            continue;
        }
        match g.label(e) {
            Label::Update { .. } => return None,
            label if !label.writes() || Some(e) == except => continue,
            _ => {}
        }
        match last {
            Some(EventId { thread, .. }) if thread != e.thread => return None,
            _ => last = Some(e),
        }
    }
    Some(last)
}

/// The events of a graph in scope, with their happens-before clocks.
struct Scope<'a> {
    g: &'a Graph,
    within: &'a dyn Fn(EventId) -> bool,
    /// An update whose write is not counted (not added yet), only its read.
    read_only: Option<EventId>,
    /// A read taken as reading from another source than its label's, and as an update or
    /// not ([`Scope::reread`]).
    reread: Option<(EventId, Option<EventId>, bool)>,
    /// How many events of each thread are in scope (a prefix of each).
    lens: SmallVec<[usize; 16]>,
    /// Where each thread's clocks begin in `clocks`.
    offsets: SmallVec<[usize; 16]>,
    /// Per event in scope, `threads` counts: how many events of each thread happen before it
    /// or are it.
    clocks: Vec<u32>,
    threads: usize,
}

impl<'a> Scope<'a> {
    /// Every event of `g`: `None` when happens-before has a cycle.
    fn whole(g: &'a Graph) -> Option<Scope<'a>> {
        let lens = g.threads.iter().map(|evs| evs.len()).collect();
        Scope::of(g, &|_| true, None, lens)
    }

    /// How many events of each thread of `g` are before its first one not `within`.
    fn lens(g: &Graph, within: &dyn Fn(EventId) -> bool) -> SmallVec<[usize; 16]> {
        g.threads
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
            .collect()
    }

    fn of(
        g: &'a Graph,
        within: &'a dyn Fn(EventId) -> bool,
        read_only: Option<EventId>,
        lens: SmallVec<[usize; 16]>,
    ) -> Option<Scope<'a>> {
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
            reread: None,
            lens,
            offsets,
            clocks,
            threads,
        })
    }

    /// Takes read `e`, which no event in scope follows, as reading from `w` (an update reading
    /// from it, with `update`): only its own clock changes.
    fn reread(&mut self, e: EventId, w: Option<EventId>, update: bool) {
        let threads = self.threads;
        let at = (self.offsets[e.thread as usize] + e.index as usize) * threads;
        if e.index > 0 {
            self.clocks.copy_within(at - threads..at, at);
        } else {
            self.clocks[at..at + threads].fill(0);
        }
        if let Some(w) = w.filter(|&w| self.in_scope(w)) {
            let from = (self.offsets[w.thread as usize] + w.index as usize) * threads;
            for k in 0..threads {
                self.clocks[at + k] = self.clocks[at + k].max(self.clocks[from + k]);
            }
        }
        self.clocks[at + e.thread as usize] = e.index + 1;
        self.reread = Some((e, w, update));
    }

    fn in_scope(&self, e: EventId) -> bool {
        (e.index as usize) < self.lens[e.thread as usize]
    }

    /// How many events of each thread happen before `e` (in scope) or are it.
    fn clock(&self, e: EventId) -> &[u32] {
        let at = (self.offsets[e.thread as usize] + e.index as usize) * self.threads;
        &self.clocks[at..at + self.threads]
    }

    /// Of the writes to `addr` no other must follow in coherence order, the first in the
    /// graph's order ([`Ra::latest_write`]).
    fn latest(&self, addr: u64) -> Option<EventId> {
        self.latest_of(self.accesses(addr))
    }

    fn latest_of(&self, accesses: impl IntoIterator<Item = EventId>) -> Option<EventId> {
        let last = self.coherence_of(accesses)?;
        last.into_iter().min()
    }

    /// The events in scope that access `addr`, thread by thread in program order.
    fn accesses(&self, addr: u64) -> impl Iterator<Item = EventId> + '_ {
        (self.g.events_at(addr)).filter(|&e| self.in_scope(e))
    }

    /// The events in scope that access memory, by location.
    fn by_location(&self) -> ByLocation {
        let g = self.g;
        let mut all: Vec<(u64, EventId)> = Vec::new();
        for (t, &n) in self.lens.iter().enumerate() {
            for (i, ev) in g.threads[t][..n].iter().enumerate() {
                if let (false, Some(addr)) = (ev.hole, ev.label.location()) {
                    let e = EventId {
                        thread: t as u32,
                        index: i as u32,
                    };
                    all.push((addr, e));
                }
            }
        }
        all.sort_unstable();
        ByLocation(all)
    }

    /// Checks the coherence order of a location some consistent order has, from its events in
    /// scope (`accesses`): `None` if there is none, else the writes no other must follow
    /// (none: the initial value).
    fn coherence_of(&self, accesses: impl IntoIterator<Item = EventId>) -> Option<Vec<EventId>> {
        let g = self.g;
        let mut writes = SmallVec::new();
        // reads with their source (None: the initial value), sources in scope only, and
        // whether each is an update
        let mut reads: SmallVec<[(EventId, Option<EventId>, bool); 16]> = SmallVec::new();
        for e in accesses {
            let label = g.label(e);
            let (rf, writes_too, update) = match self.reread {
                Some((r, w, update)) if r == e => (Some(w), update, update),
                _ => (
                    label.rf(),
                    label.writes(),
                    matches!(label, Label::Update { .. }),
                ),
            };
            if writes_too && Some(e) != self.read_only {
                writes.push(e);
            }
            if let Some(rf) = rf {
                if rf.is_none_or(|w| self.in_scope(w) && (self.within)(w)) {
                    reads.push((e, rf, update));
                }
            }
        }
        forced_coherence(self, writes, &reads)
    }
}

/// Events by location, sorted: each location's thread by thread in program order.
struct ByLocation(Vec<(u64, EventId)>);

impl ByLocation {
    /// Each location with its events.
    fn each(&self) -> impl Iterator<Item = (u64, impl Iterator<Item = EventId> + '_)> + '_ {
        self.0
            .chunk_by(|a, b| a.0 == b.0)
            .map(|run| (run[0].0, run.iter().map(|&(_, e)| e)))
    }
}

/// The coherence edges every consistent order of a location must have (node 0: the initial
/// value, i + 1: `writes[i]`); `None` if they have a cycle, else the writes no other must
/// follow. As happens-before holds reads-from, CoRW and CoRR follow from CoWW and CoWR
/// (`w rf r1 hb r2` is `w hb r2`), and CoWW and CoWR need only, per thread, the latest write
/// that happens before: the earlier ones reach it in program order. `writes` are thread by
/// thread in program order.
fn forced_coherence(
    scope: &Scope,
    writes: SmallVec<[EventId; 16]>,
    reads: &[(EventId, Option<EventId>, bool)],
) -> Option<Vec<EventId>> {
    let n = writes.len() + 1;
    let node = |w: Option<EventId>| w.map_or(0, |w| writes.binary_search(&w).unwrap() + 1);
    // per thread, its writes' range in `writes`
    let mut ranges: SmallVec<[(usize, usize); 16]> = SmallVec::from_elem((0, 0), scope.threads);
    for (i, w) in writes.iter().enumerate() {
        let r = &mut ranges[w.thread as usize];
        if r.1 == 0 {
            r.0 = i;
        }
        r.1 = i + 1;
    }
    // the latest write of each other thread that happens before `e`, and its own thread's
    // latest before it
    let latest_before = |e: EventId, out: &mut SmallVec<[usize; 16]>| {
        out.clear();
        let clock = scope.clock(e);
        for (t, &(lo, hi)) in ranges.iter().enumerate() {
            if hi == lo {
                continue;
            }
            let seen = if t == e.thread as usize {
                e.index
            } else {
                clock[t]
            };
            let k = lo + writes[lo..hi].partition_point(|w| w.index < seen);
            if k > lo {
                out.push(k); // node of writes[k - 1]
            }
        }
    };
    let mut edges: SmallVec<[(usize, usize); 32]> = SmallVec::new();
    let mut before = SmallVec::new();
    for &(lo, hi) in &ranges {
        if hi > lo {
            edges.push((0, lo + 1));
        }
    }
    for (j, &w) in writes.iter().enumerate() {
        latest_before(w, &mut before);
        edges.extend(before.iter().map(|&i| (i, j + 1)));
    }
    let mut updates: SmallVec<[(usize, usize); 8]> = SmallVec::new();
    for &(r, s, update) in reads {
        let sn = node(s);
        latest_before(r, &mut before);
        edges.extend(before.iter().filter(|&&i| i != sn).map(|&i| (i, sn)));
        if update && Some(r) != scope.read_only {
            // an update's write comes after what it read, and nothing between them
            let u = node(Some(r));
            edges.push((sn, u));
            updates.push((u, sn));
        }
    }
    if updates.is_empty() {
        // no atomicity to propagate: the edges as they are, not their closure (a write with
        // no edge out has no successor in the closure either)
        let mut followed: SmallVec<[bool; 16]> = SmallVec::from_elem(false, n);
        for &(a, _) in &edges {
            followed[a] = true;
        }
        if !acyclic(n, &edges) {
            return None;
        }
        let last = (0..writes.len()).filter(|&i| !followed[i + 1]);
        return Some(last.map(|i| writes[i]).collect());
    }
    // (where the edges leave one order, coherence is that order: atomicity is then where
    // each update is, not a closure of every write's successors, a cube of the writes)
    if let Some(order) = only_order(n, &edges) {
        let mut place = vec![0; n];
        for (i, &x) in order.iter().enumerate() {
            place[x] = i;
        }
        if updates.iter().any(|&(u, s)| place[u] != place[s] + 1) {
            return None;
        }
        let last = order[n - 1];
        return Some((last > 0).then(|| writes[last - 1]).into_iter().collect());
    }
    let mut rel = Rel::empty(n);
    edges.iter().for_each(|&(a, b)| rel.add(a, b));
    let last = |rel: &Rel| {
        let last = (0..writes.len()).filter(|&i| rel.succ(i + 1).next().is_none());
        Some(last.map(|i| writes[i]).collect())
    };
    // atomicity: nothing between an update and its source; close transitively until
    // nothing changes
    loop {
        rel = rel.plus();
        if !rel.irreflexive() {
            return None;
        }
        let mut changed = false;
        for &(u, s) in &updates {
            for w in (0..n).filter(|&w| w != u && w != s) {
                if rel.has(s, w) && !rel.has(u, w) {
                    rel.add(u, w);
                    changed = true;
                }
                if rel.has(w, u) && !rel.has(w, s) {
                    rel.add(w, s);
                    changed = true;
                }
            }
        }
        if !changed {
            return last(&rel);
        }
    }
}

/// Do `edges` over nodes `0..n` leave no cycle? (Up to 64 nodes, with a bit per node: most
/// locations have a few writes, and this runs at every consistency check.)
fn acyclic(n: usize, edges: &[(usize, usize)]) -> bool {
    if n > 64 {
        let mut rel = Relation::new(n);
        edges.iter().for_each(|&(a, b)| rel.add(a, b));
        return rel.acyclic();
    }
    let mut preds: SmallVec<[u64; 16]> = SmallVec::from_elem(0, n);
    for &(a, b) in edges {
        preds[b] |= 1 << a;
    }
    // take away the nodes with no predecessor left until none is left, or none can go
    let mut left: u64 = if n == 64 { !0 } else { (1 << n) - 1 };
    while left != 0 {
        let free = (0..n)
            .filter(|&x| left & (1 << x) != 0 && preds[x] & left == 0)
            .fold(0u64, |free, x| free | 1 << x);
        if free == 0 {
            return false;
        }
        left &= !free;
    }
    true
}

/// The one order of nodes `0..n` that keeps `edges`, if they leave exactly one (Kahn's
/// algorithm with a single node free at each step); `None` if they leave several or none.
fn only_order(n: usize, edges: &[(usize, usize)]) -> Option<Vec<usize>> {
    let mut into = vec![0u32; n];
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(a, b) in edges {
        into[b] += 1;
        out[a].push(b);
    }
    let mut free: Vec<usize> = (0..n).filter(|&x| into[x] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(x) = free.pop() {
        if !free.is_empty() {
            return None;
        }
        order.push(x);
        for &y in &out[x] {
            into[y] -= 1;
            if into[y] == 0 {
                free.push(y);
            }
        }
    }
    (order.len() == n).then_some(order)
}
