//! The exploration engine: runs executions through an [`Executor`], decides which thread runs
//! next, and uses the races seen in one execution to choose the next (source-DPOR with sleep
//! sets, Abdulla et al. POPL 2014, Algorithm 1).
//!
//! Architecture invariant: the engine does no I/O and knows nothing of processes; it sees the
//! program only through [`Executor`] and the memory model only through [`Model`](crate::model::Model).

pub mod buffer;
mod dpor;
#[cfg(test)]
mod mock;
pub mod parallel;
pub mod sync;
pub mod trust;

use crate::event::{Pending, StoreBytes};
use crate::event::{Reply, ScriptStep};
use crate::results::{ErrorKind, Observation, Outcome, Output, Stats, Step};

pub use dpor::{explore, explore_part, replay};

/// What a slot of the execution is doing, as seen between two steps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SlotState {
    /// Waiting for permission to run its pending operation.
    Stopped(Pending),
    Exited,
    /// Ran past the time limit without a visible operation: set aside for the rest of the
    /// execution, which goes on without it (executors whose threads are coroutines).
    Hung,
}

/// What the previously executed event of a slot turned out to do.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Executed {
    pub wrote: bool,
    pub read: Option<u64>,
    pub written: Option<u64>,
    /// The bytes a buffered store wrote into its buffer.
    pub stored: Option<StoreBytes>,
    /// Under the graph engine, where the store stayed in memory: what it wrote over.
    pub replaced: Option<StoreBytes>,
}

#[derive(Clone, Debug)]
pub struct SlotView {
    pub parent: u32,
    pub state: SlotState,
    pub prev: Option<Executed>,
}

impl SlotView {
    /// A view to be overwritten (a reader fills views in place).
    pub fn placeholder() -> SlotView {
        SlotView {
            parent: 0,
            state: SlotState::Exited,
            prev: None,
        }
    }
}

/// Why the runtime says the process died.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RuntimeErrorKind {
    Assertion,
    Signal(i32),
    Verifier,
    /// Past a limit of the checker's (more threads alive than it has slots): the execution is
    /// cut, as at the step bound.
    Limit,
    /// A Rust panic: its message is in the program's output.
    Panic,
}

#[derive(Clone, Debug)]
pub struct RuntimeError {
    pub kind: RuntimeErrorKind,
    pub pc: u64,
    pub addr: u64,
    pub message: String,
    pub slot: Option<u32>,
}

/// How the process of an execution ended.
#[derive(Clone, Debug)]
pub enum ProcessEnd {
    Exited(i32),
    Signaled(i32),
}

#[derive(Clone, Debug)]
pub struct Ended {
    pub how: ProcessEnd,
    pub error: Option<RuntimeError>,
}

/// All slots between two steps, or the end of the process.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    pub slots: Vec<SlotView>,
    pub ended: Option<Ended>,
}

#[derive(Debug)]
pub enum ExecError {
    /// A thread ran longer than the per-execution time limit without a visible event.
    Timeout { slot: u32 },
    /// The checker cannot go on (bad program, broken channel, unsupported instruction).
    Fatal(String),
    /// The user interrupted the checker.
    Interrupted,
}

/// One way of running the program: a process under the runtime, or a test double.
pub trait Executor {
    /// Start an execution; returns when its first thread waits at its first visible operation.
    fn begin(&mut self) -> Result<Snapshot, ExecError>;
    /// What the access at `pc` depends on (the loads' addresses as the program runs), if the
    /// program's instruction set has such an analysis (an access it did not see then may
    /// depend on anything before it). `None`: no analysis, and nothing depends on anything.
    fn dependencies(&self, pc: u64) -> Option<crate::decode::SiteDependencies> {
        let _ = pc;
        None
    }
    /// Let `slot` run its pending operation with `reply`; returns when every thread waits again
    /// or the process has ended.
    fn step(&mut self, slot: u32, reply: &Reply) -> Result<Snapshot, ExecError>;
    /// As [`Executor::step`], but an executor whose program runs apart from the engine may
    /// return `None` as soon as `slot` runs: the engine works meanwhile, then takes the state
    /// with [`Executor::finish_step`] (and calls nothing else before).
    fn start_step(&mut self, slot: u32, reply: &Reply) -> Result<Option<Snapshot>, ExecError> {
        self.step(slot, reply).map(Some)
    }
    /// The state after the step [`Executor::start_step`] started.
    fn finish_step(&mut self) -> Result<Snapshot, ExecError> {
        Err(ExecError::Fatal("internal: no step was started".into()))
    }
    /// As [`Executor::step`], for a step that hung in an earlier execution with the same
    /// prefix ([`SlotState::Hung`]): it hangs again, and the executor may set its thread aside
    /// after a short while rather than the full time limit.
    fn step_hanging(&mut self, slot: u32, reply: &Reply) -> Result<Snapshot, ExecError> {
        self.step(slot, reply)
    }
    /// Take back a snapshot the engine is done with, for the next one to reuse its allocation.
    fn recycle(&mut self, snap: Snapshot) {
        let _ = snap;
    }
    /// A buffered store of slot `owner` reaches memory: write `bytes` at `addr` before any
    /// thread runs again.
    fn commit(&mut self, owner: u32, addr: u64, bytes: &[u8]) -> Result<(), ExecError>;
    /// End the current execution if it still runs (nothing more will be scheduled).
    fn end(&mut self) -> Result<(), ExecError>;
    /// The next execution begins with these steps, in this order: the engine will ask for
    /// exactly them first (`step` and `commit` with the same slots, replies and bytes), so an
    /// executor may run them ahead and answer those calls from what it recorded.
    fn script(&mut self, steps: Vec<ScriptStep>) {
        let _ = steps;
    }
    /// Whether [`Executor::script`] runs the steps ahead (otherwise the engine need not make
    /// them).
    fn takes_script(&self) -> bool {
        false
    }
    /// Whether code of the program that reads memory may run after its exit although it
    /// registered no exit handler in the execution (static destructors, where the process
    /// really exits).
    fn runs_code_after_exit(&self) -> bool {
        true
    }
    /// How many steps [`Executor::begin_after`] can carry out (0: it cannot).
    fn max_prefix(&self) -> usize {
        0
    }
    /// Start an execution and carry out `steps` of the previous one by itself, without the
    /// engine (which restored its own state after them). Returns the state after them and how
    /// many ran: fewer when a thread was not stopped where the step says (the program behaves
    /// differently), the state after those then.
    fn begin_after(
        &mut self,
        steps: &mut dyn Iterator<Item = &ScriptStep>,
    ) -> Result<(Snapshot, usize), ExecError> {
        let _ = steps;
        Err(ExecError::Fatal(
            "internal: this executor cannot run a prefix".into(),
        ))
    }
    /// Give the stopped execution to a debugger: `slot` may run its pending operation with
    /// `reply` when the debugger lets it; returns when the debugger is done.
    fn hand_over(&mut self, slot: u32, reply: &Reply) -> Result<(), ExecError> {
        let _ = (slot, reply);
        Err(ExecError::Fatal("this target cannot be debugged".into()))
    }
    /// The program's instruction for a pc the runtime reported: a call the runtime handles,
    /// made from a relocated copy of the program's code, is at its return address there.
    fn code_address(&self, pc: u64) -> u64 {
        pc
    }
    /// The heap blocks the execution that just ended allocated: (address, size, call site).
    fn heap_blocks(&self) -> Vec<(u64, u64, u64)> {
        Vec::new()
    }
    /// What the execution that just ended wrote to stdout and stderr, if captured.
    fn output(&self) -> Option<Output> {
        None
    }
    /// What the execution that just ended recorded with `__smc_observe`.
    fn observed(&self) -> Observation {
        Vec::new()
    }
    /// Stack or TLS memory of one thread that another accessed, not yet among the memory the
    /// program was started to treat as shared: ranges [lo, hi), found since the start. The
    /// exploration stops when there are some (its executions did not see the owner's accesses
    /// to that memory); the caller explores again with them shared.
    fn found_shared(&self) -> Vec<(u64, u64)> {
        Vec::new()
    }
    /// Whether [`Executor::explore_inside`] may explore (false: it surely returns `None`, and
    /// other workers need not be started for it).
    fn may_explore_inside(&self) -> bool {
        false
    }
    /// Explore the whole tree (with `portion`, this worker's part of it) inside the program's
    /// process, where an engine of its own runs next to the program
    /// (`crate::supervisor::in_worker`), and report each error as [`explore`] would. `None` when
    /// this executor cannot (it then explores nothing): the caller explores through it.
    fn explore_inside(
        &mut self,
        model: &dyn crate::model::Model,
        cfg: &Config,
        portion: Portion,
        progress: Progress,
    ) -> Result<Option<Outcome>, ExecError> {
        let _ = (model, cfg, portion, progress);
        Ok(None)
    }
}

/// The part of an exploration one worker's engine explores inside the program's process.
#[derive(Clone, Copy)]
pub enum Portion<'a> {
    Whole,
    /// The interleaving engine's part of a tree split between workers.
    Split(&'a Split<'a>),
    /// The graph engine's part: the graphs below the top every worker visits dealt to it.
    Deal(trust::Dealing<'a>),
}

/// What the end of an execution's process means.
pub(crate) enum EndVerdict {
    Complete,
    /// Cut at a limit of the checker's.
    Bounded,
    Error {
        kind: ErrorKind,
        message: String,
        /// The failing slot, instruction and data address.
        fault: Option<(u32, u64, u64)>,
        signal: Option<i32>,
    },
}

/// The verdict on an ended execution (a panic's message is read from the output later, with
/// the counterexample's).
pub(crate) fn end_verdict(ended: &Ended, allow_exit_status: bool) -> EndVerdict {
    let Some(err) = &ended.error else {
        return match ended.how {
            ProcessEnd::Signaled(sig) => EndVerdict::Error {
                kind: ErrorKind::Crash,
                message: format!(
                    "the program was killed by signal {} ({})",
                    sig,
                    dpor::signal_name(sig)
                ),
                fault: None,
                signal: Some(sig),
            },
            ProcessEnd::Exited(status) if status != 0 && !allow_exit_status => EndVerdict::Error {
                kind: ErrorKind::Exit,
                message: format!("the program exited with status {status}"),
                fault: None,
                signal: None,
            },
            ProcessEnd::Exited(_) => EndVerdict::Complete,
        };
    };
    let fault = err.slot.map(|s| (s, err.pc, err.addr));
    let (kind, message, signal) = match err.kind {
        RuntimeErrorKind::Limit => return EndVerdict::Bounded,
        RuntimeErrorKind::Panic => (ErrorKind::Panic, "panic".to_string(), None),
        RuntimeErrorKind::Assertion | RuntimeErrorKind::Verifier => {
            (ErrorKind::Assertion, err.message.clone(), None)
        }
        RuntimeErrorKind::Signal(sig) => {
            let message = match sig {
                libc::SIGABRT => "abort() called".to_string(),
                libc::SIGFPE | libc::SIGILL | libc::SIGTRAP => dpor::signal_name(sig).to_string(),
                _ => format!("{} at address {:#x}", dpor::signal_name(sig), err.addr),
            };
            (ErrorKind::Crash, message, Some(sig))
        }
    };
    EndVerdict::Error {
        kind,
        message,
        fault,
        signal,
    }
}

/// Values a nondet call returns by default: 0 and 1.
pub const DEFAULT_NONDET_VALUES: u32 = 2;

#[derive(Clone, Debug)]
pub struct Config {
    /// Visible events per execution before it is cut.
    pub max_steps: usize,
    /// Go on after an error: explore everything, counting each distinct error.
    pub keep_going: bool,
    /// A process that exits with a non-zero status is not an error.
    pub allow_exit_status: bool,
    /// Stop after this many executions (complete, blocked or cut), if any: a look at the
    /// first executions only.
    pub max_executions: Option<u64>,
    /// Spurious wake-ups each thread may have from `pthread_cond_wait` per execution (POSIX
    /// allows them; 0: a wait returns only when signalled).
    pub spurious_wakeups: u32,
    /// Values a `__VERIFIER_nondet_*` call may return, each explored (0, 1, -1, 2, -2 ... for
    /// signed types, 0, 1, 2 ... for unsigned ones; at most 2 for `_Bool`).
    pub nondet_values: u32,
    /// Explore execution graphs ([`trust`]) rather than interleavings: for comparison under
    /// sc, tso and pso; always under a model that only has graphs (ra).
    pub graph: bool,
    /// A thread that has taken this many steps in a row gives way to another that can run
    /// (the one the engine would take next otherwise goes on where none can): a thread that
    /// spins with visible events (a loop that writes, a timed wait that times out) would else
    /// keep the others from ever running before the step bound cuts the execution, and the
    /// executions where they end its spin from being explored. Which thread runs next is the
    /// engine's free choice: the executions explored are the same.
    pub fair_after: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_steps: DEFAULT_MAX_STEPS,
            keep_going: false,
            allow_exit_status: false,
            max_executions: None,
            spurious_wakeups: 0,
            nondet_values: DEFAULT_NONDET_VALUES,
            graph: false,
            fair_after: DEFAULT_FAIR_AFTER,
        }
    }
}

pub const DEFAULT_MAX_STEPS: usize = 50_000;

/// Steps a thread takes in a row before another that can run takes one ([`Config::fair_after`]).
pub const DEFAULT_FAIR_AFTER: u32 = 256;

/// How one worker takes part in an exploration shared by several (`-j`, `--shard`).
///
/// The top of the exploration tree, down to a depth chosen after the first executions, is
/// branched fully: every awake thread at each node (in spawn-tree order, with sleep sets, so
/// that every worker walks the same top). Each subtree hanging below the top, a leaf, is
/// explored by the one worker that claims it, with source-DPOR as usual. A race found in a
/// subtree can only add branches inside it or to the top, which has them all already, so the
/// subtrees are independent: together they cover every trace, and since sleep sets let at
/// most one complete execution per trace through, the complete executions of all workers add
/// up to those of one sequential exploration (blocked ones may differ).
pub struct Split<'a> {
    /// Executions every worker explores the same way before the tree is split (a tree that
    /// small is not worth splitting); the worker that claims the empty prefix counts them.
    pub after: u64,
    /// Leaves the top should have: its depth is the first at which the product of the
    /// branching along the latest execution reaches this.
    pub leaves: u64,
    /// Does this worker explore the leaf reached by these decisions? Every leaf must be
    /// claimed by exactly one worker.
    pub claim: &'a (dyn Fn(&[Step]) -> bool + Sync),
    /// Called when the tree is split (other workers may start then).
    pub on_split: &'a (dyn Fn() + Sync),
}

/// A hash of a schedule prefix that does not change between builds or machines (FNV-1a), so
/// that `--shard K/N` runs on different machines agree on who owns which leaf.
pub fn prefix_hash(prefix: &[Step]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |v: u64| {
        for b in v.to_le_bytes() {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    };
    for step in prefix {
        eat(step.thread.len() as u64);
        step.thread.iter().for_each(|&k| eat(k));
        eat(step.alt as u64);
    }
    h
}

/// Progress callback: called after each execution with the running statistics. Returning
/// false stops the exploration (interrupted).
pub type Progress<'a> = &'a mut dyn FnMut(&Stats) -> bool;
