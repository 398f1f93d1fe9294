//! The axioms the x86 models share, over execution graphs (herd7's `x86tso.cat` and the
//! seeds' `pso.cat`): per-location coherence (`acyclic po-loc | rf | co | fr`), atomicity of
//! read-modify-writes, and a global order (`acyclic ppo | barriers | rfe | co | fr`, with
//! thread creation and joining) whose preserved program order each model chooses.

use crate::graph::{EventId, Graph, Label, Numbering, Relation};

/// Which pairs of a thread's accesses keep their program order in the global order (beyond
/// fences and read-modify-writes, which order everything before them with everything after).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preserved {
    /// Every pair (SC).
    All,
    /// All but a write followed by a read (TSO).
    AllButWriteRead,
    /// Only pairs whose first is a read (PSO).
    FromReads,
}

/// Per-location coherence, atomicity and the global order with `preserved` program order.
pub fn consistent(g: &Graph, preserved: Preserved) -> bool {
    atomic(g) && per_location(g) && global(g, preserved)
}

/// Each read-modify-write comes immediately after the write it reads from in coherence order.
/// (One pass over each location's order: a search for each update's place would make a
/// thread's thousands of locked increments cost the cube of their number.)
fn atomic(g: &Graph) -> bool {
    let mut placed = 0;
    for list in g.co.values() {
        for (i, &e) in list.iter().enumerate() {
            if let Label::Update { rf, .. } = g.label(e) {
                if *rf != i.checked_sub(1).map(|p| list[p]) {
                    return false;
                }
                placed += 1;
            }
        }
    }
    // (and none is left out of its order)
    placed
        == g.events()
            .filter(|&e| matches!(g.label(e), Label::Update { .. }))
            .count()
}

/// Each write's place in its location's coherence order, by its number in `n`.
fn co_places(g: &Graph, n: &Numbering) -> Vec<u32> {
    let mut places = vec![u32::MAX; n.total];
    for list in g.co.values() {
        for (i, &w) in list.iter().enumerate() {
            places[n.of(w)] = i as u32;
        }
    }
    places
}

/// Edges of rf, co and fr (`rf_external`: only reads-from between threads), but those of
/// read `skip`.
fn communication(
    g: &Graph,
    n: &Numbering,
    rel: &mut Relation,
    rf_external: bool,
    skip: Option<EventId>,
) {
    for list in g.co.values() {
        for pair in list.windows(2) {
            rel.add(n.of(pair[0]), n.of(pair[1]));
        }
    }
    let places = co_places(g, n);
    for e in g.events().filter(|&e| Some(e) != skip) {
        let label = g.label(e);
        let Some(rf) = label.rf() else { continue };
        let addr = label.location().expect("a read has a location");
        if let Some(w) = rf {
            if !rf_external || w.thread != e.thread {
                rel.add(n.of(w), n.of(e));
            }
        }
        // from-read: to the write right after the one read (co chains the rest)
        let list = g.co_of(addr);
        let next = match rf {
            None => list.first(),
            Some(w) => match places[n.of(w)] {
                u32::MAX => None, // not placed
                p => list.get(p as usize + 1),
            },
        };
        if let Some(&next) = next.filter(|&&next| next != e) {
            rel.add(n.of(e), n.of(next));
        }
    }
}

/// The edges of thread creation and joining.
fn synchronisation(g: &Graph, n: &Numbering, rel: &mut Relation) {
    for e in g.events() {
        if matches!(g.label(e), Label::Start | Label::Join { .. }) {
            if let Some(p) = g.outside_predecessor(e) {
                rel.add(n.of(p), n.of(e));
            }
        }
    }
}

fn per_location(g: &Graph) -> bool {
    per_location_relation(g, None).1.acyclic()
}

fn per_location_relation(g: &Graph, skip: Option<EventId>) -> (Numbering, Relation) {
    let n = Numbering::new(g);
    let mut rel = Relation::new(n.total);
    communication(g, &n, &mut rel, false, skip);
    for (t, evs) in g.threads.iter().enumerate() {
        // po-loc: each access after the thread's previous access to its location
        let mut last: Vec<(u64, usize)> = Vec::new();
        for (i, ev) in evs.iter().enumerate() {
            let Some(addr) = ev.label.location() else {
                continue;
            };
            let here = n.of(EventId {
                thread: t as u32,
                index: i as u32,
            });
            match last.iter_mut().find(|(a, _)| *a == addr) {
                Some(slot) => {
                    rel.add(slot.1, here);
                    slot.1 = here;
                }
                None => last.push((addr, here)),
            }
        }
    }
    (n, rel)
}

fn global(g: &Graph, preserved: Preserved) -> bool {
    global_relation(g, preserved, None).1.acyclic()
}

fn global_relation(
    g: &Graph,
    preserved: Preserved,
    skip: Option<EventId>,
) -> (Numbering, Relation) {
    let n = Numbering::new(g);
    let mut rel = Relation::new(n.total);
    communication(g, &n, &mut rel, preserved != Preserved::All, skip);
    synchronisation(g, &n, &mut rel);
    for (t, evs) in g.threads.iter().enumerate() {
        let id = |i: usize| {
            n.of(EventId {
                thread: t as u32,
                index: i as u32,
            })
        };
        if preserved == Preserved::All {
            for i in 1..evs.len() {
                rel.add(id(i - 1), id(i));
            }
            continue;
        }
        // Program order as edges from the latest read, the latest barrier and (TSO) the latest
        // write; into a barrier from every write since the one before (PSO keeps no order
        // between writes to chain them).
        // (PSO: a store fence orders the writes since the last fence before the writes after)
        let (mut last_read, mut last_barrier, mut last_write) = (None, None, None);
        let mut last_store_fence = None;
        let mut writes_since_barrier: Vec<usize> = Vec::new();
        for (i, ev) in evs.iter().enumerate() {
            let here = id(i);
            let label = &ev.label;
            let mut from = vec![last_read, last_barrier];
            if label.writes() {
                match preserved {
                    Preserved::AllButWriteRead => from.push(last_write),
                    _ => from.push(last_store_fence),
                }
            }
            from.into_iter().flatten().for_each(|f| rel.add(f, here));
            // (lwsync keeps stores in order too)
            let store_fence =
                matches!(label, Label::Eieio | Label::Lwsync) && preserved == Preserved::FromReads;
            if ev.is_barrier() || store_fence {
                match preserved {
                    Preserved::AllButWriteRead => {
                        last_write.into_iter().for_each(|w| rel.add(w, here))
                    }
                    _ => writes_since_barrier.iter().for_each(|&w| rel.add(w, here)),
                }
                writes_since_barrier.clear();
            }
            if store_fence {
                last_store_fence = Some(here);
            }
            if ev.is_barrier() {
                last_barrier = Some(here);
            }
            if label.reads() {
                last_read = Some(here);
            }
            if label.writes() {
                last_write = Some(here);
                writes_since_barrier.push(here);
            }
        }
    }
    (n, rel)
}

/// Which of `sources` read `e` may read from, `g` staying consistent, where `e` is the last
/// event of its thread, nothing reads from it, and `g` is consistent without it. A cycle
/// through `e` leaves it by its one edge out, from-read to the write after its source in
/// coherence order, and comes back by an edge in: by reads-from only through a path from
/// that write to the source, which the coherence edge between them makes a cycle `g` does
/// not have; so the source keeps `g` consistent unless the write after it reaches `e` by
/// the other edges. Those are found once for all sources.
pub fn consistent_sources(
    g: &Graph,
    e: EventId,
    sources: &[Option<EventId>],
    preserved: Preserved,
) -> Vec<bool> {
    let Some(addr) = g.label(e).location() else {
        return vec![false; sources.len()];
    };
    let reaches = reaching(g, e, preserved, Some(e));
    sources
        .iter()
        .map(|&w| co_after(g, addr, w).is_none_or(|x| !reaches(x)))
        .collect()
}

/// The write right after `w` (`None`: the initial value) in `addr`'s coherence order.
fn co_after(g: &Graph, addr: u64, w: Option<EventId>) -> Option<EventId> {
    let list = g.co_of(addr);
    match w {
        None => list.first().copied(),
        Some(w) => g.co_position(w).and_then(|p| list.get(p + 1).copied()),
    }
}

/// Which of `places` in its location's coherence order write `e` may take, `g` staying
/// consistent, where `e` is the last event of its thread, not placed, nothing reads from it,
/// and `g` is consistent without it. As for [`consistent_sources`]: a cycle through `e` leaves
/// it by its one edge out, coherence to the write after its place, and comes back by an edge
/// in (from the write before it, or a read of that one, both already before the write after
/// it: a cycle `g` does not have; or by the other edges, found once for all places). And
/// nothing may come between an update and the write it reads from.
pub fn consistent_places(
    g: &Graph,
    e: EventId,
    places: &[usize],
    preserved: Preserved,
) -> Vec<bool> {
    let Some(addr) = g.label(e).location() else {
        return vec![false; places.len()];
    };
    let reaches = reaching(g, e, preserved, None);
    let co = g.co_of(addr);
    places
        .iter()
        .map(|&at| {
            let Some(&next) = co.get(at) else {
                return true;
            };
            let before = at.checked_sub(1).map(|p| co[p]);
            let split = matches!(g.label(next), Label::Update { rf, .. } if *rf == before);
            !split && !reaches(next)
        })
        .collect()
}

/// Whether an event reaches `e` in the global order or per location, without the edges of
/// read `skip`.
fn reaching(
    g: &Graph,
    e: EventId,
    preserved: Preserved,
    skip: Option<EventId>,
) -> impl Fn(EventId) -> bool {
    let (n, global) = global_relation(g, preserved, skip);
    let (_, local) = per_location_relation(g, skip);
    let (global, local) = (global.reaching(n.of(e)), local.reaching(n.of(e)));
    move |x| global[n.of(x)] || local[n.of(x)]
}
