//! The graph engine's branching: the sources a read may read from, the places a write may
//! take in coherence order, and the reads a new write revisits, where the revisit is the one
//! way to reach its graph (what it drops was added maximally).

use crate::graph::{Conditional, EventId, Graph, Label, Prefix};
use crate::model::Model;
use smallvec::SmallVec;

use super::exchange::revisited_exchange;
use super::Trust;
use crate::engine::ExecError;

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
        let sources = sources_of(g, e, addr);
        let known = self.consistent_updates(g, e, &sources);
        let others_read = sources_taken(g, addr);
        for (i, &w) in sources.iter().enumerate() {
            let known = known.as_ref().map(|ok| ok[i]);
            // (a graph neither consistent nor whole after a revisit is not made)
            if known == Some(false) && !others_read.contains(&w) {
                continue;
            }
            let mut h = g.clone();
            set_source(&mut h, e, w);
            match self.placed_update(g, h, e, w, known, &others_read) {
                Placed::Consistent(h) => options.push(h),
                Placed::Taken(h) => taken.push(h),
                Placed::Neither => {}
            }
        }
        (options, taken)
    }

    /// Which of `sources` update `e` of `g` may read from consistently, where `e` is the last
    /// of its thread and the model finds that for all at once (`None`: each is checked as its
    /// graph is made).
    pub(super) fn consistent_updates(
        &self,
        g: &Graph,
        e: EventId,
        sources: &[Option<EventId>],
    ) -> Option<Vec<bool>> {
        if sources.len() < 2 || !self.sinks_stay_consistent(g, e) {
            return None;
        }
        self.model.consistent_update_sources(g, e, sources)
    }

    /// `h`, which is `g` with update `e` reading from `w`, with `e` right after `w` in
    /// coherence order where the model has one: consistent (as `known` says, else checked),
    /// or reading a write that another update of `g` reads (one of `others_read`).
    pub(super) fn placed_update(
        &self,
        g: &Graph,
        mut h: Graph,
        e: EventId,
        w: Option<EventId>,
        known: Option<bool>,
        others_read: &[Option<EventId>],
    ) -> Placed {
        if self.model.enumerates_coherence() {
            let at = w.map_or(0, |w| h.co_position(w).unwrap() + 1);
            h.place(e, at);
        }
        let check = || self.sink_reading_latest(g, e, w) || self.model.consistent_after(&h, e);
        let consistent = match known {
            Some(known) => {
                if cfg!(test) {
                    assert_eq!(
                        known,
                        check(),
                        "{} update {e:?} from {w:?}",
                        self.model.name()
                    );
                }
                known
            }
            None => check(),
        };
        if consistent {
            Placed::Consistent(h)
        } else if others_read.contains(&w) {
            Placed::Taken(h)
        } else {
            Placed::Neither
        }
    }

    /// The last of `candidates` that read `e` may read from consistently (`consistent`: as
    /// the model found for all at once, else checked): its index.
    pub(super) fn last_source(
        &self,
        g: &mut Graph,
        e: EventId,
        candidates: &[Option<EventId>],
        consistent: Option<&[bool]>,
    ) -> Option<usize> {
        (0..candidates.len()).rev().find(|&k| {
            let known = consistent.map(|ok| ok[k]);
            self.reads_consistently(g, e, candidates[k], known)
        })
    }

    /// The graphs of read `e` reading from each of the first `last` + 1 of `candidates` (but
    /// the one the execution takes, `running`) that keep it consistent.
    pub(super) fn other_sources(
        &self,
        g: &mut Graph,
        e: EventId,
        candidates: &[Option<EventId>],
        consistent: Option<&[bool]>,
        last: usize,
        running: Option<usize>,
    ) -> Vec<Graph> {
        (candidates[..=last].iter().enumerate())
            .filter(|&(i, _)| Some(i) != running)
            .filter_map(|(i, &w)| self.source_graph(g, e, w, consistent.map(|ok| ok[i])))
            .collect()
    }

    /// Which of `candidates` read `e` takes in the running execution, and the last consistent
    /// one: the last consistent one whose bytes are known ([`super::written_known`]). `None`
    /// where none is consistent, or none of those is known (their graphs are then left to
    /// visit).
    pub(super) fn source_to_take(
        &mut self,
        g: &mut Graph,
        e: EventId,
        candidates: &[Option<EventId>],
        consistent: Option<&[bool]>,
    ) -> Option<(usize, usize)> {
        let last = self.last_source(g, e, candidates, consistent)?;
        let known = |g: &Graph, k: usize| super::written_known(self.model, g, e, candidates[k]);
        if known(g, last) {
            return Some((last, last));
        }
        let k = (0..last).rev().find(|&k| {
            known(g, k) && self.reads_consistently(g, e, candidates[k], consistent.map(|ok| ok[k]))
        });
        if k.is_none() {
            let all = self.other_sources(g, e, candidates, consistent, last, None);
            self.todo.extend(all);
        }
        Some((k?, last))
    }

    /// Which of `candidates` read `e` may read from consistently, where `e` is the last of
    /// its thread and the model finds that for all at once (`None`: each is checked as its
    /// graph is made).
    pub(super) fn consistent_candidates(
        &self,
        g: &mut Graph,
        e: EventId,
        candidates: &[Option<EventId>],
    ) -> Option<Vec<bool>> {
        if candidates.len() < 2 || !self.sinks_stay_consistent(g, e) {
            return None;
        }
        let ok = self.model.consistent_sources(g, e, candidates)?;
        if cfg!(test) {
            for (&w, &ok) in candidates.iter().zip(&ok) {
                let each = self.reads_consistently(g, e, w, None);
                assert_eq!(ok, each, "{} source {w:?} of {e:?}", self.model.name());
            }
        }
        Some(ok)
    }

    /// `g` with read `e` reading from `w`, where that is consistent (only then copied).
    pub(super) fn source_graph(
        &self,
        g: &mut Graph,
        e: EventId,
        w: Option<EventId>,
        known: Option<bool>,
    ) -> Option<Graph> {
        self.reads_consistently(g, e, w, known).then(|| {
            let mut h = g.clone();
            set_source(&mut h, e, w);
            h
        })
    }

    /// Is read `e` of `g` reading from `w` consistent? As `known` says, else checked on `g`
    /// itself, given the source for the check and its own back after.
    pub(super) fn reads_consistently(
        &self,
        g: &mut Graph,
        e: EventId,
        w: Option<EventId>,
        known: Option<bool>,
    ) -> bool {
        match known {
            Some(known) => known,
            None if self.sink_reading_latest(g, e, w) => true,
            None => {
                let own = g.label(e).rf().expect("a source is for reads");
                set_source(g, e, w);
                let consistent = self.model.consistent_after(g, e);
                set_source(g, e, own);
                consistent
            }
        }
    }

    /// Does adding `e` to consistent `g` keep it consistent whenever nothing leaves `e`: no
    /// event after it in its thread, no reader, no write after it in coherence order? Under
    /// every model here but one with porf cycles (whose kept events may follow a hole `e`
    /// fills) and a store-conditional (atomic with its reservation).
    pub(super) fn sinks_stay_consistent(&self, g: &Graph, e: EventId) -> bool {
        !self.model.porf_cycles() && g.event(e).conditional.is_none() && g.is_last_of_thread(e)
    }

    /// The one source update `e` may read from, where that is the latest write and keeps the
    /// graph consistent without a check ([`Trust::sink_reading_latest`]).
    pub(super) fn sole_latest_source(
        &self,
        g: &Graph,
        e: EventId,
        addr: u64,
    ) -> Option<Option<EventId>> {
        match sources_of(g, e, addr)[..] {
            [w] if self.sink_reading_latest(g, e, w) => Some(w),
            _ => None,
        }
    }

    /// Is read (or update) `e`, the event added last, reading from `w` consistent without a
    /// check? Where `e` ends its thread and `w` is the last write of its location in
    /// coherence order (none: no write there yet), nothing leaves `e` (no event after it, no
    /// reader, no write after its source to read before, and an update goes right after
    /// `w`, last as well): a sink, which keeps a consistent graph so under a model that
    /// orders coherence ([`Trust::sinks_stay_consistent`]). Over weak traces (ra), where
    /// only `e`'s thread has events at the location and `w` is its write before `e`. The
    /// check this saves walks the whole graph at every access of a long execution (under ra
    /// it closes the location's coherence transitively: a cube of its writes).
    fn sink_reading_latest(&self, g: &Graph, e: EventId, w: Option<EventId>) -> bool {
        let Some(addr) = g.label(e).location() else {
            return false;
        };
        let latest = || {
            if self.model.enumerates_coherence() {
                g.co_of(addr).last().copied() == w
            } else {
                // (a weak trace: where only this thread has events at the location, its
                // coherence order is program order, and its one source the write before `e`)
                g.only_thread_at(addr, e.thread) && sources_of(g, e, addr) == [w]
            }
        };
        let yes =
            g.event(e).stamp + 1 == g.next_stamp && self.sinks_stay_consistent(g, e) && latest();
        if cfg!(test) && yes {
            let mut h = g.clone();
            set_source(&mut h, e, w);
            if matches!(h.label(e), Label::Update { .. }) && self.model.enumerates_coherence() {
                let at = h.co_of(addr).len();
                h.place(e, at);
            }
            assert!(
                self.model.consistent_after(&h, e),
                "{}: {e:?} reading the latest write {w:?}",
                self.model.name()
            );
        }
        yes
    }

    /// Places write `e` at the last of its consistent `places` (from [`Trust::placements`]),
    /// the graphs with it at the others left to visit.
    pub(super) fn take_place(
        &mut self,
        g: &mut Graph,
        e: EventId,
        mut places: Vec<Option<usize>>,
    ) -> Result<(), ExecError> {
        let Some(first) = places.pop() else {
            return Err(ExecError::Fatal(
                "internal: a write has no consistent place".into(),
            ));
        };
        for at in places.into_iter().flatten() {
            let mut h = g.clone();
            h.place(e, at);
            self.todo.push(h);
        }
        if let Some(at) = first {
            g.place(e, at);
        }
        Ok(())
    }

    /// [`sources_of`] read `e`, added in the running execution: where only its thread
    /// accesses the location, its one source is the write memory holds there (its thread's
    /// events before it have all run, in program order), found without walking the thread.
    /// Not under porf cycles (a kept write may not have run), nor for an object's state (its
    /// writes are the engine's, not memory's).
    pub(super) fn sources(&self, g: &Graph, e: EventId, addr: u64) -> Vec<Option<EventId>> {
        let own = g.only_thread_at(addr, e.thread)
            && g.event(e).op.is_none()
            && !self.model.porf_cycles()
            && self.ran.get(e.thread as usize) == Some(&e.index);
        if own {
            return vec![self.memory.last.get(&addr).copied()];
        }
        sources_of(g, e, addr)
    }

    /// The consistent places of write `e` in its location's coherence order (`None`: the
    /// model does not enumerate it), in the order their graphs are made.
    pub(super) fn placements(&self, g: &Graph, e: EventId, addr: u64) -> Vec<Option<usize>> {
        if !self.model.enumerates_coherence() {
            // a write keeps a weak trace consistent
            return vec![None];
        }
        let end = g.co_of(addr).len();
        let consistent_at = |at: usize| {
            let mut h = g.clone();
            h.place(e, at);
            self.model.consistent_after(&h, e)
        };
        let floor = coherence_floor(g, e, addr);
        // (where the write is the last of its thread, the model may find them at once)
        let sink = self.sinks_stay_consistent(g, e);
        let all: Vec<usize> = (floor..end).collect();
        let known = (sink && !all.is_empty())
            .then(|| self.model.consistent_places(g, e, &all))
            .flatten();
        if cfg!(test) {
            if let Some(ok) = &known {
                for (&at, &ok) in all.iter().zip(ok) {
                    let each = consistent_at(at);
                    assert_eq!(ok, each, "{} place {at} of {e:?}", self.model.name());
                }
            }
        }
        let mut places: Vec<Option<usize>> = match known {
            Some(ok) => (all.iter().zip(ok))
                .filter(|(_, ok)| *ok)
                .map(|(&at, _)| Some(at))
                .collect(),
            None => all
                .into_iter()
                .filter(|&at| consistent_at(at))
                .map(Some)
                .collect(),
        };
        // the last place leaves nothing after the write
        if sink || consistent_at(end) {
            places.push(Some(end));
        }
        places
    }

    /// Write (or update) `a`, just added to `g` (or an update a revisit just gave a new
    /// source), revisits each read of its location that does not precede it, where what the
    /// revisit drops was added maximally.
    pub(super) fn revisits(&mut self, g: &Graph, a: EventId) {
        let addr = g.label(a).location().expect("a write has a location");
        if g.only_thread_at(addr, a.thread) && g.is_last_of_thread(a) {
            return; // no read it does not follow
        }
        // (a read of its own thread before it precedes it, or under porf cycles would read
        // from its future: inconsistent)
        let mut reads: Vec<EventId> = g
            .events_at(addr)
            .filter(|&r| {
                r != a && !(r.thread == a.thread && r.index < a.index) && g.label(r).reads()
            })
            .collect();
        if reads.is_empty() {
            return;
        }
        let prefix = if self.model.porf_cycles() {
            g.prefix(a, &|g, e, out| self.model.depends_within(g, e, out))
        } else {
            g.porf_prefix(a)
        };
        reads.retain(|&r| !prefix.contains(r));
        let may = maximal_reads(self.model, g, a, &prefix, &reads);
        for (r, _) in reads.into_iter().zip(may).filter(|(_, may)| *may) {
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
            let mut h = g.restricted(&keep);
            match h.label_mut(r) {
                Label::Read { rf, .. } | Label::Update { rf, .. } => *rf = Some(a),
                _ => unreachable!(),
            }
            if !revisited_exchange(&mut h, r, a) {
                continue;
            }
            // an update that is no compare-exchange (whose bytes are its operand) writes what
            // its new source makes it write: unknown until it runs again (a replay that checks
            // the kept writes' bytes would take the old ones for a graph that cannot be)
            if h.event(r).cas.is_none() {
                if let Label::Update { bytes, .. } = h.label_mut(r) {
                    *bytes = Default::default();
                }
            }
            if h.label(r).writes() && self.model.enumerates_coherence() {
                h.unplace(r);
            }
            // an object's operation chooses again, and may now only read (a lock that finds
            // its mutex taken waits)
            self.object_revisited(&mut h, r);
            let update = h.label(r).writes() && self.model.enumerates_coherence();
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
            let last = positions.len().saturating_sub(1);
            for (i, at) in positions.into_iter().enumerate() {
                // (the last place takes `h` itself)
                let mut p = if i == last {
                    std::mem::take(&mut h)
                } else {
                    h.clone()
                };
                if let Some(at) = at {
                    p.place(a, at);
                }
                if update {
                    let after = p.co_position(a).unwrap() + 1;
                    p.place(r, after);
                }
                if self.model.consistent_after(&p, r) {
                    if p.label(r).writes() {
                        // the update writes anew: its write revisits the reads added before
                        // it, as a write just added does (the reads that read its old write
                        // among them: else a graph where one of them reads it only once it
                        // reads the revisiting write is reached by no exploration)
                        self.revisits(&p, r);
                    }
                    self.todo.push(p);
                }
            }
        }
    }
}

/// An update's graph with one source ([`Trust::placed_update`]).
pub(super) enum Placed {
    Consistent(Graph),
    /// Inconsistent, as another update reads the same write: a revisit of that one by this
    /// one makes it whole.
    Taken(Graph),
    Neither,
}

/// The writes at `addr` that an update of `g` reads from (`None`: the initial value).
pub(super) fn sources_taken(g: &Graph, addr: u64) -> Vec<Option<EventId>> {
    g.events_at(addr)
        .filter_map(|u| match *g.label(u) {
            Label::Update { rf, .. } => Some(rf),
            _ => None,
        })
        .collect()
}

/// The first place in `addr`'s coherence order that write `w` may take in any model with
/// coherence per location (`po-loc | rf | fr | co` acyclic): after its thread's earlier writes
/// there and the writes its thread's earlier reads there read from. In a consistent graph
/// those before its thread's latest write there are before that write, so the search stops
/// there.
fn coherence_floor(g: &Graph, w: EventId, addr: u64) -> usize {
    let mut before: smallvec::SmallVec<[EventId; 4]> = smallvec::SmallVec::new();
    let evs = &g.threads[w.thread as usize][..w.index as usize];
    for (i, ev) in evs.iter().enumerate().rev() {
        if ev.hole || ev.label.location() != Some(addr) {
            continue;
        }
        if let Some(Some(source)) = ev.label.rf() {
            before.push(source);
        }
        if ev.label.writes() {
            before.push(EventId {
                thread: w.thread,
                index: i as u32,
            });
            break;
        }
    }
    g.co_of(addr)
        .iter()
        .rposition(|x| before.contains(x))
        .map_or(0, |p| p + 1)
}

/// Which of `reads` (of `a`'s location, none in `prefix`) `a` may revisit: those for which
/// [`maximal`] holds. The events a revisit drops are the same for every read but for how far
/// back they go (those added after it), so each is checked once for all the reads, latest
/// first: one failing rules out every read added before it. (Checked read by read, a write
/// after a spin loop of thousands of reads checked each later read again for each: quadratic
/// in the graph, per write.) One read alone is checked as before, its own source first.
fn maximal_reads(
    model: &dyn Model,
    g: &Graph,
    a: EventId,
    prefix: &Prefix,
    reads: &[EventId],
) -> Vec<bool> {
    // (found once the first write among what a revisit drops needs them)
    let revisited = std::cell::OnceCell::new();
    let stamp = |e: EventId| g.event(e).stamp;
    // the cheap check of the reads themselves first: most revisits fail it, most often where
    // the read reads from a write a revisit gave it
    let mut may: Vec<bool> = (reads.iter())
        .map(|&r| added_maximally(g, r, a, prefix, &revisited))
        .collect();
    let viable = || reads.iter().zip(&may).filter(|(_, &m)| m).map(|(&r, _)| r);
    let Some(earliest) = viable().min_by_key(|&r| stamp(r)) else {
        return may;
    };
    if viable().count() == 1 {
        // (one read: checked as it is, its own source first, which fails most often)
        let at = reads.iter().position(|&r| r == earliest).unwrap();
        may[at] = maximal(model, g, earliest, a, prefix, &revisited);
        return may;
    }
    // every event a revisit of `earliest` drops (the other reads among them), latest first;
    // `failed`: the stamp of the latest one not added maximally
    let mut later = dropped_by(g, stamp(earliest), prefix);
    later.sort_unstable_by_key(|&e| std::cmp::Reverse(stamp(e)));
    let after = |e: EventId, failed: Option<u32>| failed.is_none_or(|f| stamp(e) > f);
    let mut failed = (later.iter())
        .find(|&&e| !added_maximally(g, e, a, prefix, &revisited))
        .map(|&e| stamp(e));
    let earliest_reads_latest =
        after(earliest, failed) && reads_latest(model, g, earliest, a, prefix);
    if let Some(&e) = (later.iter())
        .take_while(|&&e| after(e, failed))
        .find(|&&e| !reads_latest(model, g, e, a, prefix))
    {
        failed = Some(stamp(e));
    }
    for (r, may) in reads.iter().zip(&mut may) {
        *may = *may && after(*r, failed) && (*r != earliest || earliest_reads_latest);
        if cfg!(test) {
            let each = maximal(model, g, *r, a, prefix, &revisited);
            assert_eq!(*may, each, "maximality of a revisit of {r:?} by {a:?}");
        }
    }
    may
}

/// Were `r` and every event added after it that `a` does not depend on (in `prefix`) added
/// maximally? A read reads from the latest write (as the model counts it) among those added
/// before it or in the prefix; a write is the latest of them in coherence order, where the
/// model has one, and nothing added before it reads from it (it revisited nothing that stays).
/// `revisited`: the reads of `g` added before the write they read from, found when first
/// needed.
fn maximal(
    model: &dyn Model,
    g: &Graph,
    r: EventId,
    a: EventId,
    prefix: &Prefix,
    revisited: &std::cell::OnceCell<Vec<EventId>>,
) -> bool {
    // (the cheap checks first, of `r` first: most revisits fail one of them, most often
    // where `r` reads from a write a revisit gave it)
    if !added_maximally(g, r, a, prefix, revisited) {
        return false;
    }
    let dropped = dropped_by(g, g.event(r).stamp, prefix);
    dropped
        .iter()
        .all(|&e| added_maximally(g, e, a, prefix, revisited))
        && reads_latest(model, g, r, a, prefix)
        && dropped
            .iter()
            .all(|&e| reads_latest(model, g, e, a, prefix))
}

/// The events of `g` added after `stamp` that are not in `prefix`: what a revisit of the
/// read added at `stamp` drops.
fn dropped_by(g: &Graph, stamp: u32, prefix: &Prefix) -> SmallVec<[EventId; 32]> {
    let mut dropped = SmallVec::new();
    for (t, evs) in g.threads.iter().enumerate() {
        let thread = t as u32;
        let first = prefix.first(thread) as usize;
        for (index, ev) in (first..).zip(evs.get(first..).unwrap_or_default()) {
            let e = EventId {
                thread,
                index: index as u32,
            };
            if !ev.hole && ev.stamp > stamp && !prefix.contains(e) {
                dropped.push(e);
            }
        }
    }
    dropped
}

/// Reads whose source was added after them (a revisit gave it): of `g`'s events.
fn revisited_reads(g: &Graph) -> Vec<EventId> {
    let mut reads = Vec::new();
    for (t, evs) in g.threads.iter().enumerate() {
        for (i, ev) in evs.iter().enumerate() {
            if let (false, Some(Some(w))) = (ev.hole, ev.label.rf()) {
                if g.event(w).stamp > ev.stamp {
                    reads.push(EventId {
                        thread: t as u32,
                        index: i as u32,
                    });
                }
            }
        }
    }
    reads
}

/// Is `e` (added after the revisited read, or it) in the events added before it or in
/// `prefix` added maximally, but for a read's source being the latest write (`reads_latest`)?
fn added_maximally(
    g: &Graph,
    e: EventId,
    a: EventId,
    prefix: &Prefix,
    revisited: &std::cell::OnceCell<Vec<EventId>>,
) -> bool {
    // an operation with several outcomes (a signal's waiter, a nondet value) took the first
    if g.event(e).choice.is_some_and(|c| c != 0) {
        return false;
    }
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
    if label
        .rf()
        .is_some_and(|rf| rf.is_some_and(|w| !previous(w)))
    {
        return false;
    }
    if label.writes() {
        // (a read of `e` added before it was revisited by it; one in the prefix would put
        // `e` there too)
        let read_before = (revisited.get_or_init(|| revisited_reads(g)).iter())
            .any(|&x| x != a && g.label(x).rf() == Some(Some(e)) && previous(x));
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

/// Does `e`, if a read, read from the latest write of its location among the events added
/// before it or in `prefix` (the revisiting write `a` not among them: it is not placed yet;
/// an update's read is)?
fn reads_latest(model: &dyn Model, g: &Graph, e: EventId, a: EventId, prefix: &Prefix) -> bool {
    let label = g.label(e);
    let (Some(rf), Some(addr)) = (label.rf(), label.location()) else {
        return true;
    };
    let stamp = g.event(e).stamp;
    let previous = |x: EventId| g.event(x).stamp <= stamp || prefix.contains(x);
    model.latest_write(g, addr, &|x| x != e && previous(x), Some(a)) == rf
}

/// What `e`, an access of `addr`, may read from, in the order its graphs are made: the initial
/// value, then each other write of the location in the graph's order. Not a write that a
/// later one of its thread overwrote before `e` in program order, creation and joining, nor
/// the initial value once a write did: coherence per location, which every model here has,
/// rules those out (after joining threads that each wrote a location many times, a read has
/// one source from each, not every write).
pub(super) fn sources_of(g: &Graph, e: EventId, addr: u64) -> Vec<Option<EventId>> {
    let latest_in = |t: usize, n: usize| {
        g.threads[t][..n]
            .iter()
            .rposition(|ev| !ev.hole && ev.label.writes() && ev.label.location() == Some(addr))
            .map(|i| i as u32)
    };
    if g.only_thread_at(addr, e.thread) {
        return vec![
            latest_in(e.thread as usize, e.index as usize).map(|index| EventId {
                thread: e.thread,
                index,
            }),
        ];
    }
    let before = thread_order_prefix(g, e);
    let latest: Vec<Option<u32>> = (0..g.threads.len())
        .map(|t| latest_in(t, before[t] as usize))
        .collect();
    let overwritten = |w: EventId| latest[w.thread as usize].is_some_and(|i| w.index < i);
    let initial = latest.iter().all(Option::is_none).then_some(None);
    initial
        .into_iter()
        .chain(
            g.events_at(addr)
                .filter(|&w| w != e && !overwritten(w) && g.label(w).writes())
                .map(Some),
        )
        .collect()
}

/// How many of each thread's first events precede `e` in program order, creation and joining
/// (orders every model here keeps).
fn thread_order_prefix(g: &Graph, e: EventId) -> Vec<u32> {
    let mut limit = vec![0u32; g.threads.len()];
    let mut work = vec![(e.thread as usize, e.index)];
    while let Some((t, n)) = work.pop() {
        let old = limit[t];
        if n <= old {
            continue;
        }
        limit[t] = n;
        for ev in &g.threads[t][old as usize..n as usize] {
            if let (Label::Join { child }, false) = (&ev.label, ev.hole) {
                let c = *child as usize;
                work.push((c, g.threads[c].len() as u32));
            }
        }
        if old == 0 {
            if let Some(p) = g.parents[t] {
                work.push((p.thread as usize, p.index + 1));
            }
        }
    }
    limit
}

/// Read (or update) `e` of `g` reading from `w`.
pub(super) fn set_source(g: &mut Graph, e: EventId, w: Option<EventId>) {
    match g.label_mut(e) {
        Label::Read { rf, .. } | Label::Update { rf, .. } => *rf = w,
        _ => unreachable!("a source is for reads"),
    }
}
