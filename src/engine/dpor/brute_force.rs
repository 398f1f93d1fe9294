//! The engine against brute force: on random small programs of loads and stores, the number of
//! complete executions must equal the number of Mazurkiewicz traces, counted by enumerating
//! every interleaving and keeping the order of each conflicting pair.

use std::collections::{BTreeMap, BTreeSet};

use super::super::mock::{
    fetch_add, futex_wait, futex_wake, load, lock, store, take_turns_after, test_config, unlock,
    Mock,
};
use super::super::Config;
use crate::event::{Op, TargetAddr};
use crate::model::Sc;
use crate::results::Outcome;

/// The state of one interleaving being enumerated.
#[derive(Clone)]
struct State {
    pos: Vec<usize>,
    /// The futex word each thread waits on (its wait found the expected value), until its
    /// wait returns.
    waiting: Vec<Option<u64>>,
    /// Each futex word's waiters in the order they came: (thread, picked by a wake).
    queues: BTreeMap<u64, Vec<(usize, bool)>>,
    /// The words' values (futex waits compare them).
    mem: BTreeMap<u64, u64>,
    /// The events so far: thread, operation, whether it wrote (a conditional one), and the
    /// thread a wake picked.
    seq: Vec<(usize, Op, bool, Option<usize>)>,
}

/// The trace of a complete interleaving: each event (by its thread and its place among the
/// thread's events) with its outcome, and for every conflicting pair of events of different
/// threads, which came first. A wait that returns because a wake picked it is ordered after
/// that wake by nothing but the pick (it cannot come first), so it conflicts with no wake.
fn trace_of(seq: &[(usize, Op, bool, Option<usize>)]) -> Vec<u64> {
    let mut nth = [0u64; 8];
    let mut events: Vec<((usize, u64), usize)> = Vec::new();
    for (i, &(t, ..)) in seq.iter().enumerate() {
        events.push(((t, nth[t]), i));
        nth[t] += 1;
    }
    events.sort();
    let mut key = Vec::new();
    for &((t, k), i) in &events {
        let (_, _, wrote, picked) = seq[i];
        key.extend([
            t as u64,
            k,
            wrote as u64,
            picked.map_or(u64::MAX, |p| p as u64),
        ]);
    }
    for (n, &(_, i)) in events.iter().enumerate() {
        for &(_, j) in &events[n + 1..] {
            let ((ta, oa, wa, _), (tb, ob, wb, _)) = (seq[i], seq[j]);
            if ta == tb {
                continue;
            }
            if oa.footprint(wa, false).conflicts(&ob.footprint(wb, false)) {
                key.push((i < j) as u64);
            }
        }
    }
    key
}

fn interleavings(threads: &[Vec<(Op, u64)>], s: &State, out: &mut BTreeSet<(Vec<u64>, bool)>) {
    // the one mutex of these programs: held by whoever locked it last and has not unlocked
    let held = s.seq.iter().rev().find_map(|(_, op, ..)| match op {
        Op::MutexLock { .. } => Some(true),
        Op::MutexUnlock { .. } => Some(false),
        _ => None,
    });
    // each thread's next operation, if it can run (a wait returns once a wake picked it)
    let next: Vec<Option<Op>> = (0..threads.len())
        .map(|t| match s.waiting[t] {
            Some(addr) => s.queues[&addr]
                .iter()
                .any(|&(w, picked)| w == t && picked)
                .then_some(Op::FutexWoken {
                    addr: TargetAddr(addr),
                    timed: false,
                }),
            None => threads[t]
                .get(s.pos[t])
                .map(|&(op, _)| op)
                .filter(|op| !(matches!(op, Op::MutexLock { .. }) && held == Some(true))),
        })
        .collect();
    if next.iter().all(Option::is_none) {
        // every thread is done, or the rest wait for good (a deadlock)
        let done =
            (0..threads.len()).all(|t| s.waiting[t].is_none() && s.pos[t] == threads[t].len());
        out.insert((trace_of(&s.seq), !done));
        return;
    }
    // the thread inside an atomic section, if any: it alone runs while it can, and no other
    // section begins before it ends
    let in_section = s.seq.iter().rev().find_map(|&(t, op, ..)| match op {
        Op::AtomicBegin => Some(Some(t)),
        Op::AtomicEnd => Some(None),
        _ => None,
    });
    let owner = in_section.flatten();
    for t in 0..threads.len() {
        let Some(op) = next[t] else { continue };
        if owner.is_some_and(|o| o != t)
            && (next[owner.unwrap()].is_some() || matches!(op, Op::AtomicBegin))
        {
            continue;
        }
        // a wake of one waiter picks any that no wake picked yet: one branch each
        let mut outcomes: Vec<Option<usize>> = vec![None];
        if let Op::FutexWake { addr, .. } = op {
            let unpicked: Vec<usize> = s
                .queues
                .get(&addr.0)
                .map(|q| q.iter().filter(|w| !w.1).map(|w| w.0).collect())
                .unwrap_or_default();
            if !unpicked.is_empty() {
                outcomes = unpicked.into_iter().map(Some).collect();
            }
        }
        for picked in outcomes {
            let mut n = s.clone();
            let value = threads[t].get(s.pos[t]).map_or(0, |&(_, v)| v);
            let wrote = match op {
                Op::FutexWait { addr, expected, .. } => {
                    let queued = n.mem.get(&addr.0).copied().unwrap_or(0) == expected as u64;
                    if queued {
                        n.waiting[t] = Some(addr.0);
                        n.queues.entry(addr.0).or_default().push((t, false));
                    }
                    true
                }
                Op::FutexWake { addr, .. } => {
                    for w in n.queues.entry(addr.0).or_default() {
                        if Some(w.0) == picked {
                            w.1 = true;
                        }
                    }
                    picked.is_some()
                }
                Op::FutexWoken { addr, .. } => {
                    n.queues.entry(addr.0).or_default().retain(|w| w.0 != t);
                    n.waiting[t] = None;
                    false
                }
                Op::Store { addr, .. } => {
                    n.mem.insert(addr.0, value);
                    true
                }
                Op::Rmw { addr, .. } => {
                    *n.mem.entry(addr.0).or_insert(0) += value;
                    true
                }
                _ => true,
            };
            if !matches!(op, Op::FutexWoken { .. }) {
                n.pos[t] += 1;
            }
            n.seq.push((t, op, wrote, picked));
            interleavings(threads, &n, out);
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

/// Which thread takes the next step where none is to be replayed is the engine's free choice:
/// with threads taking turns after every step, the same traces, with mutexes, atomic sections
/// and futexes too.
#[test]
fn executions_equal_mazurkiewicz_traces_when_threads_take_turns() {
    take_turns_after(1);
    check_random_programs(0x3c6ef372fe94f82b, 300, false, false);
    check_random_programs(0xa54ff53a5f1d36f1, 300, true, false);
    check_random_programs(0xa54ff53a5f1d36f2, 300, false, true);
}

#[test]
fn executions_equal_mazurkiewicz_traces_on_random_programs() {
    check_random_programs(0x9e3779b97f4a7c15, 400, false, false);
}

/// Atomic sections move as one step and are ordered only where they conflict, with each other
/// or with other threads' accesses.
#[test]
fn executions_equal_mazurkiewicz_traces_with_atomic_sections() {
    check_random_programs(0x2545f4914f6cdd1d, 400, true, false);
}

/// Futex waits and wakes: a wait that finds the word changed, a wake that finds no waiter and
/// a wait that returns picked change no one's waiting, and are ordered only by what they read;
/// executions that end with a thread waiting for good (a deadlock) count too.
#[test]
fn executions_equal_mazurkiewicz_traces_with_futexes() {
    check_random_programs(0x6a09e667f3bcc909, 600, false, true);
}

/// Random programs of 2 or 3 threads of 1 to 3 accesses to 3 words, with a stretch of some
/// threads in a mutex (or, with `sections`, in a mutex or an atomic section); with `futexes`,
/// some accesses are futex waits (for 0 or 1) and wakes on those words.
fn check_random_programs(seed: u64, programs: usize, sections: bool, futexes: bool) {
    let mut lcg = super::super::mock::Lcg::for_test(seed);
    let mut next = move |n: u64| lcg.below(n);
    let mut counted = 0;
    for _ in 0..programs {
        let nthreads = 2 + next(2) as usize;
        let threads: Vec<Vec<(Op, u64)>> = (0..nthreads)
            .map(|t| {
                (0..1 + next(3))
                    .map(|i| {
                        let addr = 0x100 + 4 * next(3);
                        match next(if futexes { 8 } else { 5 }) {
                            5 => futex_wait(addr, next(2) as u32),
                            6 | 7 => futex_wake(addr),
                            0 | 1 => load(addr),
                            2 => fetch_add(addr, 0),
                            _ if futexes => store(addr, next(2)),
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
        counted += check_program(&threads) as usize;
    }
    // (most programs end without a deadlock: their counts are compared)
    assert!(counted > programs / 2, "{counted} of {programs} compared");
}

/// The engine's complete executions of `threads` (alone, stepwise, and shared by workers)
/// against the Mazurkiewicz traces enumerated by brute force, those that end in a deadlock
/// too (`--keep-going`); without it, the engine must stop at a deadlock if there is one.
/// False when there is (the split is not compared: it stops at an error).
fn check_program(threads: &[Vec<(Op, u64)>]) -> bool {
    let mut traces = BTreeSet::new();
    let start = State {
        pos: vec![0; threads.len()],
        waiting: vec![None; threads.len()],
        queues: BTreeMap::new(),
        mem: BTreeMap::new(),
        seq: Vec::new(),
    };
    interleavings(threads, &start, &mut traces);
    let deadlock = traces.iter().any(|(_, deadlock)| *deadlock);
    let first = super::explore(
        &mut Mock::new(threads.to_vec(), None),
        &Sc,
        &test_config(),
        &mut |_| true,
    )
    .unwrap();
    assert_eq!(
        first.error.as_ref().map(|e| e.kind.clone()),
        deadlock.then_some(crate::results::ErrorKind::Deadlock),
        "program {threads:?}"
    );
    let cfg = Config {
        keep_going: true,
        ..test_config()
    };
    let mut mock = Mock::new(threads.to_vec(), None);
    let o = super::explore(&mut mock, &Sc, &cfg, &mut |_| true).unwrap();
    assert_eq!(
        o.stats.executions,
        traces.len() as u64,
        "program {threads:?}"
    );
    same_without_prefixes(&mock, &o, |m| {
        super::explore(m, &Sc, &cfg, &mut |_| true).unwrap()
    });
    if deadlock {
        return false;
    }
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
    true
}

/// Every execution ends in a deadlock (the first to lock waits on a futex for good, holding
/// the mutex). An execution whose reversal let the third thread start first but not lock
/// first ends with every other thread asleep or blocked: its pending lock must still race
/// with the lock taken, or the executions where the third thread locks first are lost to
/// `--keep-going` (2 of 5 were found).
#[test]
fn keep_going_explores_below_a_deadlock() {
    let threads = vec![
        vec![fetch_add(0x100, 0), futex_wait(0x100, 1), store(0x100, 1)],
        vec![
            lock(0x200),
            futex_wait(0x108, 0),
            unlock(0x200),
            futex_wake(0x100),
        ],
        vec![
            load(0x104),
            lock(0x200),
            store(0x108, 0),
            store(0x100, 0),
            unlock(0x200),
        ],
    ];
    assert!(!check_program(&threads));
}

/// A wait that returns picked is still ordered with the wakes around it: taking it as
/// independent of a later wake (it is, in the state where both can run) lost one of these
/// executions, and of an earlier one, added one.
#[test]
fn picked_waits_stay_ordered_with_wakes() {
    let threads = vec![
        vec![
            futex_wake(0x100),
            futex_wait(0x100, 0),
            futex_wait(0x100, 0),
        ],
        vec![futex_wait(0x100, 0)],
        vec![
            futex_wake(0x108),
            load(0x104),
            lock(0x200),
            futex_wake(0x100),
            unlock(0x200),
        ],
    ];
    assert!(!check_program(&threads));
}

/// A wait whose outcome a store decides, and a wake: the wake before the wait (which then
/// sleeps for good) is found only if the wait always counts as queuing, even in the branch
/// where the store came first and it did not queue.
#[test]
fn wake_before_a_wait_that_a_store_decides() {
    let threads = vec![
        vec![fetch_add(0x108, 0), futex_wait(0x100, 0)],
        vec![store(0x100, 1), store(0x108, 1)],
        vec![futex_wake(0x100)],
    ];
    assert!(!check_program(&threads));
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
