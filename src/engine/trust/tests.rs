use super::super::mock::{
    fence, fetch_add, futex_wait, futex_wake, load, lock, read_key, sem_post, sem_wait, store,
    take_turns_after, test_config, unlock, Check, Mock,
};
use super::super::Config;
use super::brute_force::{
    consistent_graphs, ra_assignments, ra_candidates, traces, values_read, Semantics, Sources,
};
use crate::event::{FenceKind, Op};
use crate::model::{Model, Power, Pso, Ra, Sc, Tso};
use crate::results::{Observation, Outcome};
use std::collections::BTreeMap;

const X: u64 = 0x100;
const Y: u64 = 0x104;

fn check(threads: Vec<Vec<(Op, u64)>>, model: &dyn Model, assertion: Option<Check>) -> Outcome {
    let mut mock = Mock::new(threads, assertion);
    mock.graph = true;
    mock.observe_reads = true;
    super::explore(&mut mock, model, &test_config(), &mut |_| true).unwrap()
}

fn count(threads: Vec<Vec<(Op, u64)>>, model: &dyn Model) -> (u64, u64) {
    let o = check(threads, model, None);
    assert!(o.error.is_none());
    (o.stats.executions, o.stats.blocked)
}

const TSO: Tso = Tso { bound: None };
const PSO: Pso = Pso { bound: None };

#[test]
fn store_buffering() {
    let sb = || vec![vec![store(X, 1), load(Y)], vec![store(Y, 1), load(X)]];
    assert_eq!(count(sb(), &Sc), (3, 0));
    assert_eq!(count(sb(), &TSO), (4, 0));
    assert_eq!(count(sb(), &PSO), (4, 0));
}

#[test]
fn message_passing() {
    let mp = || vec![vec![store(X, 1), store(Y, 1)], vec![load(Y), load(X)]];
    assert_eq!(count(mp(), &Sc), (3, 0));
    assert_eq!(count(mp(), &TSO), (3, 0));
    assert_eq!(count(mp(), &PSO), (4, 0));
    // a POWER program's lwsync keeps its stores in order under PSO, as eieio and sfence do
    let fenced = || {
        vec![
            vec![store(X, 1), lwsync(), store(Y, 1)],
            vec![load(Y), load(X)],
        ]
    };
    assert_eq!(count(fenced(), &PSO), (3, 0));
}

#[test]
fn fences_and_updates_restore_order() {
    let sb = |mid: fn() -> (Op, u64)| {
        vec![
            vec![store(X, 1), mid(), load(Y)],
            vec![store(Y, 1), mid(), load(X)],
        ]
    };
    assert_eq!(count(sb(fence), &TSO), (3, 0));
    // the two updates of one location are ordered: either order forbids the SB outcome too
    let with_updates = sb(|| fetch_add(0x200, 1));
    assert_eq!(traces(&with_updates, Semantics::Tso).len(), 4);
    assert_eq!(count(with_updates, &TSO), (4, 0));
}

/// Random programs of loads, stores, fetch-and-adds and fences: one execution per consistent
/// graph, as the operational semantics enumerated (under ra, per consistent weak trace; no
/// fences).
fn random_programs(model: &dyn Model, sem: Option<Semantics>, seed: u64, programs: usize) {
    let mut lcg = super::super::mock::Lcg::for_test(seed);
    let mut next = move |n: u64| lcg.below(n);
    for _ in 0..programs {
        let nthreads = 2 + next(2) as usize;
        let threads: Vec<Vec<(Op, u64)>> = (0..nthreads)
            .map(|t| {
                (0..1 + next(4))
                    .map(|i| {
                        let addr = 0x100 + 4 * next(2);
                        match next(if sem.is_some() { 8 } else { 7 }) {
                            0..=2 => load(addr),
                            3..=5 => store(addr, (t * 10 + i as usize + 1) as u64),
                            6 => fetch_add(addr, 1),
                            _ => fence(),
                        }
                    })
                    .collect()
            })
            .collect();
        // (ra's brute force tries every choice of sources with every coherence order: past
        // this, some values of `SMC_TEST_SEED` drew programs it took more than ten minutes
        // over; the suite's own seeds draw none, 2,073,600 at most)
        if sem.is_none() && ra_candidates(&threads) > RA_CANDIDATES_MAX {
            continue;
        }
        equals_brute_force(model, sem, threads);
    }
}

/// The most candidates (choices of sources, coherence orders) a random program may give ra's
/// brute force.
const RA_CANDIDATES_MAX: u64 = 4_000_000;

/// One execution per consistent graph of `threads` under `model` (the brute force: every
/// interleaving under `sem`'s semantics; without, every choice of sources that ra accepts), 0
/// blocked, and the same values read as many times.
fn equals_brute_force(model: &dyn Model, sem: Option<Semantics>, threads: Vec<Vec<(Op, u64)>>) {
    let sources: Vec<_> = match sem {
        Some(sem) => traces(&threads, sem)
            .into_iter()
            .map(|(rf, _)| rf)
            .collect(),
        None => ra_assignments(&threads)
            .into_iter()
            .filter_map(|(rf, ok)| ok.then_some(rf))
            .collect(),
    };
    let values = values_of(&threads, &sources);
    let o = check(threads.clone(), model, None);
    assert!(o.error.is_none());
    let got = (o.stats.executions, o.stats.blocked, o.observations);
    let want = (sources.len() as u64, 0, values);
    assert_eq!(got, want, "{} program {threads:?}", model.name());
}

fn lwsync() -> (Op, u64) {
    (
        Op::Fence {
            kind: FenceKind::Lightweight,
        },
        0,
    )
}

/// Under POWER (porf cycles: a read may read a write its thread adds later, through a
/// revisit that keeps later events), random programs of loads, stores, fetch-and-adds, syncs
/// and lwsyncs: one execution per graph (sources and coherence orders) the model accepts,
/// every one tried, and the values each reads.
#[test]
fn power_graphs_equal_brute_force() {
    let checked = power_random_programs(11, 250, 4, 24);
    assert!(checked >= 150, "{checked} programs checked");
    // LB+lwsyncs with updates: an lwsync orders an update's read before a later write, as
    // POWER's `lwarx` before a `stwcx.` (the update is one event here: only write-to-read
    // pairs are left out)
    let lb = vec![
        vec![fetch_add(Y, 1), lwsync(), fetch_add(X, 1)],
        vec![load(X), lwsync(), store(Y, 14)],
    ];
    assert_eq!(consistent_graphs(&lb, &Power, 24).map(|g| g.len()), Some(3));
    assert_eq!(count(lb, &Power).0, 3);
}

/// How many of `programs` random programs (of up to `ops` operations a thread) were small
/// enough to check: at most `orders` coherence orders.
fn power_random_programs(seed: u64, programs: usize, ops: u64, orders: usize) -> usize {
    let mut lcg = super::super::mock::Lcg::for_test(seed);
    let mut next = move |n: u64| lcg.below(n);
    let mut checked = 0;
    for _ in 0..programs {
        let threads: Vec<Vec<(Op, u64)>> = (0..2 + next(2))
            .map(|t| {
                (0..1 + next(ops))
                    .map(|i| {
                        let addr = 0x100 + 4 * next(2);
                        match next(9) {
                            0..=2 => load(addr),
                            3..=5 => store(addr, t * 10 + i + 1),
                            6 => fetch_add(addr, 1),
                            7 => fence(),
                            _ => lwsync(),
                        }
                    })
                    .collect()
            })
            .collect();
        // (the brute force tries every coherence order: not where there are too many)
        if !equals_power_brute_force(&threads, orders) {
            continue;
        }
        checked += 1;
    }
    checked
}

/// Under POWER, one execution per graph of `threads` the model accepts (its blocked ones not
/// counted: a replay that finds no known bytes for a read ends blocked, a handful), and the
/// same values read as many times. False (nothing checked) where there are more than
/// `orders` coherence orders to try.
fn equals_power_brute_force(threads: &[Vec<(Op, u64)>], orders: usize) -> bool {
    let Some(graphs) = consistent_graphs(threads, &Power, orders) else {
        return false;
    };
    let values = values_of(threads, &graphs);
    let o = check(threads.to_vec(), &Power, None);
    assert!(o.error.is_none());
    assert_eq!(
        o.stats.executions,
        graphs.len() as u64,
        "program {threads:?}"
    );
    // (only where they differ: the values of a few hundred graphs)
    let differ: Vec<_> = (values.iter().map(|(v, n)| (v, *n, o.observations.get(v))))
        .filter(|(_, n, got)| *got != Some(n))
        .collect();
    assert!(differ.is_empty(), "program {threads:?}: {differ:?}");
    assert_eq!(o.observations.len(), values.len(), "program {threads:?}");
    true
}

/// The values the reads of each of `graphs` (their sources) read, as many times as graphs
/// read them.
fn values_of(threads: &[Vec<(Op, u64)>], graphs: &[Sources]) -> BTreeMap<Observation, u64> {
    let mut values: BTreeMap<Observation, u64> = BTreeMap::new();
    for rf in graphs {
        let v = values_read(threads, rf);
        if !v.is_empty() {
            *values.entry(v).or_default() += 1;
        }
    }
    values
}

/// Each graph's replay begins with the steps it shares with the execution before, which the
/// executor carries out alone: the same graphs and values as replaying every step through the
/// engine, most steps skipped.
#[test]
fn shared_steps_are_carried_out_by_the_executor() {
    let program = || {
        vec![
            vec![store(X, 1), fetch_add(Y, 1), load(X)],
            vec![load(Y), store(Y, 12), load(X)],
            vec![store(X, 21), load(Y), fetch_add(X, 1)],
        ]
    };
    let explore = |prefixes: bool| {
        let mut mock = Mock::new(program(), None);
        mock.graph = true;
        mock.observe_reads = true;
        mock.prefixes = prefixes;
        let o = super::explore(&mut mock, &TSO, &Config::default(), &mut |_| true).unwrap();
        (
            o.stats.executions,
            o.stats.blocked,
            o.observations,
            mock.skipped,
        )
    };
    let (with, without) = (explore(true), explore(false));
    assert_eq!(
        (with.0, with.1, &with.2),
        (without.0, without.1, &without.2)
    );
    assert_eq!(without.3, 0);
    assert!(
        with.3 > 2 * with.0,
        "{} steps skipped in {} executions",
        with.3,
        with.0
    );
}

#[test]
fn sc_graphs_equal_brute_force() {
    random_programs(&Sc, Some(Semantics::Sc), 1, 300);
}

#[test]
fn tso_graphs_equal_brute_force() {
    random_programs(&TSO, Some(Semantics::Tso), 2, 300);
}

#[test]
fn pso_graphs_equal_brute_force() {
    random_programs(&PSO, Some(Semantics::Pso), 3, 300);
}

#[test]
fn ra_weak_traces_equal_brute_force() {
    random_programs(&Ra, None, 4, 200);
    // the last read must read Y = 3 where the load of X reads the update: its revisit needs
    // the first read to read the latest of the two first writes of Y, which no order of
    // adding events made the one it read while that was the one added last
    equals_brute_force(
        &Ra,
        None,
        vec![
            vec![load(Y)],
            vec![store(Y, 1), fetch_add(X, 1)],
            vec![store(Y, 2), load(X), store(Y, 3)],
        ],
    );
}

/// The graphs explored do not depend on the order their events are added in (a revisit drops
/// what was added after the read, whatever that was): with threads taking turns after every
/// event, where the exploration otherwise adds the next event of the lowest thread that can
/// run, each consistent graph once, none blocked, under every model.
#[test]
fn graphs_equal_brute_force_when_threads_take_turns() {
    take_turns_after(1);
    random_programs(&Sc, Some(Semantics::Sc), 21, 150);
    random_programs(&TSO, Some(Semantics::Tso), 22, 150);
    random_programs(&PSO, Some(Semantics::Pso), 23, 150);
    random_programs(&Ra, None, 24, 100);
    assert!(power_random_programs(25, 150, 3, 24) > 50);
}

/// Three or four threads over three words, at most 9 operations: one execution per graph the
/// brute force enumerates, under each model. Also an update that a write revisits, a read of
/// its old write before it (or another update's), and a write before both that ends last in
/// coherence order: the graph where the update reads the revisiting write and the read (or
/// the other update) reads the update comes only from the update's new write revisiting in
/// turn.
#[test]
fn many_threads_equal_brute_force() {
    let chains = [
        vec![
            vec![store(X, 2)],
            vec![load(X)],
            vec![fetch_add(X, 1)],
            vec![store(X, 31)],
        ],
        vec![
            vec![store(X, 2)],
            vec![fetch_add(X, 1)],
            vec![fetch_add(X, 100)],
            vec![store(X, 31)],
        ],
    ];
    for threads in chains {
        equals_brute_force(&Sc, Some(Semantics::Sc), threads.clone());
        equals_brute_force(&PSO, Some(Semantics::Pso), threads.clone());
        let graphs = consistent_graphs(&threads, &Power, 24).map(|g| g.len() as u64);
        assert_eq!(graphs, Some(24));
        assert_eq!(count(threads, &Power), (24, 0));
    }
    let mut lcg = super::super::mock::Lcg::for_test(17);
    let mut next = move |n: u64| lcg.below(n);
    let mut checked = 0;
    while checked < 1500 {
        let n = 3 + next(2);
        let threads = loads_stores_adds(&mut next, n, 3);
        if threads.iter().map(Vec::len).sum::<usize>() > 9 {
            continue;
        }
        equals_brute_force(&Sc, Some(Semantics::Sc), threads.clone());
        if checked % 2 == 0 {
            equals_brute_force(&TSO, Some(Semantics::Tso), threads.clone());
        } else {
            equals_brute_force(&Ra, None, threads.clone());
        }
        equals_power_brute_force(&threads, 24);
        checked += 1;
    }
}

/// `threads` random threads of 1 to 3 loads, stores (of values telling the store apart) and
/// fetch-and-adds over `words` words.
fn loads_stores_adds(
    next: &mut dyn FnMut(u64) -> u64,
    threads: u64,
    words: u64,
) -> Vec<Vec<(Op, u64)>> {
    (0..threads)
        .map(|t| {
            (0..1 + next(3))
                .map(|i| {
                    let addr = 0x100 + 4 * next(words);
                    match next(7) {
                        0..=2 => load(addr),
                        3..=5 => store(addr, t * 10 + i + 1),
                        _ => fetch_add(addr, 1),
                    }
                })
                .collect()
        })
        .collect()
}

/// Two words that straddle an aligned 8-byte word, so that an access of both at once (8
/// bytes at `LO`) is not atomic.
const LO: u64 = 0x104;
const HI: u64 = 0x108;

fn wide(op: fn(u64) -> (Op, u64), value: u64) -> (Op, u64) {
    let (op, _) = op(LO);
    let op = match op {
        Op::Load { addr, .. } => Op::Load { addr, size: 8 },
        Op::Store { addr, .. } => Op::Store { addr, size: 8 },
        op => op,
    };
    (op, value)
}

/// Random programs whose threads access the words `LO` and `HI` alone and, some of them, both
/// at once: one execution per consistent graph of the program with each 8-byte
/// access written as its two 4-byte ones in address order (which `random_programs` checks
/// against brute force), and the same values read. Also where an 8-byte access comes first,
/// so that the exploration starts again once a 4-byte one cuts it.
fn wide_accesses_as_their_pieces(model: &dyn Model, seed: u64, programs: usize) {
    let mut lcg = super::super::mock::Lcg::for_test(seed);
    let mut next = move |n: u64| lcg.below(n);
    for _ in 0..programs {
        let (mut whole, mut pieces) = (Vec::new(), Vec::new());
        // per thread, the operation of `whole` that each of `pieces` is part of
        let mut part_of: Vec<Vec<usize>> = Vec::new();
        for t in 0..2 + next(2) {
            let (mut w, mut p, mut of) = (Vec::new(), Vec::new(), Vec::new());
            for i in 0..1 + next(3) {
                let v = t * 10 + i + 1;
                let a = LO + 4 * next(2);
                let (one, two): (_, Vec<(Op, u64)>) = match next(6) {
                    0 | 1 => (load(a), vec![load(a)]),
                    2 | 3 => (store(a, v), vec![store(a, v)]),
                    4 => (wide(load, 0), vec![load(LO), load(HI)]),
                    _ => (
                        wide(|a| store(a, 0), v | (v + 100) << 32),
                        vec![store(LO, v), store(HI, v + 100)],
                    ),
                };
                of.extend(std::iter::repeat_n(w.len(), two.len()));
                w.push(one);
                p.extend(two);
            }
            whole.push(w);
            pieces.push(p);
            part_of.push(of);
        }
        // (a 4-byte access, so that the 8-byte ones are in pieces)
        let eight = |op: &Op| matches!(op, Op::Load { size: 8, .. } | Op::Store { size: 8, .. });
        if whole.iter().flatten().all(|(op, _)| eight(op)) {
            whole[0].push(load(HI));
            pieces[0].push(load(HI));
            part_of[0].push(whole[0].len() - 1);
        }
        let o = check(whole.clone(), model, None);
        let by_pieces = check(pieces.clone(), model, None);
        // what the pieces of a load read, as the whole load would have
        let joined = by_pieces.observations.iter().map(|(obs, &n)| {
            let mut whole_obs: BTreeMap<u32, u64> = BTreeMap::new();
            for &(key, v) in obs {
                let (script, index) = ((key >> 8) as usize, (key & 0xff) as usize);
                let of = part_of[script][index];
                let part = part_of[script][..index]
                    .iter()
                    .filter(|&&x| x == of)
                    .count();
                *whole_obs.entry(read_key(script, of)).or_default() |= v << (32 * part);
            }
            (whole_obs.into_iter().collect::<Observation>(), n)
        });
        let want = (by_pieces.stats.executions, 0);
        let got = (o.stats.executions, o.stats.blocked);
        assert_eq!(got, want, "{} program {whole:?}", model.name());
        let same = o.observations == joined.collect();
        assert!(same, "values read: {} program {whole:?}", model.name());
    }
}

/// An aligned 8-byte access whose halves another thread accesses alone is refused, not
/// explored as two halves (which would let a reader see half of one write and half of
/// another); where only its own thread accesses them, it is explored in pieces.
#[test]
fn an_atomic_access_in_pieces_is_refused_where_threads_share_it() {
    let whole = || {
        (
            Op::Store {
                addr: crate::event::TargetAddr(X),
                size: 8,
            },
            7,
        )
    };
    for first in [true, false] {
        let t = if first {
            vec![whole(), load(Y)]
        } else {
            vec![load(Y), whole()]
        };
        let mut mock = Mock::new(vec![t, vec![load(X)]], None);
        mock.graph = true;
        let r = super::explore(&mut mock, &Sc, &Config::default(), &mut |_| true);
        match r {
            Err(crate::engine::ExecError::Fatal(m)) => assert!(m.contains("atomic"), "{m}"),
            _ => panic!("explored"),
        }
    }
    // (its own thread alone: the other thread's accesses are elsewhere)
    assert_eq!(
        count(vec![vec![whole(), load(Y)], vec![load(0x200)]], &Sc),
        (1, 0)
    );
}

#[test]
fn wide_accesses_explore_as_their_pieces_under_sc_and_ra() {
    wide_accesses_as_their_pieces(&Sc, 11, 100);
    wide_accesses_as_their_pieces(&Ra, 14, 100);
}

#[test]
fn wide_accesses_explore_as_their_pieces_under_tso_and_pso() {
    wide_accesses_as_their_pieces(&TSO, 12, 100);
    wide_accesses_as_their_pieces(&PSO, 13, 50);
}

/// Tracer's families (Abdulla et al., OOPSLA 2018): N writers and one reader have N + 1 weak
/// traces; store buffering and message passing as RA allows them.
#[test]
fn ra_counts() {
    for n in 1..=5u64 {
        let mut threads: Vec<Vec<(Op, u64)>> = (0..n).map(|i| vec![store(X, i + 1)]).collect();
        threads.push(vec![load(X)]);
        assert_eq!(count(threads, &Ra), (n + 1, 0), "{n} writers");
    }
    let sb = vec![vec![store(X, 1), load(Y)], vec![store(Y, 1), load(X)]];
    assert_eq!(count(sb, &Ra), (4, 0));
    let mp = vec![vec![store(X, 1), store(Y, 1)], vec![load(Y), load(X)]];
    assert_eq!(count(mp, &Ra), (3, 0));
}

/// The RA model's saturation against the axioms of `ra.cat` tried with every coherence order.
#[test]
fn ra_consistency_equals_brute_force() {
    let mut lcg = super::super::mock::Lcg::for_test(5);
    let mut next = move |n: u64| lcg.below(n);
    for _ in 0..200 {
        let n = 2 + next(2);
        let threads = loads_stores_adds(&mut next, n, 2);
        if ra_candidates(&threads) > RA_CANDIDATES_MAX {
            continue;
        }
        for (rf, want) in super::brute_force::ra_assignments(&threads) {
            let mut g = super::brute_force::graph_of(&threads);
            super::brute_force::set_sources(&mut g, &rf);
            assert_eq!(Ra.consistent(&g), want, "{threads:?} reading {rf:?}");
        }
    }
}

/// Random programs of 2 or 3 threads of 1 to 3 loads, fetch-and-adds and stores to 2 words,
/// each thread then given its synchronisation by `sync`.
fn random_synchronised(
    seed: u64,
    programs: usize,
    sync: impl Fn(&mut dyn FnMut(u64) -> u64, &mut Vec<(Op, u64)>),
) -> Vec<Vec<Vec<(Op, u64)>>> {
    let mut lcg = super::super::mock::Lcg::for_test(seed);
    let mut next = move |n: u64| lcg.below(n);
    (0..programs)
        .map(|_| {
            let nthreads = 2 + next(2) as usize;
            (0..nthreads)
                .map(|t| {
                    let mut ops: Vec<(Op, u64)> = (0..1 + next(3))
                        .map(|i| {
                            let addr = 0x100 + 4 * next(2);
                            match next(3) {
                                0 => load(addr),
                                1 => fetch_add(addr, 1),
                                _ => store(addr, (t * 10 + i as usize + 1) as u64),
                            }
                        })
                        .collect();
                    sync(&mut next, &mut ops);
                    ops
                })
                .collect()
        })
        .collect()
}

/// The graph engine explores `threads` as the interleaving engine does under `model`: the
/// same executions, values read and errors (a deadlock names the threads it leaves waiting).
/// Whether it deadlocks.
fn same_as_interleavings(threads: &[Vec<(Op, u64)>], model: &dyn Model) -> bool {
    compared_with_interleavings(threads, model, true)
}

/// [`same_as_interleavings`], the executions compared only where `same_count`.
fn compared_with_interleavings(
    threads: &[Vec<(Op, u64)>],
    model: &dyn Model,
    same_count: bool,
) -> bool {
    let cfg = Config {
        keep_going: true,
        ..Config::default()
    };
    let buffered = model.name() != "sc";
    let mut mock = Mock::new(threads.to_vec(), None);
    mock.observe_reads = true;
    mock.buffered = buffered;
    let want = super::super::dpor::explore(&mut mock, model, &cfg, &mut |_| true).unwrap();
    let mut mock = Mock::new(threads.to_vec(), None);
    mock.graph = true;
    mock.observe_reads = true;
    let got = super::explore(&mut mock, model, &cfg, &mut |_| true).unwrap();
    // (the values read where the mock's stores are buffered are the engine's to give, not
    // observed alike: compared under sc)
    let summary = |o: &Outcome| {
        let mut errors: Vec<String> = o.errors.iter().map(|(c, _)| c.message.clone()).collect();
        errors.sort();
        let values = o.observations.keys().filter(|_| !buffered);
        (
            o.stats.executions * same_count as u64,
            errors,
            values.cloned().collect::<Vec<_>>(),
        )
    };
    assert_eq!(
        summary(&got),
        summary(&want),
        "{} program {threads:?}",
        model.name()
    );
    !want.errors.is_empty()
}

/// Stretches of threads in one or two mutexes (nested in either order, so some deadlock): the
/// graph engine, a lock that finds its mutex taken waiting (on the latest state only) until
/// an unlock revisits it, explores the interleaving engine's executions under sc and tso (a
/// graph per trace, the mutex operations updates), the same values read and deadlocks.
#[test]
fn mutexes_as_the_interleaving_engine() {
    const M: [u64; 2] = [0x200, 0x300];
    let programs = random_synchronised(0x510e527fade682d1, 120, |next, ops| {
        // a stretch in a mutex, or in both, taken in either order (threads taking them in
        // opposite orders may deadlock)
        let (outer, inner) = if next(2) == 0 {
            (M[0], M[1])
        } else {
            (M[1], M[0])
        };
        let nested = next(2) == 0;
        let from = next(ops.len() as u64 + 1) as usize;
        let to = from + next((ops.len() - from) as u64 + 1) as usize;
        ops.insert(to, unlock(outer));
        if nested {
            ops.insert(to, unlock(inner));
            ops.insert(from + next((to - from) as u64 + 1) as usize, lock(inner));
        }
        ops.insert(from, lock(outer));
    });
    let mut deadlocks = 0;
    for threads in &programs {
        deadlocks += same_as_interleavings(threads, &Sc) as usize;
        same_as_interleavings(threads, &TSO);
    }
    assert!(deadlocks > 10, "{deadlocks} programs deadlock");
}

/// A futex word that some threads set and wake one waiter on, and others wait on while it is
/// 0 (so that some deadlock: a wait nothing wakes). The graph engine's wait takes the futex,
/// reads the word and joins the waiters if it is 0, as one atomic step of the kernel's, which
/// the interleaving engine's wait is: the same values read and deadlocks under sc and tso
/// (the executions differ: the wait is three events).
#[test]
fn futexes_as_the_interleaving_engine() {
    const F: u64 = 0x500;
    let programs = random_synchronised(0x1f83d9abfb41bd6b, 120, |next, ops| {
        let at = next(ops.len() as u64 + 1) as usize;
        match next(3) {
            0 => ops.insert(at, futex_wait(F, 0)),
            1 => {
                ops.insert(at, futex_wake(F));
                ops.insert(at, store(F, 1));
            }
            _ => {}
        }
    });
    let mut deadlocks = 0;
    for threads in &programs {
        deadlocks += compared_with_interleavings(threads, &Sc, false) as usize;
        compared_with_interleavings(threads, &TSO, false);
    }
    assert!(deadlocks > 10, "{deadlocks} programs deadlock");
}

/// A semaphore (count 0 at first): some threads post a unit first, and a stretch of some is
/// between a wait and a post, so that it counts as a lock for as many threads as units were
/// posted, and the threads deadlock when no unit comes. As the interleaving engine under sc and
/// tso.
#[test]
fn semaphores_as_the_interleaving_engine() {
    const S: u64 = 0x400;
    let programs = random_synchronised(0x9b05688c2b3e6c1f, 120, |next, ops| {
        if next(2) == 0 {
            let from = next(ops.len() as u64 + 1) as usize;
            let to = from + next((ops.len() - from) as u64 + 1) as usize;
            ops.insert(to, sem_post(S));
            ops.insert(from, sem_wait(S));
        }
        if next(3) == 0 {
            ops.insert(next(ops.len() as u64 + 1) as usize, sem_post(S));
        }
    });
    let mut deadlocks = 0;
    for threads in &programs {
        deadlocks += same_as_interleavings(threads, &Sc) as usize;
        same_as_interleavings(threads, &TSO);
    }
    assert!(deadlocks > 10, "{deadlocks} programs deadlock");
}

/// Compare-exchanges of a counter, each expecting what its thread last read: one execution
/// per consistent graph (the counts of every interleaving's reads-from and coherence order,
/// a compare-exchange that fails only reading), none blocked where the engine knows the
/// operands; as many without them (each added as a read, an update once it wrote), when a
/// failed one's thread is replayed with the write it failed on, or a successful one is
/// revisited by a write it does not expect.
#[test]
fn compare_exchanges_explore_each_graph_once() {
    use super::super::mock::compare_exchange;
    let increments = |n: usize| {
        let thread: Vec<_> = (0..n)
            .flat_map(|_| [load(X), compare_exchange(X, 1)])
            .collect();
        vec![thread.clone(), thread]
    };
    for (n, want) in [(1, 4), (2, 26), (3, 192)] {
        for model in [&Sc as &dyn Model, &TSO, &PSO, &Ra] {
            let name = model.name();
            assert_eq!(count(increments(n), model), (want, 0), "{n} {name}");
            let (executions, _) = count_without_operands(increments(n), model);
            assert_eq!(executions, want, "{n} {name} without operands");
        }
    }
}

fn count_without_operands(threads: Vec<Vec<(Op, u64)>>, model: &dyn Model) -> (u64, u64) {
    let mut mock = Mock::new(threads, None);
    mock.graph = true;
    mock.cas_operands = false;
    let o = super::explore(&mut mock, model, &Config::default(), &mut |_| true).unwrap();
    assert!(o.error.is_none());
    (o.stats.executions, o.stats.blocked)
}

/// Random programs with compare-exchanges among their loads, stores and fetch-and-adds (each
/// expecting what its thread last read): none blocked, and the executions the engine makes
/// where it does not know the operands; under sc, the interleaving engine's executions and
/// values read. (Under tso and pso the interleaving engine counts more executions on some of
/// these programs with the mock, not with the runtime: two compare-exchanges against one, 3
/// against 2 with the mock, and 2 either way as a C program.)
#[test]
fn compare_exchanges_as_the_interleaving_engine() {
    use super::super::mock::compare_exchange;
    let programs = random_synchronised(0x6a09e667f3bcc908, 150, |next, ops| {
        for _ in 0..1 + next(2) {
            let at = next(ops.len() as u64 + 1) as usize;
            ops.insert(at, compare_exchange(X + 4 * next(2), 1 + next(2)));
        }
    });
    for threads in &programs {
        same_as_interleavings(threads, &Sc);
        for model in [&Sc as &dyn Model, &TSO, &PSO, &Ra] {
            let (executions, blocked) = count(threads.clone(), model);
            assert_eq!(blocked, 0, "{} program {threads:?}", model.name());
            let without = count_without_operands(threads.clone(), model).0;
            assert_eq!(without, executions, "{} program {threads:?}", model.name());
        }
    }
}

/// Locks are labelled before they run by the state of each source: an update where the mutex
/// is free (a free state another lock took is that lock's revisit, not a graph of its own),
/// a read where it is taken, which waits. What still ends blocked is a graph where a lock
/// keeps waiting on a taken state after the unlock that frees it came (the graph where it
/// gets the mutex is that unlock's revisit). (Labelled after they ran, a read that becomes an
/// update, 2 and 15 end blocked here.)
#[test]
fn locks_take_the_mutex_by_their_label() {
    const M: u64 = 0x200;
    let section = || vec![lock(M), store(X, 1), unlock(M)];
    for model in [&Sc as &dyn Model, &TSO, &PSO] {
        assert_eq!(count(vec![section(), section()], model), (2, 1));
        assert_eq!(count(vec![section(), section(), section()], model), (6, 6));
    }
}

/// A futex wake is labelled before it runs too, one graph per source and per waiter it may
/// wake (the state it writes depends on both). Two waiters and a thread that sets the word and
/// wakes one twice: no waiter is left asleep. The blocked executions left are those of waiting
/// (a wait or a wake that keeps waiting on a state after the write that frees it came, as for
/// locks). (Labelled after it ran, a read that becomes an update: 65 blocked under sc, 78
/// under tso and pso.)
#[test]
fn futex_wakes_take_the_queue_by_their_label() {
    const F: u64 = 0x500;
    let waiter = || vec![futex_wait(F, 0)];
    let waker = vec![store(F, 1), futex_wake(F), futex_wake(F)];
    for model in [&Sc as &dyn Model, &TSO, &PSO] {
        let got = count(vec![waiter(), waiter(), waker.clone()], model);
        assert_eq!(got, (40, 42), "{}", model.name());
    }
}

/// Random programs, stores and updates of 0 and 1 among them: the same graphs and values with
/// the shared steps carried out by the executor as without, under each model. In the fixed
/// cases an update that a revisit gave another source writes 0 again with the same reply: a
/// step it shares with the last execution would leave the graph's update without bytes, and a
/// read of it replayed after a later write would read that one (under sc: 3 of the graphs
/// where `load(Y)` reads the update's 0 would read 1).
#[test]
fn shared_steps_equal_each_step_replayed() {
    let explore = |threads: &Vec<Vec<(Op, u64)>>, model: &dyn Model, prefixes: bool| {
        let mut mock = Mock::new(threads.clone(), None);
        mock.graph = true;
        mock.observe_reads = true;
        mock.prefixes = prefixes;
        let o = super::explore(&mut mock, model, &Config::default(), &mut |_| true).unwrap();
        (o.stats.executions, o.stats.blocked, o.observations)
    };
    let lb = vec![
        vec![fetch_add(Y, 1), load(Y), store(X, 0)],
        vec![load(X), fetch_add(Y, 1), fetch_add(Y, 1)],
        vec![store(Y, 0), fetch_add(Y, 0)],
    ];
    assert_eq!(explore(&lb, &Power, true), explore(&lb, &Power, false));
    let exchange = vec![
        vec![store(Y, 0), load(X)],
        vec![load(Y), store(Y, 0)],
        vec![fetch_add(Y, 0), store(Y, 1), fetch_add(X, 1)],
    ];
    assert_eq!(
        explore(&exchange, &Sc, true),
        explore(&exchange, &Sc, false)
    );
    let mut lcg = super::super::mock::Lcg::for_test(5);
    let mut next = move |n: u64| lcg.below(n);
    let models: [&dyn Model; 5] = [&Sc, &TSO, &PSO, &Ra, &Power];
    for p in 0..400 {
        let threads: Vec<Vec<(Op, u64)>> = (0..2 + next(2))
            .map(|_| {
                (0..1 + next(4))
                    .map(|_| {
                        let addr = [X, Y][next(2) as usize];
                        match next(6) {
                            0 | 1 => load(addr),
                            2 | 3 => store(addr, next(2)),
                            _ => fetch_add(addr, next(2)),
                        }
                    })
                    .collect()
            })
            .collect();
        let model = models[p % models.len()];
        let (with, without) = (
            explore(&threads, model, true),
            explore(&threads, model, false),
        );
        assert_eq!(with, without, "{} program {threads:?}", model.name());
    }
}
