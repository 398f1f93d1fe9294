//! The POWER model over execution graphs: herd7's `ppc.cat` (Alglave, Maranget, Tautschnig,
//! "Herding cats", TOPLAS 2014), the model behind `../shared/litmus/ppc/expected.tsv`.
//!
//! - uniproc: `acyclic po-loc | rf | fr | co`; atomicity of read-modify-writes;
//! - preserved program order from dependencies (`addr`, `data`, `ctrl`, `ctrlisync`, found in
//!   the machine code: `GraphEvent::deps`) and same-location orders, by the `ii`/`ic`/`ci`/`cc`
//!   fixpoint, `ppo = ii & R*R | ic & R*W`;
//! - fences: `sync` (strong), `lwsync` but from a write to a read, `eieio` between writes;
//! - `acyclic hb` with `hb = ppo | fence | rfe` (no thin air), `acyclic co | prop`
//!   (propagation: cumulativity of the fences) and `irreflexive fre; prop; hb*` (observation).
//!
//! Threads' creation and joining, which herd's tests have no events for (their initial state
//! comes before every thread and their final state after), are strong fences here, and the
//! parent's spawn reaches the child's start (the child's exit the join) as a write reaches a
//! read of another thread (`rfe`): what a thread did before it created one is visible to it,
//! and what a thread did is visible after it is joined.

use rustc_hash::FxHashMap;
use std::cell::RefCell;

use super::relation::{Rel, Set};
use super::{Model, Weakness};
use crate::event::Event;
use crate::graph::{Conditional, EventId, Graph, Label, Order};

pub struct Power;

impl Model for Power {
    fn name(&self) -> &'static str {
        "power"
    }

    fn conflicts(&self, a: &Event, b: &Event) -> bool {
        super::Sc.conflicts(a, b)
    }

    fn fences_visible(&self) -> bool {
        true
    }

    fn graph_only(&self) -> bool {
        true
    }

    fn uses_dependencies(&self) -> bool {
        true
    }

    fn consistent(&self, g: &Graph) -> bool {
        Relations::new(g).consistent()
    }

    fn weakness(&self, g: &Graph) -> Weakness {
        let r = Relations::new(g);
        let (pairs, sc) = r.reorderings();
        Weakness {
            reordered: pairs
                .iter()
                .map(|&(a, c)| (r.ids[a], r.ids[c], r.why_reordered(a, c)))
                .collect(),
            otherwise: (pairs.is_empty() && !sc).then_some(
                "no thread's accesses took effect out of program order, but stores reached the \
                 threads in different orders (a POWER store is not seen by every thread at \
                 once; a sync, or lwsync's cumulativity, orders what follows it after the \
                 stores its thread has seen)",
            ),
        }
    }

    fn porf_cycles(&self) -> bool {
        true
    }

    fn store_conditionals_branch(&self) -> bool {
        true
    }

    /// RSMC's commit-before order (Abdulla, Aronis, Atig, Jonsson, Leonardsson, Sagonas, CAV
    /// 2016), `addr | data | ctrl | addr;po | po-loc | sync | lwsync` within a thread, with
    /// thread creation and joining as `sync`: acyclic with `rf` in every consistent execution,
    /// and holding what an event's existence and values come from (its dependencies).
    fn depends_within(&self, g: &Graph, e: EventId, out: &mut Vec<EventId>) {
        let evs = &g.threads[e.thread as usize];
        let at = |index: usize| EventId {
            thread: e.thread,
            index: index as u32,
        };
        let ev = &evs[e.index as usize];
        let deps = ev.deps();
        out.extend(deps.addr.iter().chain(&deps.data).chain(&deps.ctrl));
        out.extend(&deps.ctrlisync);
        let fence = |l: &Label| {
            matches!(
                l,
                Label::Fence
                    | Label::Lwsync
                    | Label::Spawn { .. }
                    | Label::Start
                    | Label::Exit
                    | Label::Join { .. }
            )
        };
        let location = ev.label.location();
        let before = &evs[..e.index as usize];
        // (a hole's label is the event that was there: its kind of fence and its
        // dependencies are what the event added there again will have; its location may not be)
        // everything before a fence comes before what follows it; an event the analysis
        // cannot tell apart from what came before may depend on all of it
        if fence(&ev.label) || ev.order.is_some_and(|o| o.includes(Order::Release)) || deps.unknown
        {
            out.extend((0..before.len()).filter(|&i| !before[i].hole).map(at));
            return;
        }
        out.extend(&deps.may);
        if let Some(i) = before
            .iter()
            .rposition(|x| fence(&x.label) || x.order.is_some())
        {
            out.push(at(i));
        }
        for (i, x) in before.iter().enumerate() {
            if location.is_some() && !x.hole && x.label.location() == location {
                out.push(at(i));
            }
            out.extend(&x.deps().addr);
        }
    }
}

/// The events the axioms speak of: memory accesses, and threads' creation, start, exit and
/// joining; with the sets the axioms filter by.
struct Relations<'g> {
    g: &'g Graph,
    ids: Vec<EventId>,
    n: usize,
    reads: Set,
    writes: Set,
    /// Per graph thread, its events.
    threads: Vec<Set>,
    /// Per event with a location, the events of that location (an index into `locations`).
    location: Vec<Option<usize>>,
    locations: Vec<Set>,
}

impl<'g> Relations<'g> {
    fn new(g: &'g Graph) -> Relations<'g> {
        let ids: Vec<EventId> = g
            .events()
            .filter(|&e| {
                let l = g.label(e);
                l.access().is_some()
                    || matches!(
                        l,
                        Label::Spawn { .. } | Label::Start | Label::Exit | Label::Join { .. }
                    )
            })
            .collect();
        let n = ids.len();
        let label = |i: usize| g.label(ids[i]);
        let mut threads = vec![Set::empty(n); g.threads.len()];
        let (mut location, mut locations, mut addrs) =
            (Vec::with_capacity(n), Vec::new(), Vec::new());
        for (i, e) in ids.iter().enumerate() {
            threads[e.thread as usize].insert(i);
            location.push(label(i).location().map(|addr| {
                let k = addrs.iter().position(|&a| a == addr).unwrap_or_else(|| {
                    addrs.push(addr);
                    locations.push(Set::empty(n));
                    addrs.len() - 1
                });
                locations[k].insert(i);
                k
            }));
        }
        Relations {
            g,
            reads: Set::of(n, |i| label(i).reads()),
            writes: Set::of(n, |i| label(i).writes()),
            ids,
            n,
            threads,
            location,
            locations,
        }
    }

    fn index(&self, e: EventId) -> Option<usize> {
        self.ids.binary_search(&e).ok()
    }

    fn label(&self, i: usize) -> &Label {
        self.g.label(self.ids[i])
    }

    /// The events of `i`'s thread.
    fn thread_of(&self, i: usize) -> &Set {
        &self.threads[self.ids[i].thread as usize]
    }

    /// The events of `i`'s location, if it has one.
    fn location_of(&self, i: usize) -> Option<&Set> {
        self.location[i].map(|k| &self.locations[k])
    }

    /// The pairs of a thread with an event whose label `is` between them (a hole's too), or
    /// (`at_ends`) with either of them one; program order where every label `is` one.
    fn fenced(&self, is: impl Fn(&Label) -> bool, at_ends: bool) -> Rel {
        let mut r = Rel::empty(self.n);
        let mut i = 0;
        for (t, evs) in self.g.threads.iter().enumerate() {
            // the thread's events so far, and those of them before its latest fence
            let (mut all, mut before_fence) = (Set::empty(self.n), Set::empty(self.n));
            for (index, ev) in evs.iter().enumerate() {
                let fence = is(&ev.label);
                if fence {
                    before_fence = all.clone();
                }
                let e = EventId {
                    thread: t as u32,
                    index: index as u32,
                };
                if self.ids.get(i) != Some(&e) {
                    continue;
                }
                if fence && at_ends {
                    r.add_column(&all, i);
                    before_fence.insert(i);
                } else {
                    r.add_column(&before_fence, i);
                }
                all.insert(i);
                i += 1;
            }
        }
        r
    }

    /// rf, co and fr, with the creation and joining of threads as reads-from (`rf` gets them).
    fn communication(&self) -> (Rel, Rel, Rel) {
        let (mut rf, mut co, mut fr) = (Rel::empty(self.n), Rel::empty(self.n), Rel::empty(self.n));
        let g = self.g;
        for list in g.co.values() {
            let idx: Vec<usize> = list.iter().filter_map(|&w| self.index(w)).collect();
            for (i, &a) in idx.iter().enumerate() {
                for &b in &idx[i + 1..] {
                    co.add(a, b);
                }
            }
        }
        for r in 0..self.n {
            let label = self.label(r);
            if let Some(src) = label.rf() {
                let addr = label.location().expect("a read has a location");
                if let Some(w) = src.and_then(|w| self.index(w)) {
                    rf.add(w, r);
                }
                let list = g.co_of(addr);
                let from = match src {
                    None => 0,
                    Some(w) => g.co_position(w).map_or(list.len(), |p| p + 1),
                };
                for &w in &list[from.min(list.len())..] {
                    if let Some(w) = self.index(w).filter(|&w| w != r) {
                        fr.add(r, w);
                    }
                }
            }
            if matches!(label, Label::Start | Label::Join { .. }) {
                if let Some(p) = g
                    .outside_predecessor(self.ids[r])
                    .and_then(|p| self.index(p))
                {
                    rf.add(p, r);
                }
            }
        }
        (rf, co, fr)
    }

    /// The `addr`, `data`, `ctrl` and `ctrlisync` edges the events carry.
    fn dependencies(&self) -> [Rel; 4] {
        let mut d = [
            Rel::empty(self.n),
            Rel::empty(self.n),
            Rel::empty(self.n),
            Rel::empty(self.n),
        ];
        for b in 0..self.n {
            let deps = &self.g.event(self.ids[b]).deps();
            for (k, list) in [&deps.addr, &deps.data, &deps.ctrl, &deps.ctrlisync]
                .into_iter()
                .enumerate()
            {
                for a in list.iter().filter_map(|&a| self.index(a)) {
                    d[k].add(a, b);
                }
            }
        }
        d
    }

    /// What an `isync` orders: its `ctrlisync` (the reads the branches before it depended on)
    /// before every later event of its thread, also past a return from the isync's function,
    /// where the analysis of each access does not follow (a lock's acquire in a function of its
    /// own). An isync is no event of the axioms: its edges are added here.
    fn ordered_by_isyncs(&self) -> Rel {
        let mut r = Rel::empty(self.n);
        for (t, evs) in self.g.threads.iter().enumerate() {
            for (i, ev) in evs.iter().enumerate() {
                if ev.hole || ev.label.access().is_some() || ev.deps().ctrlisync.is_empty() {
                    continue;
                }
                let later = Set::of(self.n, |b| {
                    self.ids[b].thread as usize == t && self.ids[b].index as usize > i
                });
                for a in ev.deps().ctrlisync.iter().filter_map(|&a| self.index(a)) {
                    r.add_row(a, &later);
                }
            }
        }
        r
    }

    /// `addr;po` through a hole: the access that will be there again has the same address
    /// dependencies.
    fn addr_po_across_holes(&self) -> Rel {
        let mut r = Rel::empty(self.n);
        for (t, evs) in self.g.threads.iter().enumerate() {
            for (h, ev) in evs.iter().enumerate().filter(|(_, ev)| ev.hole) {
                let later = Set::of(self.n, |b| {
                    self.ids[b].thread as usize == t && self.ids[b].index as usize > h
                });
                for a in ev.deps().addr.iter().filter_map(|&a| self.index(a)) {
                    r.add_row(a, &later);
                }
            }
        }
        r
    }

    /// Atomicity of load-reserve/store-conditional pairs (`empty rmw & (fre; coe)`): no other
    /// thread's write comes after the load-reserve's source and before the store-conditional's
    /// write in coherence order.
    fn reservations_held(&self) -> bool {
        let g = self.g;
        g.events().all(|w| {
            let Some(Conditional::Written { reserve }) = g.event(w).conditional else {
                return true;
            };
            let (Some(addr), Some(to)) = (g.label(w).location(), g.co_position(w)) else {
                return true; // not placed yet
            };
            let r = EventId {
                thread: w.thread,
                index: reserve,
            };
            let from = match g.label(r).rf().flatten() {
                None => 0,
                Some(src) => match g.co_position(src) {
                    Some(p) => p + 1,
                    None => return true,
                },
            };
            let list = g.co_of(addr);
            list[from.min(to)..to].iter().all(|x| x.thread == w.thread)
        })
    }

    /// The events whose lock or unlock orders its thread's accesses as `order`.
    fn ordered(&self, order: Order) -> Set {
        Set::of(self.n, |i| {
            self.g
                .event(self.ids[i])
                .order
                .is_some_and(|o| o.includes(order))
        })
    }

    /// Atomicity of updates: each right after its source in coherence order.
    fn updates_atomic(&self) -> bool {
        (0..self.n).all(|i| {
            let Label::Update { rf: src, .. } = self.label(i) else {
                return true;
            };
            let after = src.map_or(Some(0), |w| self.g.co_position(w).map(|p| p + 1));
            after.is_some() && after == self.g.co_position(self.ids[i])
        })
    }

    /// The relations every axiom starts from.
    fn base(&self) -> Base {
        let po = self.fenced(|_| true, false);
        let (rf, co, fr) = self.communication();
        let po_loc = po.within(|a| self.location_of(a));
        let ext = |r: &Rel| r.outside(|a| self.thread_of(a));
        let (rfe, coe, fre) = (ext(&rf), ext(&co), ext(&fr));
        Base {
            po,
            po_loc,
            rf,
            co,
            fr,
            rfe,
            coe,
            fre,
        }
    }

    /// The preserved program order: `ppo = ii & R*R | ic & R*W`, from the dependencies and
    /// the same-location orders by the `ii`/`ic`/`ci`/`cc` fixpoint.
    fn ppo(&self, b: &Base) -> Rel {
        let n = self.n;
        let everything = Set::of(n, |_| true);
        let rfi = b.rf.within(|a| Some(self.thread_of(a)));
        let [addr, data, ctrl, ctrlisync] = self.dependencies();
        let dd = addr.union(&data);
        let rdw = b.po_loc.intersect(&b.fre.then(&b.rfe));
        let detour = b.po_loc.intersect(&b.coe.then(&b.rfe));
        let mut ii0 = dd.union(&rfi);
        ii0.union_with(&rdw);
        // a lock that took its mutex before what follows it (glibc's `isync` after the update)
        let acquired = b.po.between(&self.ordered(Order::Acquire), &everything);
        let mut ci0 = ctrlisync.union(&detour);
        ci0.union_with(&acquired);
        ci0.union_with(&self.ordered_by_isyncs());
        let mut cc0 = dd.union(&b.po_loc);
        cc0.union_with(&ctrl)
            .union_with(&addr.then(&b.po))
            .union_with(&self.addr_po_across_holes());
        // (every relation here is within a thread: each thread's fixpoint on its own events,
        // which are consecutive)
        let (mut ii, mut ic) = (Rel::empty(n), Rel::empty(n));
        let mut lo = 0;
        while lo < n {
            let thread = self.ids[lo].thread;
            let hi = lo
                + self.ids[lo..]
                    .iter()
                    .take_while(|e| e.thread == thread)
                    .count();
            let (i, c) = preserved_memo(ii0.block(lo, hi), ci0.block(lo, hi), cc0.block(lo, hi));
            ii.add_block(lo, &i);
            ic.add_block(lo, &c);
            lo = hi;
        }
        let mut ppo = ii.between(&self.reads, &self.reads);
        ppo.union_with(&ic.between(&self.reads, &self.writes));
        ppo
    }

    /// Does event `a` write and not read (an update does both)?
    fn only_writes(&self, a: usize) -> bool {
        self.writes.contains(a) && !self.reads.contains(a)
    }

    /// Does event `a` read and not write?
    fn only_reads(&self, a: usize) -> bool {
        self.reads.contains(a) && !self.writes.contains(a)
    }

    /// The pairs fences order (`sync`, `lwsync` but from a write to a read — an update, one
    /// event for `lwarx` and `stwcx.`, counts as neither —, `eieio` between writes), and those
    /// `sync` orders (thread creation and joining count as `sync`).
    fn fences(&self, po: &Rel) -> (Rel, Rel) {
        let everything = Set::of(self.n, |_| true);
        let thread_edge = |l: &Label| {
            matches!(
                l,
                Label::Spawn { .. } | Label::Start | Label::Exit | Label::Join { .. }
            )
        };
        let strong = self.fenced(|l| *l == Label::Fence || thread_edge(l), true);
        let mut lwsync = self
            .fenced(|l| *l == Label::Lwsync, false)
            .filter(|a, b| !(self.only_writes(a) && self.only_reads(b)));
        // an unlock after what precedes it (glibc's `lwsync` before the store)
        lwsync.union_with(&po.between(&everything, &self.ordered(Order::Release)));
        let eieio = self
            .fenced(|l| *l == Label::Eieio, false)
            .between(&self.writes, &self.writes);
        let mut fence = strong.union(&lwsync);
        fence.union_with(&eieio);
        (fence, strong)
    }

    fn consistent(&self) -> bool {
        let b = self.base();
        // uniproc
        let mut uniproc = b.po_loc.union(&b.rf);
        uniproc.union_with(&b.fr).union_with(&b.co);
        if !uniproc.acyclic() || !self.reservations_held() || !self.updates_atomic() {
            return false;
        }
        let ppo = self.ppo(&b);
        let (fence, strong) = self.fences(&b.po);
        let mut hb = ppo.union(&fence);
        hb.union_with(&b.rfe);
        let hb_plus = hb.plus();
        if !hb_plus.irreflexive() {
            return false;
        }
        let hb_star = hb_plus.opt();
        let propbase = fence.union(&b.rfe.then(&fence)).then(&hb_star);
        let mut chapo = b.rfe.union(&b.fre);
        chapo
            .union_with(&b.coe)
            .union_with(&b.fre.then(&b.rfe))
            .union_with(&b.coe.then(&b.rfe));
        let mut prop = propbase.between(&self.writes, &self.writes);
        prop.union_with(
            &chapo
                .opt()
                .then(&propbase.star())
                .then(&strong)
                .then(&hb_star),
        );
        b.co.union(&prop).acyclic() && b.fre.then(&prop).then(&hb_star).irreflexive()
    }

    /// The pairs of one thread's accesses to different locations, in program order, that no
    /// dependency or fence keeps in order and that the execution saw the other way round: the
    /// later one reaches the earlier one through other threads' events (a critical cycle, as
    /// Shasha and Snir have them).
    /// With them: is the execution sequentially consistent (`po | com` acyclic)?
    fn reorderings(&self) -> (Vec<(usize, usize)>, bool) {
        let b = self.base();
        let mut preserved = self.ppo(&b);
        preserved.union_with(&self.fences(&b.po).0);
        let preserved = preserved.plus();
        let mut com = b.rf.union(&b.co);
        com.union_with(&b.fr);
        let come = com.outside(|a| self.thread_of(a));
        let mut pairs = Vec::new();
        for (t, mine) in self.threads.iter().enumerate() {
            let others = Set::of(self.n, |i| self.ids[i].thread as usize != t);
            let mut through = b.po.union(&com);
            through = through.between(&others, &others).star();
            let back = come
                .between(mine, &others)
                .then(&through)
                .then(&come.between(&others, mine));
            for a in mine.iter() {
                for c in b.po.succ(a) {
                    let (la, lc) = (self.label(a).location(), self.label(c).location());
                    if la.is_some()
                        && lc.is_some()
                        && la != lc
                        && back.has(c, a)
                        && !preserved.has(a, c)
                    {
                        pairs.push((a, c));
                    }
                }
            }
        }
        (pairs, b.po.union(&com).acyclic())
    }

    /// Why nothing keeps `a` before `c` (program order pair of accesses).
    fn why_reordered(&self, a: usize, c: usize) -> &'static str {
        let (ea, ec) = (self.ids[a], self.ids[c]);
        let between = &self.g.threads[ea.thread as usize][ea.index as usize + 1..ec.index as usize];
        let lwsync = between.iter().any(|ev| ev.label == Label::Lwsync);
        let (write, read) = (self.writes.contains(a), self.reads.contains(c));
        let ctrl = self.g.event(ec).deps().ctrl.contains(&ea);
        if write && read && lwsync {
            "lwsync does not keep a store before a later load (sync does)"
        } else if ctrl && read {
            "a control dependency alone does not keep a later load in order (isync after the branch does)"
        } else if write {
            "no fence between them"
        } else {
            "no dependency or fence between them"
        }
    }
}

/// `preserved`, remembered: a thread's bases recur across the graphs of an exploration (most
/// revisits change other threads), and the fixpoint was the model's largest cost.
fn preserved_memo(ii0: Rel, ci0: Rel, cc0: Rel) -> (Rel, Rel) {
    type Memo = FxHashMap<(Rel, Rel, Rel), (Rel, Rel)>;
    thread_local! {
        static MEMO: RefCell<Memo> = RefCell::new(FxHashMap::default());
    }
    const MEMO_CAP: usize = 1 << 14;
    let key = (ii0, ci0, cc0);
    if let Some(found) = MEMO.with(|m| m.borrow().get(&key).cloned()) {
        return found;
    }
    let value = preserved(&key.0, &key.1, &key.2);
    MEMO.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() >= MEMO_CAP {
            m.clear();
        }
        m.insert(key, value.clone());
    });
    value
}

/// herd's `ii`/`ic`/`ci`/`cc` fixpoint from their bases (`ii0`, `ci0`, `cc0`; `ic0` is empty):
/// `ii` and `ic`.
fn preserved(ii0: &Rel, ci0: &Rel, cc0: &Rel) -> (Rel, Rel) {
    let n = ii0.len();
    let (mut ii, mut ic, mut ci, mut cc) =
        (Rel::empty(n), Rel::empty(n), Rel::empty(n), Rel::empty(n));
    loop {
        let mut ci2 = ci0.union(&ci.then(&ii));
        ci2.union_with(&cc.then(&ci));
        let mut ii2 = ii0.union(&ci2);
        ii2.union_with(&ic.then(&ci2)).union_with(&ii.then(&ii));
        let mut cc2 = cc0.union(&ci2);
        cc2.union_with(&ci2.then(&ic)).union_with(&cc.then(&cc));
        let mut ic2 = ii2.union(&cc2);
        ic2.union_with(&ic.then(&cc2)).union_with(&ii2.then(&ic));
        if (&ii2, &ic2, &ci2, &cc2) == (&ii, &ic, &ci, &cc) {
            return (ii, ic);
        }
        (ii, ic, ci, cc) = (ii2, ic2, ci2, cc2);
    }
}

/// What the axioms start from: program order, the communication relations, and their
/// same-location and external parts.
struct Base {
    po: Rel,
    po_loc: Rel,
    rf: Rel,
    co: Rel,
    fr: Rel,
    rfe: Rel,
    coe: Rel,
    fre: Rel,
}
