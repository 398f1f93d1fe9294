//! The graph engine's branching: the sources a read may read from, the places a write may
//! take in coherence order, and the reads a new write revisits, where the revisit is the one
//! way to reach its graph (what it drops was added maximally).

use crate::graph::{Conditional, EventId, Graph, Label, Prefix};
use crate::model::Model;

use super::Trust;

impl Trust<'_> {
    /// `g` with update `e` reading from each write it may, each consistent, right after its
    /// source in coherence order. Second, its graphs reading from a write that another update
    /// reads from: inconsistent, but a revisit of the other update makes them whole.
    pub(super) fn update_sources(
        &self,
        g: &Graph,
        e: EventId,
        addr: u64,
    ) -> (Vec<Graph>, Vec<Graph>) {
        let (mut options, mut taken) = (Vec::new(), Vec::new());
        for w in sources_of(g, e, addr) {
            let mut h = g.clone();
            match h.label_mut(e) {
                Label::Update { rf, .. } => *rf = w,
                _ => unreachable!("update_sources is for updates"),
            }
            if self.model.enumerates_coherence() {
                let at = w.map_or(0, |w| h.co_position(w).unwrap() + 1);
                h.place(e, at);
            }
            if self.model.consistent(&h) {
                options.push(h);
            } else if g
                .events()
                .any(|u| matches!(g.label(u), Label::Update { rf, .. } if *rf == w))
            {
                taken.push(h);
            }
        }
        (options, taken)
    }

    /// The source read `e` takes in this execution: the last of `candidates` it may
    /// consistently read from, with its index (the graphs of those before it are
    /// [`Trust::with_source`]'s, made while the program runs on).
    pub(super) fn last_source(
        &self,
        g: &Graph,
        e: EventId,
        candidates: &[Option<EventId>],
    ) -> Option<(usize, Graph)> {
        candidates
            .iter()
            .enumerate()
            .rev()
            .find_map(|(k, &w)| self.with_source(g, e, w).map(|h| (k, h)))
    }

    /// `g` with read `e` reading from `w` (None: the initial value), if that is consistent.
    pub(super) fn with_source(&self, g: &Graph, e: EventId, w: Option<EventId>) -> Option<Graph> {
        let mut h = g.clone();
        match h.label_mut(e) {
            Label::Read { rf, .. } => *rf = w,
            _ => unreachable!("with_source is for plain reads"),
        }
        self.model.consistent(&h).then_some(h)
    }

    /// `g` with write `e` at each consistent place in its location's coherence order.
    pub(super) fn placements(&self, g: &Graph, e: EventId, addr: u64) -> Vec<Graph> {
        if !self.model.enumerates_coherence() {
            // a write keeps a weak trace consistent
            return vec![g.clone()];
        }
        let mut options = Vec::new();
        for at in coherence_floor(g, e, addr)..=g.co_of(addr).len() {
            let mut h = g.clone();
            h.place(e, at);
            if self.model.consistent(&h) {
                options.push(h);
            }
        }
        options
    }

    /// Write (or update) `a`, just added to `g`, revisits each read of its location that
    /// does not precede it, where what the revisit drops was added maximally.
    pub(super) fn revisits(&mut self, g: &Graph, a: EventId) {
        let addr = g.label(a).location().expect("a write has a location");
        let prefix = if self.model.porf_cycles() {
            g.prefix(a, &|g, e, out| self.model.depends_within(g, e, out))
        } else {
            g.porf_prefix(a)
        };
        let reads: Vec<EventId> = g
            .events()
            .filter(|&r| {
                r != a
                    && g.label(r).reads()
                    && g.label(r).location() == Some(addr)
                    && !prefix.contains(r)
            })
            .collect();
        for r in reads {
            if !maximal(self.model, g, r, a, &prefix) {
                continue;
            }
            let stamp = g.event(r).stamp;
            let mut keep = prefix.clone();
            if self.model.porf_cycles() {
                for e in g.events().filter(|&e| g.event(e).stamp <= stamp) {
                    keep.insert(e);
                }
            } else {
                // (each thread's events added in program order: a prefix of each)
                for (t, evs) in g.threads.iter().enumerate() {
                    let early = evs.iter().take_while(|ev| ev.stamp <= stamp).count();
                    keep.insert_first(t as u32, early as u32);
                }
            }
            let mut h = g.clone();
            h.restrict(&keep);
            match h.label_mut(r) {
                Label::Read { rf, .. } | Label::Update { rf, .. } => *rf = Some(a),
                _ => unreachable!(),
            }
            let update = h.label(r).writes() && self.model.enumerates_coherence();
            if update {
                h.unplace(r);
            }
            // a lock that now finds its mutex taken did not take it: a read (it waits)
            let waits = self.lock_finds_taken(&mut h, r, a);
            let update = update && !waits;
            // the write's places in coherence order (an update's is next to its source), the
            // revisited update right after it
            let positions = if matches!(g.label(a), Label::Update { .. })
                || !self.model.enumerates_coherence()
            {
                vec![None]
            } else {
                h.unplace(a);
                (coherence_floor(&h, a, addr)..=h.co_of(addr).len())
                    .map(Some)
                    .collect()
            };
            for at in positions {
                let mut p = h.clone();
                if let Some(at) = at {
                    p.place(a, at);
                }
                if update {
                    let after = p.co_position(a).unwrap() + 1;
                    p.place(r, after);
                }
                if self.model.consistent(&p) {
                    self.todo.push(p);
                }
            }
        }
    }
}

/// The first place in `addr`'s coherence order that write `w` may take in any model with
/// coherence per location (`po-loc | rf | fr | co` acyclic): after its thread's earlier writes
/// there and the writes its thread's earlier reads there read from.
fn coherence_floor(g: &Graph, w: EventId, addr: u64) -> usize {
    let evs = &g.threads[w.thread as usize][..w.index as usize];
    let before = evs
        .iter()
        .enumerate()
        .filter(|(_, ev)| !ev.hole && ev.label.location() == Some(addr))
        .filter_map(|(i, ev)| {
            let mine = EventId {
                thread: w.thread,
                index: i as u32,
            };
            let write = ev.label.writes().then_some(mine);
            let read = ev.label.rf().flatten();
            let at = |x: Option<EventId>| x.and_then(|x| g.co_position(x)).map(|p| p + 1);
            at(write).max(at(read))
        });
    before.max().unwrap_or(0)
}

/// Were `r` and every event added after it that `a` does not depend on (in `prefix`) added
/// maximally? A read reads from the latest write (as the model counts it) among those added
/// before it or in the prefix; a write is the latest of them in coherence order, where the
/// model has one, and nothing added before it reads from it (it revisited nothing that stays).
fn maximal(model: &dyn Model, g: &Graph, r: EventId, a: EventId, prefix: &Prefix) -> bool {
    let stamp = g.event(r).stamp;
    g.events()
        .filter(|&e| e == r || (g.event(e).stamp > stamp && !prefix.contains(e)))
        .all(|e| added_maximally(model, g, e, a, prefix))
}

fn added_maximally(model: &dyn Model, g: &Graph, e: EventId, a: EventId, prefix: &Prefix) -> bool {
    let stamp = g.event(e).stamp;
    let previous = |x: EventId| g.event(x).stamp <= stamp || prefix.contains(x);
    let label = g.label(e);
    // a store-conditional that failed was added maximally where it holds no reservation (else
    // the graph where it wrote is the one)
    if let Some(Conditional::Failed { addr, size }) = g.event(e).conditional {
        return super::conditional::reservation(g, e, addr, size).is_none();
    }
    let Some(addr) = label.location() else {
        return true;
    };
    if let Some(rf) = label.rf() {
        if rf.is_some_and(|w| !previous(w)) {
            return false;
        }
        // the revisiting write is not among them (it is not placed yet; an update's read is)
        if model.latest_write(g, addr, &|x| x != e && previous(x), Some(a)) != rf {
            return false;
        }
    }
    if label.writes() {
        let read_before = g
            .events()
            .any(|x| x != a && g.label(x).rf() == Some(Some(e)) && previous(x));
        let next = g.co_position(e).and_then(|p| {
            g.co_of(addr)[p + 1..]
                .iter()
                .copied()
                .find(|&w| w != a && previous(w))
        });
        // the last in coherence order; a store-conditional that wrote, as late as its
        // reservation lets it (before the first other thread's write after the one its
        // load-reserve read)
        let latest = match g.event(e).conditional {
            Some(Conditional::Written { .. }) => next.is_none_or(|w| w.thread != e.thread),
            _ => next.is_none(),
        };
        if read_before || !latest {
            return false;
        }
    }
    true
}

/// What `e`, an access of `addr`, may read from, in the order its graphs are made: the initial
/// value, then each other write of the location in the graph's order.
pub(super) fn sources_of(g: &Graph, e: EventId, addr: u64) -> Vec<Option<EventId>> {
    std::iter::once(None)
        .chain(
            g.events()
                .filter(|&w| w != e && g.label(w).writes() && g.label(w).location() == Some(addr))
                .map(Some),
        )
        .collect()
}
