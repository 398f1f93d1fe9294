//! The engine against brute force under TSO and PSO: on random small programs, the number of
//! complete executions must equal the number of Shasha-Snir traces (reads-from and coherence
//! order), counted by enumerating every run of the operational store-buffer semantics.

use std::collections::BTreeSet;

use super::super::mock::{load, store, Mock};
use super::super::Config;
use crate::event::Op;
use crate::model::{Model, Pso, Tso};

type Event = (usize, usize); // (thread, index in its script)

#[derive(Clone)]
struct State {
    pc: Vec<usize>,
    /// Per thread: buffered stores (addr, store) in program order.
    buffers: Vec<Vec<(u64, Event)>>,
    memory: Vec<(u64, Event)>,
    rf: Vec<(Event, Option<Event>)>,
    co: Vec<(u64, Event)>,
}

type ReadsFrom = Vec<(Event, Option<Event>)>;
type Coherence = Vec<(u64, Event)>;
type Key = (Vec<usize>, Vec<Vec<(u64, Event)>>, ReadsFrom, Coherence);

fn explore(
    threads: &[Vec<(Op, u64)>],
    pso: bool,
    s: State,
    seen: &mut BTreeSet<Key>,
    out: &mut BTreeSet<(ReadsFrom, Coherence)>,
) {
    // runs that reach the same state have the same futures
    let mut rf = s.rf.clone();
    rf.sort();
    if !seen.insert((s.pc.clone(), s.buffers.clone(), rf, s.co.clone())) {
        return;
    }
    let done = threads.iter().zip(&s.pc).all(|(t, &p)| p == t.len())
        && s.buffers.iter().all(|b| b.is_empty());
    if done {
        let mut rf = s.rf.clone();
        rf.sort();
        let mut co = s.co.clone();
        co.sort_by_key(|&(a, _)| a); // stable: keeps the order of updates per location
        out.insert((rf, co));
        return;
    }
    // the thread inside an atomic section, if any: only it and its buffer go on
    let owner = (0..threads.len()).find(|&t| {
        threads[t][..s.pc[t]]
            .iter()
            .rev()
            .find_map(|(op, _)| match op {
                Op::AtomicBegin => Some(true),
                Op::AtomicEnd => Some(false),
                _ => None,
            })
            .unwrap_or(false)
    });
    for t in 0..threads.len() {
        if owner.is_some_and(|o| o != t) {
            continue;
        }
        // the thread's next instruction (a section's begin and end are fences: the buffer
        // must be empty)
        let fence = |op: &Op| matches!(op, Op::AtomicBegin | Op::AtomicEnd);
        if s.pc[t] < threads[t].len() && (!fence(&threads[t][s.pc[t]].0) || s.buffers[t].is_empty())
        {
            let mut n = s.clone();
            let e = (t, s.pc[t]);
            match threads[t][s.pc[t]].0 {
                Op::Load { addr, .. } => {
                    let from_buffer = s.buffers[t]
                        .iter()
                        .rev()
                        .find(|(a, _)| *a == addr.0)
                        .map(|&(_, st)| st);
                    let from_memory = s
                        .memory
                        .iter()
                        .rev()
                        .find(|(a, _)| *a == addr.0)
                        .map(|&(_, st)| st);
                    n.rf.push((e, from_buffer.or(from_memory)));
                }
                Op::Store { addr, .. } => n.buffers[t].push((addr.0, e)),
                Op::AtomicBegin | Op::AtomicEnd => {}
                _ => unreachable!(),
            }
            n.pc[t] += 1;
            explore(threads, pso, n, seen, out);
        }
        // one of its buffered stores reaches memory
        for i in 0..s.buffers[t].len() {
            let (addr, st) = s.buffers[t][i];
            let oldest_for_addr = !s.buffers[t][..i].iter().any(|(a, _)| *a == addr);
            if (i == 0 || pso) && oldest_for_addr {
                let mut n = s.clone();
                n.buffers[t].remove(i);
                n.memory.push((addr, st));
                n.co.push((addr, st));
                explore(threads, pso, n, seen, out);
            }
        }
    }
}

fn check(model: &dyn Model, pso: bool, programs: usize, seed: u64, sections: bool) {
    let mut lcg = super::super::mock::Lcg::for_test(seed);
    let mut next = move |n: u64| lcg.below(n);
    for _ in 0..programs {
        let nthreads = 2 + next(2) as usize;
        let threads: Vec<Vec<(Op, u64)>> = (0..nthreads)
            .map(|t| {
                (0..1 + next(3))
                    .map(|i| {
                        let addr = 0x100 + 4 * next(2);
                        if next(2) == 0 {
                            load(addr)
                        } else {
                            store(addr, (t * 10 + i as usize + 1) as u64)
                        }
                    })
                    .collect()
            })
            .collect();
        let mut threads = threads;
        for ops in threads.iter_mut().filter(|_| sections) {
            // sometimes wrap a stretch of the thread in an atomic section
            if next(2) == 0 {
                let from = next(ops.len() as u64) as usize;
                let to = from + 1 + next((ops.len() - from) as u64) as usize;
                ops.insert(to, (Op::AtomicEnd, 0));
                ops.insert(from, (Op::AtomicBegin, 0));
            }
        }
        let mut traces = BTreeSet::new();
        let init = State {
            pc: vec![0; nthreads],
            buffers: vec![Vec::new(); nthreads],
            memory: Vec::new(),
            rf: Vec::new(),
            co: Vec::new(),
        };
        explore(&threads, pso, init, &mut BTreeSet::new(), &mut traces);
        let mut mock = Mock::new(threads.clone(), None);
        mock.buffered = true;
        let o = super::explore(&mut mock, model, &Config::default(), &mut |_| true).unwrap();
        assert_eq!(
            o.stats.executions,
            traces.len() as u64,
            "{} program {threads:?}",
            model.name()
        );
        super::brute_force::same_without_prefixes(&mock, &o, |m| {
            super::explore(m, model, &Config::default(), &mut |_| true).unwrap()
        });
        let make = || {
            let mut mock = Mock::new(threads.clone(), None);
            mock.buffered = true;
            mock
        };
        for (workers, split, by_hash) in [(2, (1, 4), false), (3, (3, 8), true)] {
            assert_eq!(
                super::split_executions(&make, model, workers, split, by_hash),
                traces.len() as u64,
                "{} split {workers}/{split:?}/{by_hash}: program {threads:?}",
                model.name()
            );
        }
    }
}

#[test]
fn tso_executions_equal_shasha_snir_traces() {
    check(&Tso { bound: None }, false, 300, 7, false);
}

#[test]
fn pso_executions_equal_shasha_snir_traces() {
    check(&Pso { bound: None }, true, 300, 11, false);
}

/// Atomic sections (a fence at each end, nothing else running inside) are ordered only where
/// they conflict.
#[test]
fn tso_and_pso_with_atomic_sections() {
    check(&Tso { bound: None }, false, 300, 13, true);
    check(&Pso { bound: None }, true, 300, 17, true);
}
