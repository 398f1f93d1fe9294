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

use super::Model;
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
        let deps = &ev.deps;
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
        if fence(&ev.label) || ev.order == Some(Order::Release) {
            // everything before a fence comes before what follows it
            out.extend((0..before.len()).filter(|&i| !before[i].hole).map(at));
            return;
        }
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
            out.extend(&x.deps.addr);
        }
    }
}

/// A relation over the events of one graph, as rows of bits.
#[derive(Clone, PartialEq, Eq)]
struct Rel {
    n: usize,
    rows: Vec<Vec<u64>>,
}

impl Rel {
    fn empty(n: usize) -> Rel {
        Rel {
            n,
            rows: vec![vec![0; n.div_ceil(64).max(1)]; n],
        }
    }
    fn add(&mut self, a: usize, b: usize) {
        self.rows[a][b / 64] |= 1 << (b % 64);
    }
    fn has(&self, a: usize, b: usize) -> bool {
        self.rows[a][b / 64] & (1 << (b % 64)) != 0
    }
    fn union(&self, o: &Rel) -> Rel {
        let mut r = self.clone();
        for (x, y) in r.rows.iter_mut().zip(&o.rows) {
            x.iter_mut().zip(y).for_each(|(a, b)| *a |= b);
        }
        r
    }
    fn filter(&self, keep: impl Fn(usize, usize) -> bool) -> Rel {
        let mut r = Rel::empty(self.n);
        for a in 0..self.n {
            for b in self.succ(a) {
                if keep(a, b) {
                    r.add(a, b);
                }
            }
        }
        r
    }
    fn succ(&self, a: usize) -> impl Iterator<Item = usize> + '_ {
        let row = &self.rows[a];
        (0..self.n).filter(move |&b| row[b / 64] & (1 << (b % 64)) != 0)
    }
    /// `self ; o`
    fn then(&self, o: &Rel) -> Rel {
        let mut r = Rel::empty(self.n);
        for a in 0..self.n {
            for m in self.succ(a) {
                r.rows[a]
                    .iter_mut()
                    .zip(&o.rows[m])
                    .for_each(|(x, y)| *x |= y);
            }
        }
        r
    }
    /// `self+`
    fn plus(&self) -> Rel {
        let mut r = self.clone();
        for k in 0..self.n {
            let rk = r.rows[k].clone();
            for a in 0..self.n {
                if r.has(a, k) {
                    r.rows[a].iter_mut().zip(&rk).for_each(|(x, y)| *x |= y);
                }
            }
        }
        r
    }
    /// `self*`
    fn star(&self) -> Rel {
        let mut r = self.plus();
        (0..self.n).for_each(|a| r.add(a, a));
        r
    }
    /// `self?`
    fn opt(&self) -> Rel {
        let mut r = self.clone();
        (0..self.n).for_each(|a| r.add(a, a));
        r
    }
    fn irreflexive(&self) -> bool {
        (0..self.n).all(|a| !self.has(a, a))
    }
    fn acyclic(&self) -> bool {
        self.plus().irreflexive()
    }
}

/// The events the axioms speak of: memory accesses, and threads' creation, start, exit and
/// joining.
struct Relations<'g> {
    g: &'g Graph,
    ids: Vec<EventId>,
    n: usize,
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
        Relations { g, ids, n }
    }

    fn index(&self, e: EventId) -> Option<usize> {
        self.ids.binary_search(&e).ok()
    }

    fn label(&self, i: usize) -> &Label {
        self.g.label(self.ids[i])
    }

    fn is_read(&self, i: usize) -> bool {
        self.label(i).reads()
    }

    fn is_write(&self, i: usize) -> bool {
        self.label(i).writes()
    }

    fn same_thread(&self, a: usize, b: usize) -> bool {
        self.ids[a].thread == self.ids[b].thread
    }

    /// Program order (the same thread, earlier).
    fn po(&self) -> Rel {
        let mut r = Rel::empty(self.n);
        for a in 0..self.n {
            for b in 0..self.n {
                if self.same_thread(a, b) && self.ids[a].index < self.ids[b].index {
                    r.add(a, b);
                }
            }
        }
        r
    }

    /// Pairs of the same thread with a fence whose label `is` lies between them, or (`at_ends`)
    /// either of which is one.
    fn fenced(&self, is: impl Fn(&Label) -> bool, at_ends: bool) -> Rel {
        let mut r = Rel::empty(self.n);
        for a in 0..self.n {
            for b in 0..self.n {
                let (ea, eb) = (self.ids[a], self.ids[b]);
                if !self.same_thread(a, b) || ea.index >= eb.index {
                    continue;
                }
                let evs = &self.g.threads[ea.thread as usize];
                let between = (ea.index + 1..eb.index).any(|i| is(&evs[i as usize].label));
                let ends = at_ends && (is(self.label(a)) || is(self.label(b)));
                if between || ends {
                    r.add(a, b);
                }
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
            let e = self.ids[r];
            match label {
                Label::Start | Label::Join { .. } => {
                    if let Some(p) = g.outside_predecessor(e).and_then(|p| self.index(p)) {
                        rf.add(p, r);
                    }
                }
                _ => {}
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
            let deps = &self.g.event(self.ids[b]).deps;
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

    /// `addr;po` through a hole: the access that will be there again has the same address
    /// dependencies.
    fn addr_po_across_holes(&self) -> Rel {
        let mut r = Rel::empty(self.n);
        for (t, evs) in self.g.threads.iter().enumerate() {
            for (h, ev) in evs.iter().enumerate().filter(|(_, ev)| ev.hole) {
                for a in ev.deps.addr.iter().filter_map(|&a| self.index(a)) {
                    for b in (0..self.n).filter(|&b| {
                        self.ids[b].thread as usize == t && self.ids[b].index as usize > h
                    }) {
                        r.add(a, b);
                    }
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

    /// How a lock or unlock orders its thread's accesses.
    fn order(&self, i: usize) -> Option<Order> {
        self.g.event(self.ids[i]).order
    }

    fn consistent(&self) -> bool {
        let n = self.n;
        let po = self.po();
        let (rf, co, fr) = self.communication();
        let same_loc = |a: usize, b: usize| {
            let (la, lb) = (self.label(a).location(), self.label(b).location());
            la.is_some() && la == lb
        };
        let po_loc = po.filter(same_loc);
        // uniproc
        if !po_loc.union(&rf).union(&fr).union(&co).acyclic() {
            return false;
        }
        if !self.reservations_held() {
            return false;
        }
        // atomicity: an update right after its source in coherence order
        for i in 0..n {
            if let Label::Update { rf: src, .. } = self.label(i) {
                let e = self.ids[i];
                let after = src.map_or(Some(0), |w| self.g.co_position(w).map(|p| p + 1));
                if after.is_none() || after != self.g.co_position(e) {
                    return false;
                }
            }
        }
        let ext = |a: usize, b: usize| !self.same_thread(a, b);
        let int = |a: usize, b: usize| self.same_thread(a, b);
        let rfe = rf.filter(ext);
        let rfi = rf.filter(int);
        let coe = co.filter(ext);
        let fre = fr.filter(ext);
        let [addr, data, ctrl, ctrlisync] = self.dependencies();
        let dd = addr.union(&data);
        let (fre_rfe, coe_rfe) = (fre.then(&rfe), coe.then(&rfe));
        let rdw = po_loc.filter(|a, b| fre_rfe.has(a, b));
        let detour = po_loc.filter(|a, b| coe_rfe.has(a, b));
        let ii0 = dd.union(&rfi).union(&rdw);
        // a lock that took its mutex before what follows it (glibc's `isync` after the update)
        let acquired = po.filter(|a, _| self.order(a) == Some(Order::Acquire));
        let ci0 = ctrlisync.union(&detour).union(&acquired);
        let cc0 = dd
            .union(&po_loc)
            .union(&ctrl)
            .union(&addr.then(&po))
            .union(&self.addr_po_across_holes());
        let (mut ii, mut ic, mut ci, mut cc) =
            (Rel::empty(n), Rel::empty(n), Rel::empty(n), Rel::empty(n));
        loop {
            let ci2 = ci0.union(&ci.then(&ii)).union(&cc.then(&ci));
            let ii2 = ii0.union(&ci2).union(&ic.then(&ci2)).union(&ii.then(&ii));
            let cc2 = cc0.union(&ci2).union(&ci2.then(&ic)).union(&cc.then(&cc));
            let ic2 = ii2.union(&cc2).union(&ic.then(&cc2)).union(&ii2.then(&ic));
            if (&ii2, &ic2, &ci2, &cc2) == (&ii, &ic, &ci, &cc) {
                break;
            }
            (ii, ic, ci, cc) = (ii2, ic2, ci2, cc2);
        }
        let ppo = ii
            .filter(|a, b| self.is_read(a) && self.is_read(b))
            .union(&ic.filter(|a, b| self.is_read(a) && self.is_write(b)));
        let thread_edge = |l: &Label| {
            matches!(
                l,
                Label::Spawn { .. } | Label::Start | Label::Exit | Label::Join { .. }
            )
        };
        let strong = self.fenced(|l| *l == Label::Fence || thread_edge(l), true);
        let lwsync = self
            .fenced(|l| *l == Label::Lwsync, false)
            .filter(|a, b| !(self.is_write(a) && self.is_read(b)))
            // an unlock after what precedes it (glibc's `lwsync` before the store)
            .union(&po.filter(|_, b| self.order(b) == Some(Order::Release)));
        let eieio = self
            .fenced(|l| *l == Label::Eieio, false)
            .filter(|a, b| self.is_write(a) && self.is_write(b));
        let fence = strong.union(&lwsync).union(&eieio);
        let hb = ppo.union(&fence).union(&rfe);
        if !hb.acyclic() {
            return false;
        }
        let hb_star = hb.star();
        let propbase = fence.union(&rfe.then(&fence)).then(&hb_star);
        let chapo = rfe.union(&fre).union(&coe).union(&fre_rfe).union(&coe_rfe);
        let prop = propbase
            .filter(|a, b| self.is_write(a) && self.is_write(b))
            .union(
                &chapo
                    .opt()
                    .then(&propbase.star())
                    .then(&strong)
                    .then(&hb_star),
            );
        co.union(&prop).acyclic() && fre.then(&prop).then(&hb_star).irreflexive()
    }
}
