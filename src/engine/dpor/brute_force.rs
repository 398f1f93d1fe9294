//! The engine against brute force: on random small programs of loads and stores, the number of
//! complete executions must equal the number of Mazurkiewicz traces, counted by enumerating
//! every interleaving and keeping the order of each conflicting pair.

use std::collections::BTreeSet;

use super::super::mock::{load, lock, store, unlock, Mock};
use super::super::Config;
use crate::event::{Op, TargetAddr};
use crate::model::Sc;
use crate::results::Outcome;

fn interleavings(
    threads: &[Vec<(Op, u64)>],
    pos: &mut Vec<usize>,
    seq: &mut Vec<(usize, usize)>,
    out: &mut BTreeSet<Vec<bool>>,
) {
    if threads.iter().zip(pos.iter()).all(|(t, &p)| p == t.len()) {
        // the trace: for every conflicting pair of events of different threads, which came first
        let at = |e: (usize, usize)| seq.iter().position(|&x| x == e).unwrap();
        let mut events = seq.clone();
        events.sort();
        let mut key = Vec::new();
        for (i, &a) in events.iter().enumerate() {
            for &b in &events[i + 1..] {
                let (oa, ob) = (threads[a.0][a.1].0, threads[b.0][b.1].0);
                if a.0 != b.0
                    && oa
                        .footprint(true, false)
                        .conflicts(&ob.footprint(true, false))
                {
                    key.push(at(a) < at(b));
                }
            }
        }
        out.insert(key);
        return;
    }
    // the one mutex of these programs: held by whoever locked it last and has not unlocked
    let held = seq.iter().rev().find_map(|&(t, i)| match threads[t][i].0 {
        Op::MutexLock { .. } => Some(true),
        Op::MutexUnlock { .. } => Some(false),
        _ => None,
    });
    let runnable: Vec<bool> = (0..threads.len())
        .map(|t| {
            pos[t] < threads[t].len()
                && !(matches!(threads[t][pos[t]].0, Op::MutexLock { .. }) && held == Some(true))
        })
        .collect();
    // the thread inside an atomic section, if any: it alone runs while it can, and no other
    // section begins before it ends
    let in_section = seq.iter().rev().find_map(|&(t, i)| match threads[t][i].0 {
        Op::AtomicBegin => Some(Some(t)),
        Op::AtomicEnd => Some(None),
        _ => None,
    });
    let owner = in_section.flatten();
    for t in 0..threads.len() {
        if runnable[t] {
            if owner.is_some_and(|o| o != t)
                && (runnable[owner.unwrap()] || matches!(threads[t][pos[t]].0, Op::AtomicBegin))
            {
                continue;
            }
            seq.push((t, pos[t]));
            pos[t] += 1;
            interleavings(threads, pos, seq, out);
            pos[t] -= 1;
            seq.pop();
        }
    }
}

/// Exploring with every step through the engine (no checkpoints restored) must give the
/// same as `mock` gave with its prefixes carried out alone, which it must have used.
pub(super) fn same_without_prefixes(
    mock: &Mock,
    o: &Outcome,
    explore: impl Fn(&mut Mock) -> Outcome,
) {
    let mut stepwise = Mock::new(mock.scripts.clone(), None);
    stepwise.buffered = mock.buffered;
    stepwise.prefixes = false;
    let s = explore(&mut stepwise);
    assert_eq!(
        (s.stats.executions, s.stats.blocked, s.stats.events),
        (o.stats.executions, o.stats.blocked, o.stats.events),
        "program {:?}",
        mock.scripts
    );
    assert_eq!(stepwise.skipped, 0);
    if o.stats.executions > 1 {
        assert!(
            mock.skipped > 0,
            "no prefix carried out: {:?}",
            mock.scripts
        );
        assert!(mock.steps < stepwise.steps);
    }
}

#[test]
fn executions_equal_mazurkiewicz_traces_on_random_programs() {
    check_random_programs(0x9e3779b97f4a7c15, 400, false);
}

/// Atomic sections move as one step and are ordered only where they conflict, with each other
/// or with other threads' accesses.
#[test]
fn executions_equal_mazurkiewicz_traces_with_atomic_sections() {
    check_random_programs(0x2545f4914f6cdd1d, 400, true);
}

/// Random programs of 2 or 3 threads of 1 to 3 accesses to 3 words, with a stretch of some
/// threads in a mutex (or, with `sections`, in a mutex or an atomic section).
fn check_random_programs(seed: u64, programs: usize, sections: bool) {
    let mut lcg = super::super::mock::Lcg(seed);
    let mut next = move |n: u64| lcg.below(n);
    for _ in 0..programs {
        let nthreads = 2 + next(2) as usize;
        let threads: Vec<Vec<(Op, u64)>> = (0..nthreads)
            .map(|t| {
                (0..1 + next(3))
                    .map(|i| {
                        let addr = 0x100 + 4 * next(3);
                        match next(5) {
                            0 | 1 => load(addr),
                            2 => (
                                Op::Rmw {
                                    addr: TargetAddr(addr),
                                    size: 4,
                                },
                                0,
                            ),
                            _ => store(addr, (t * 10 + i as usize) as u64),
                        }
                    })
                    .collect()
            })
            .collect();
        let mut threads = threads;
        for ops in threads.iter_mut() {
            // sometimes wrap a stretch of the thread in the mutex, or in an atomic section
            let wrap = next(3);
            if wrap == 0 || (sections && wrap == 1) {
                let from = next(ops.len() as u64) as usize;
                let to = from + 1 + next((ops.len() - from) as u64) as usize;
                let (begin, end) = if wrap == 0 {
                    (lock(0x200), unlock(0x200))
                } else {
                    ((Op::AtomicBegin, 0), (Op::AtomicEnd, 0))
                };
                ops.insert(to, end);
                ops.insert(from, begin);
            }
        }
        check_program(&threads);
    }
}

/// The engine's complete executions of `threads` (alone, stepwise, and shared by workers)
/// against the Mazurkiewicz traces enumerated by brute force.
fn check_program(threads: &[Vec<(Op, u64)>]) {
    let mut traces = BTreeSet::new();
    interleavings(
        threads,
        &mut vec![0; threads.len()],
        &mut Vec::new(),
        &mut traces,
    );
    let mut mock = Mock::new(threads.to_vec(), None);
    let o = super::explore(&mut mock, &Sc, &Config::default(), &mut |_| true).unwrap();
    assert_eq!(
        o.stats.executions,
        traces.len() as u64,
        "program {threads:?}"
    );
    same_without_prefixes(&mock, &o, |m| {
        super::explore(m, &Sc, &Config::default(), &mut |_| true).unwrap()
    });
    // shared by workers (-j) and split into shards (--shard): the same executions
    let make = || Mock::new(threads.to_vec(), None);
    for (workers, split, by_hash) in [(2, (1, 4), false), (3, (2, 6), true), (2, (1000, 4), false)]
    {
        assert_eq!(
            super::split_executions(&make, &Sc, workers, split, by_hash),
            traces.len() as u64,
            "{workers} workers, split {split:?}, by hash {by_hash}: program {threads:?}"
        );
    }
}

/// Programs of 3 and 4 threads on which larger random runs found the engine short of the
/// traces, while sections were being made steps: a section's later event ordered after
/// another thread's access (its clock), and two events of one section both taken as the
/// race's immediate predecessor.
#[test]
fn atomic_sections_found_by_larger_random_programs() {
    let l = |a| load(a).0;
    let w = |a| store(a, 1).0;
    let rmw = |a| Op::Rmw {
        addr: TargetAddr(a),
        size: 4,
    };
    let (begin, end) = (Op::AtomicBegin, Op::AtomicEnd);
    let programs = [
        vec![
            vec![w(0x104), l(0x108), l(0x108)],
            vec![l(0x108), begin, w(0x104), l(0x108), end],
            vec![w(0x108)],
            vec![begin, l(0x100), l(0x100), w(0x100), end, l(0x108)],
        ],
        vec![
            vec![l(0x108), begin, rmw(0x104), w(0x108), end],
            vec![rmw(0x100), w(0x104), rmw(0x104)],
            vec![l(0x108)],
        ],
        vec![
            vec![l(0x104), begin, w(0x104), l(0x104), end],
            vec![begin, l(0x108), w(0x100), rmw(0x104), end],
            vec![l(0x104), l(0x108), w(0x104), w(0x108)],
        ],
    ];
    for p in programs {
        let threads: Vec<Vec<(Op, u64)>> = p
            .into_iter()
            .enumerate()
            .map(|(t, ops)| {
                ops.into_iter()
                    .enumerate()
                    .map(|(i, op)| (op, (10 * t + i) as u64))
                    .collect()
            })
            .collect();
        check_program(&threads);
    }
}
