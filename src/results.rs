//! What an exploration found: its statistics, the errors with their counterexamples, and the
//! observations of litmus tests. Made by the engine; read by the report, the litmus front-end,
//! the shards' combination and the worker's answer to the checker.

use std::collections::BTreeMap;

use crate::event::{Event, Pending, Reply, ThreadId};

/// The values an execution recorded with `__smc_observe`: (index, value), sorted by index.
pub type Observation = Vec<(u32, u64)>;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    Assertion,
    Crash,
    Deadlock,
    Hang,
    /// The process exited with a non-zero status.
    Exit,
    /// A Rust panic, in any thread.
    Panic,
}

/// What a hang's message says when a thread ran past the time limit without a visible
/// operation (not a livelock of await loops): it may be spinning on memory the checker did not
/// see, such as its own stack that another thread writes.
pub const TIMEOUT_HANG: &str = "ran past the per-execution time limit";

impl ErrorKind {
    pub fn name(&self) -> &'static str {
        match self {
            ErrorKind::Assertion => "assertion",
            ErrorKind::Crash => "crash",
            ErrorKind::Deadlock => "deadlock",
            ErrorKind::Hang => "hang",
            ErrorKind::Exit => "exit",
            ErrorKind::Panic => "panic",
        }
    }
}

/// A thread of the failing execution as the report shows it.
#[derive(Clone, Debug)]
pub struct ThreadInfo {
    pub id: ThreadId,
    pub parent: Option<ThreadId>,
    /// Start routine address (0 for main).
    pub start: u64,
    /// What it was waiting for at the end, if it had not exited.
    pub pending: Option<Pending>,
    /// For the updater of a store buffer: the thread whose buffer it is.
    pub buffer_of: Option<ThreadId>,
}

#[derive(Clone, Debug)]
pub struct Counterexample {
    pub kind: ErrorKind,
    pub message: String,
    pub trace: Vec<Event>,
    pub threads: Vec<ThreadInfo>,
    /// For crashes: the faulting instruction and address, and the thread.
    pub fault: Option<(ThreadId, u64, u64)>,
    pub signal: Option<i32>,
    /// The decisions that lead to it, one per event of `trace` ([`replay`] takes them).
    pub schedule: Vec<Step>,
    /// Under the graph engine: the reply each step of `schedule` was given (the bytes a read
    /// was given to read), which a replay gives again. Empty: the engine decides them again.
    pub replies: Vec<Reply>,
    /// The steps of `schedule` after which their thread ran past the time limit without
    /// another visible operation (set aside as hung): a replay expects them to hang again,
    /// after a short limit rather than the full one.
    pub hung: Vec<usize>,
    /// Stores went through store buffers (TSO, PSO): memory changes at updates.
    pub buffered: bool,
    /// Which write each read of the trace read from, as the engine chose it (the graph
    /// engine): (the read's index in `trace`, its write's, `None`: the initial value). Empty:
    /// each read read the latest write to memory before it.
    pub sources: Vec<(usize, Option<usize>)>,
    /// Under a graph engine's model that orders each location's writes: per location with
    /// more than one write in `trace`, their indices in coherence order. Empty: coherence is
    /// the order of the trace.
    pub coherence: Vec<Vec<usize>>,
    /// Where the model orders accesses by their dependencies (power): (the load's index in
    /// `trace`, the dependent access's, `addr`, `data`, `ctrl` or `ctrl+isync`).
    pub dependencies: Vec<(usize, usize, &'static str)>,
    /// Pairs of one thread's accesses (indices in `trace`, in program order) that took effect
    /// the other way round, with what let them.
    pub reorderings: Vec<(usize, usize, &'static str)>,
    /// Why the execution is not sequentially consistent where no pair was reordered.
    pub weakness: Option<&'static str>,
    /// Heap blocks the execution allocated, in order: (address, size, call site).
    pub heap: Vec<(u64, u64, u64)>,
    /// What the execution wrote to stdout and stderr, when captured.
    pub output: Option<Output>,
    /// Where the exploration met it: the leaf of the split top it lies below (0 before the
    /// split, or without one) and how many executions its worker had run. Workers meet leaves
    /// in one order and each explores a leaf alone, so this orders the errors of all workers
    /// the same way in every run.
    pub found: (u64, u64),
}

/// The end of what an execution wrote (stdout and stderr interleaved), and how much it wrote.
#[derive(Clone, Debug)]
pub struct Output {
    pub tail: Vec<u8>,
    pub total: u64,
    /// The program wrote more than the capture holds; later writes failed.
    pub cut: bool,
}

/// What a replay follows ([`crate::engine::replay`]): a counterexample's steps, the reply
/// each was given under the graph engine (empty under the interleaving engine, which decides
/// them again), and which of them hung ([`Counterexample::hung`]).
#[derive(Clone, Debug, Default)]
pub struct Schedule {
    pub steps: Vec<Step>,
    pub replies: Vec<Reply>,
    pub hung: Vec<usize>,
}

/// One decision of a schedule: the thread that ran, by its spawn-tree path (the n-th child
/// of the n-th child... of main; empty for main; store-buffer updaters have keys from 2^63),
/// and which outcome of a choice (which waiter a signal wakes) it took.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Step {
    pub thread: Vec<u64>,
    pub alt: u32,
}

#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Executions that ran to their end (complete, or ending in the error).
    pub executions: u64,
    /// Executions abandoned because every enabled thread was asleep or an assume failed.
    pub blocked: u64,
    /// Executions cut at the step bound.
    pub bounded: u64,
    pub events: u64,
    /// Events of the latest execution (its depth in the exploration tree).
    pub depth: u64,
}

#[derive(Clone, Debug, Default)]
pub struct Outcome {
    pub stats: Stats,
    /// The first error found, with its counterexample.
    pub error: Option<Counterexample>,
    /// Every distinct error (kind and message): its first counterexample and how many
    /// executions ended in it.
    pub errors: Vec<(Counterexample, u64)>,
    /// How many complete executions (not ending in an error) recorded each observation; empty
    /// when the program observes nothing.
    pub observations: BTreeMap<Observation, u64>,
    /// Split exploration ran to its end: the leaves of the top and a hash of their prefixes
    /// (the same in every worker and shard of one exploration, if the program is deterministic).
    pub top: Option<(u64, u64)>,
    /// The exploration stopped because one thread accessed another's stack or TLS memory that
    /// was not known to be shared: those ranges [lo, hi). It must be explored again with them
    /// shared (its executions did not see the owner's accesses to them).
    pub shared_found: Vec<(u64, u64)>,
}
