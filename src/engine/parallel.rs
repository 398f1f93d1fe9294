//! Several workers share one exploration (`-j N`), and one exploration splits into shards that
//! run anywhere (`--shard K/N`): both are [`Split`]s of the same tree, see there.
//!
//! Each worker has an executor of its own (its own process of the program, on its own CPU)
//! and explores the leaves it claims first; a shard claims only the leaves whose prefix hash
//! falls to it. The engine starts threads here, never processes: `start` makes the executors.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Condvar, Mutex};

use super::{
    explore_part, Config, ExecError, Executor, Outcome, Portion, Progress, Split, Stats, Step,
};
use crate::model::Model;

/// Leaves of the split top per shard, as estimated from the branching along one path (the real
/// top has far fewer: about 20 for 256 on fib): enough that no worker waits long for another's
/// last subtree, few enough that walking the top again in every worker costs little. 256 gave
/// 1.67x on two workers for fib[num=4], 2048 gives 1.85x (BENCHMARKS.md).
pub const LEAVES: u64 = 2048;

/// Executions explored by every worker before the tree is split: smaller trees are not worth
/// splitting, and the path of the latest execution estimates how the tree branches.
pub const AFTER: u64 = 64;

/// How to split: the workers on this machine, this machine's part, leaves of the top per part.
#[derive(Clone, Copy, Debug)]
pub struct Jobs {
    pub workers: usize,
    pub shard: Option<Shard>,
    pub after: u64,
    pub leaves: u64,
}

/// Part `index` (from 0) of `count` parts of an exploration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

/// Explore with `jobs.workers` workers: `first` is worker 0's executor, `start(w)` makes worker w's
/// (on its thread). `progress` sees the running totals of all workers; returning false stops
/// them all. The outcome adds up the workers' outcomes; the first error (and with `keep_going`
/// every distinct error) is kept.
pub fn explore_jobs<E: Executor + Send>(
    first: &mut E,
    start: &(dyn Fn(usize) -> Result<E, ExecError> + Sync),
    jobs: Jobs,
    model: &dyn Model,
    cfg: &Config,
    progress: &(dyn Fn(&Stats) -> bool + Sync),
) -> Result<Outcome, ExecError> {
    let Jobs {
        workers: jobs,
        shard,
        after,
        leaves,
    } = jobs;
    if cfg.graph {
        if first.may_explore_inside() {
            let inside = explore_graphs_inside(first, start, jobs, shard, model, cfg, progress)?;
            if let Some(o) = inside {
                return Ok(o);
            }
        }
        return explore_graphs(first, start, jobs, shard, model, cfg, progress);
    }
    if jobs <= 1 && shard.is_none() {
        return explore_through(first, model, cfg, &mut |s| progress(s), None);
    }
    // Leaves and the worker that claimed each: a worker whose engine inside the program gave
    // up explores its part again through the checker, and claims its own leaves again.
    let taken = Mutex::new(HashMap::<Vec<Step>, usize>::new());
    let claim = |w: usize, prefix: &[Step]| {
        shard.is_none_or(|s| super::prefix_hash(prefix) % s.count == s.index)
            && *taken.lock().unwrap().entry(prefix.to_vec()).or_insert(w) == w
    };
    // Workers 1.. start (their process too) only once worker 0 splits the tree: a small tree
    // is explored by worker 0 alone.
    let gate = (Mutex::new(Gate::Closed), Condvar::new());
    let set_gate = |to: Gate| {
        let mut g = gate.0.lock().unwrap();
        if *g == Gate::Closed {
            *g = to;
            gate.1.notify_all();
        }
    };
    let on_split = || set_gate(Gate::Open);
    let stop = AtomicBool::new(false);
    let totals = Totals::new(jobs);
    let work = |w: usize, exec: &mut E| {
        let mut each = |s: &Stats| progress(&totals.with(w, s)) && !stop.load(SeqCst);
        let claim = |prefix: &[Step]| claim(w, prefix);
        let split = Split {
            after,
            leaves: leaves * shard.map_or(1, |s| s.count),
            claim: &claim,
            on_split: &on_split,
        };
        let r = explore_through(exec, model, cfg, &mut each, Some(&split));
        if r.as_ref()
            .map_or(true, |o| o.error.is_some() && !cfg.keep_going)
        {
            stop.store(true, SeqCst); // the verdict is known, or a worker failed
        }
        r
    };
    let results: Vec<Result<Outcome, ExecError>> = std::thread::scope(|scope| {
        let others: Vec<_> = (1..jobs)
            .map(|w| {
                let (work, stop, gate) = (&work, &stop, &gate);
                scope.spawn(move || {
                    let g = gate
                        .1
                        .wait_while(gate.0.lock().unwrap(), |g| *g == Gate::Closed);
                    if *g.unwrap() == Gate::Done {
                        return Ok(Outcome::default());
                    }
                    let mut exec = start(w).inspect_err(|_| stop.store(true, SeqCst))?;
                    work(w, &mut exec)
                })
            })
            .collect();
        let first = work(0, first);
        set_gate(Gate::Done);
        joined(first, others)
    });
    merged(results)
}

/// Worker 0's result, then the other workers' once they end.
fn joined<T>(first: T, others: Vec<std::thread::ScopedJoinHandle<'_, T>>) -> Vec<T> {
    let mut results = vec![first];
    results.extend(
        others
            .into_iter()
            .map(|h| h.join().expect("worker panicked")),
    );
    results
}

/// The workers' outcomes added up (the first error if one failed), their errors in the order
/// one worker walking the leaves one after another would have met them.
fn merged(results: Vec<Result<Outcome, ExecError>>) -> Result<Outcome, ExecError> {
    let mut outcome = Outcome::default();
    for r in results {
        outcome.merge(r?);
    }
    outcome.errors.sort_by_key(|(cx, _)| cx.found);
    Ok(outcome)
}

/// The graph engine on `jobs` workers, each inside its program's process. They all visit the
/// top of the exploration; the graphs below it are dealt round the shards (`--shard`), and
/// within this one each goes to the worker that claims it first, so a worker busy with a large
/// part leaves the next ones to the others. (The checker's pool hands graphs to whichever
/// worker has none, but cannot reach into the workers' processes.) `None` when a worker could
/// not: the caller explores through the checker then, from the start.
fn explore_graphs_inside<E: Executor + Send>(
    first: &mut E,
    start: &(dyn Fn(usize) -> Result<E, ExecError> + Sync),
    jobs: usize,
    shard: Option<Shard>,
    model: &dyn Model,
    cfg: &Config,
    progress: &(dyn Fn(&Stats) -> bool + Sync),
) -> Result<Option<Outcome>, ExecError> {
    let taken = Mutex::new(HashMap::<u64, usize>::new());
    let claim = |w: usize, block: u64| *taken.lock().unwrap().entry(block).or_insert(w) == w;
    let stop = AtomicBool::new(false);
    let totals = Totals::new(jobs);
    let work = |w: usize, exec: &mut dyn Executor| {
        let mut each = |s: &Stats| progress(&totals.with(w, s)) && !stop.load(SeqCst);
        let claim = |block: u64| claim(w, block);
        let portion = match (shard, jobs) {
            (None, 0 | 1) => Portion::Whole,
            (s, _) => {
                let shard = s.unwrap_or(Shard { index: 0, count: 1 });
                Portion::Deal(super::trust::Dealing {
                    shard,
                    counts_top: shard.index == 0 && w == 0,
                    claim: (jobs > 1).then_some(&claim),
                })
            }
        };
        let r = exec.explore_inside(model, cfg, portion, &mut each);
        if !matches!(&r, Ok(Some(o)) if o.error.is_none() || cfg.keep_going) {
            stop.store(true, SeqCst); // the verdict is known, or a worker failed
        }
        r
    };
    let results: Vec<Result<Option<Outcome>, ExecError>> = std::thread::scope(|scope| {
        let others: Vec<_> = (1..jobs)
            .map(|w| {
                let (work, stop) = (&work, &stop);
                scope.spawn(move || {
                    let mut exec = start(w).inspect_err(|_| stop.store(true, SeqCst))?;
                    work(w, &mut exec)
                })
            })
            .collect();
        joined(work(0, &mut *first), others)
    });
    let mut outcomes = Vec::new();
    for r in results {
        match r? {
            Some(o) => outcomes.push(Ok(o)),
            None => return Ok(None),
        }
    }
    merged(outcomes).map(Some)
}

/// The graph engine on `jobs` workers: the graphs still to visit are independent, so idle
/// workers take some of another's (`trust::Pool`); a worker starts its process when it first
/// gets one.
fn explore_graphs<E: Executor + Send>(
    first: &mut E,
    start: &(dyn Fn(usize) -> Result<E, ExecError> + Sync),
    jobs: usize,
    shard: Option<Shard>,
    model: &dyn Model,
    cfg: &Config,
    progress: &(dyn Fn(&Stats) -> bool + Sync),
) -> Result<Outcome, ExecError> {
    use super::trust::{explore_shared, Pool};
    let jobs = jobs.max(1);
    let mut pool = Pool::new(jobs, shard);
    loop {
        let totals = Totals::new(jobs);
        let work = |w: usize, exec: &mut dyn Executor, g| {
            let mut each = |s: &Stats| progress(&totals.with(w, s));
            explore_shared(exec, model, cfg, &mut each, &pool, g, None)
        };
        let results: Vec<Result<Outcome, ExecError>> = std::thread::scope(|scope| {
            let others: Vec<_> = (1..jobs)
                .map(|w| {
                    let (work, pool) = (&work, &pool);
                    scope.spawn(move || {
                        let Some(g) = pool.take() else {
                            return Ok(Outcome::default());
                        };
                        let mut exec = start(w).inspect_err(|_| pool.stop())?;
                        work(w, &mut exec, g)
                    })
                })
                .collect();
            let first = work(0, &mut *first, crate::graph::Graph::default());
            joined(first, others)
        });
        let outcome = merged(results)?;
        match pool.again() {
            Some(p) => pool = p,
            None => return Ok(outcome),
        }
    }
}

/// Explore (`split`: this worker's part) inside the program's process if `exec` can, else
/// through it.
fn explore_through(
    exec: &mut dyn Executor,
    model: &dyn Model,
    cfg: &Config,
    progress: Progress,
    split: Option<&Split>,
) -> Result<Outcome, ExecError> {
    let portion = split.map_or(Portion::Whole, Portion::Split);
    match exec.explore_inside(model, cfg, portion, progress)? {
        Some(o) => Ok(o),
        None => explore_part(exec, model, cfg, progress, split),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Gate {
    Closed,
    Open,
    Done,
}

/// Each worker's latest statistics, for the progress of all of them.
struct Totals(Mutex<Vec<Stats>>);

impl Totals {
    fn new(workers: usize) -> Totals {
        Totals(Mutex::new(vec![Stats::default(); workers.max(1)]))
    }

    /// The sum over the workers, worker `w`'s now `s`.
    fn with(&self, w: usize, s: &Stats) -> Stats {
        let mut totals = self.0.lock().unwrap();
        totals[w] = s.clone();
        sum(&totals)
    }
}

fn sum(all: &[Stats]) -> Stats {
    let mut s = Stats::default();
    for t in all {
        s.executions += t.executions;
        s.blocked += t.blocked;
        s.bounded += t.bounded;
        s.events += t.events;
        s.depth = s.depth.max(t.depth);
    }
    s
}

impl Outcome {
    /// Add another worker's outcome to this one.
    pub fn merge(&mut self, other: Outcome) {
        self.stats = sum(&[self.stats.clone(), other.stats]);
        // of the errors and counterexamples found by several workers, the one met first
        if let Some(e) = other.error {
            if self.error.as_ref().is_none_or(|s| e.found < s.found) {
                self.error = Some(e);
            }
        }
        for (cx, n) in other.errors {
            match self
                .errors
                .iter_mut()
                .find(|(e, _)| e.kind == cx.kind && e.message == cx.message)
            {
                Some(e) => {
                    e.1 += n;
                    if cx.found < e.0.found {
                        e.0 = cx;
                    }
                }
                None => self.errors.push((cx, n)),
            }
        }
        for (seen, n) in other.observations {
            *self.observations.entry(seen).or_insert(0) += n;
        }
        self.top = self.top.or(other.top);
        self.shared_found.extend(other.shared_found);
    }
}

#[cfg(test)]
mod tests {
    use super::super::mock::{load, store, Check, Mock};
    use super::*;
    use crate::model::{Sc, Tso};

    const X: u64 = 0x100;
    const Y: u64 = 0x104;

    /// Three threads storing to and loading from two locations: enough executions for the
    /// tree to split.
    fn program() -> Vec<Vec<(crate::event::Op, u64)>> {
        (0..3)
            .map(|t| vec![store(X, t + 1), load(Y), store(Y, t + 1), load(X)])
            .collect()
    }

    const LEAVES: u64 = 16;
    const AFTER: u64 = 8;

    fn run(
        workers: usize,
        shard: Option<Shard>,
        model: &dyn Model,
        check: Option<Check>,
    ) -> Outcome {
        let mock = || {
            let mut m = Mock::new(program(), check);
            m.buffered = model.buffers().is_some();
            m
        };
        let mut first = mock();
        let start = |_| Ok(mock());
        explore_jobs(
            &mut first,
            &start,
            Jobs {
                workers,
                shard,
                after: AFTER,
                leaves: LEAVES,
            },
            model,
            &Config::default(),
            &|_| true,
        )
        .unwrap()
    }

    #[test]
    fn workers_and_shards_count_what_one_worker_counts() {
        for model in [&Sc as &dyn Model, &Tso { bound: None }] {
            let alone = run(1, None, model, None).stats.executions;
            assert!(alone > 10 * LEAVES, "{alone} executions: too few to split");
            for jobs in [2, 3] {
                assert_eq!(run(jobs, None, model, None).stats.executions, alone);
            }
            let parts: Vec<Outcome> = (0..3)
                .map(|index| run(2, Some(Shard { index, count: 3 }), model, None))
                .collect();
            let shards: u64 = parts.iter().map(|o| o.stats.executions).sum();
            assert_eq!(shards, alone, "{}", model.name());
            // every shard walked the same top, and it was split
            assert!(parts[0].top.is_some_and(|(leaves, _)| leaves > 1));
            assert!(
                parts.iter().all(|o| o.top == parts[0].top),
                "{}",
                model.name()
            );
        }
    }

    #[test]
    fn an_error_stops_every_worker() {
        // fails when the first thread's stores are the last to both locations
        let check: Check = |m| !(m.get(&X) == Some(&1) && m.get(&Y) == Some(&1));
        let o = run(2, None, &Sc, Some(check));
        assert!(o.error.is_some());
        assert!(o.stats.executions < run(1, None, &Sc, None).stats.executions);
    }
}
