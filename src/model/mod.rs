//! Memory models: which events conflict, so the engine knows which orders to explore.
//! One file per model; the engine reaches them only through [`Model`].

mod axioms;
mod power;
mod pso;
mod ra;
mod relation;
mod sc;
mod tso;

pub use power::Power;
pub use pso::Pso;
pub use ra::Ra;
pub use sc::Sc;
pub use tso::Tso;

use crate::event::{Event, Op};
use crate::graph::{EventId, Graph};

/// How a model buffers stores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferKind {
    /// One FIFO buffer per thread (TSO).
    Fifo,
    /// One buffer per thread and location (PSO).
    PerLocation,
}

/// Why an execution is not sequentially consistent, as a counterexample says it.
#[derive(Default)]
pub struct Weakness {
    /// Pairs of one thread's accesses, in program order, that took effect the other way
    /// round, each with what let them (no fence between them...).
    pub reordered: Vec<(EventId, EventId, &'static str)>,
    /// Where no pair was reordered and the execution still is not sequentially consistent:
    /// why.
    pub otherwise: Option<&'static str>,
}

/// What the engine needs of a memory model.
pub trait Model: Sync {
    /// Name as given on the command line.
    fn name(&self) -> &'static str;
    /// Do two events of different threads conflict (their order can change the outcome)?
    fn conflicts(&self, a: &Event, b: &Event) -> bool;
    /// Are fences visible events under this model?
    fn fences_visible(&self) -> bool;
    /// The store buffers of this model and their bound (pending stores per buffer), if any.
    fn buffers(&self) -> Option<(BufferKind, Option<usize>)> {
        None
    }
    /// Does the model allow this execution graph (the graph engine asks after each event it
    /// adds)?
    fn consistent(&self, g: &Graph) -> bool;
    /// [`Model::consistent`] for a graph that was consistent before `e` was added (or, by a
    /// revisit, given its source): a model may check only what `e` can change.
    fn consistent_after(&self, g: &Graph, _e: EventId) -> bool {
        self.consistent(g)
    }
    /// Which of `sources` read `e` of `g` may read from, each keeping `g` consistent, where
    /// `e` is the last event of its thread, nothing reads from it and `g` is consistent
    /// without it: found at once for all of them (`None`: [`Model::consistent_after`] is
    /// asked of each).
    fn consistent_sources(
        &self,
        g: &Graph,
        e: EventId,
        sources: &[Option<EventId>],
    ) -> Option<Vec<bool>> {
        let preserved = self.preserved()?;
        Some(axioms::consistent_sources(g, e, sources, preserved))
    }
    /// Which of `sources` update `e` of `g` may read from, each keeping `g` consistent (the
    /// update right after its source in coherence order, where the model has one), where `e`
    /// is the last event of its thread, nothing reads from it and `g` is consistent without
    /// it: found at once for all of them (`None`: [`Model::consistent_after`] is asked of
    /// each graph). `e` may still be labelled a read in `g`.
    fn consistent_update_sources(
        &self,
        _g: &Graph,
        _e: EventId,
        _sources: &[Option<EventId>],
    ) -> Option<Vec<bool>> {
        None
    }
    /// Which of `places` in coherence order write `e` of `g` may take, each keeping `g`
    /// consistent, where `e` is the last event of its thread, nothing reads from it and `g`
    /// is consistent without it: found at once for all of them (`None`: [`Model::consistent_after`]
    /// is asked of each).
    fn consistent_places(&self, g: &Graph, e: EventId, places: &[usize]) -> Option<Vec<bool>> {
        let preserved = self.preserved()?;
        Some(axioms::consistent_places(g, e, places, preserved))
    }
    /// For an x86 model, the program order its global order keeps ([`axioms`]).
    fn preserved(&self) -> Option<axioms::Preserved> {
        None
    }
    /// Does the graph engine choose each write's place in coherence order? If not (weak
    /// traces: program order and reads-from only), `consistent` asks only that some order
    /// exists.
    fn enumerates_coherence(&self) -> bool {
        true
    }
    /// Is a full fence an atomic update of one location all fences share (so fences are
    /// totally ordered and each synchronises with the next)? For a model whose other orders do
    /// not already make a fence's effect (ra: SC fences as in RC11, approximated).
    fn fences_are_updates(&self) -> bool {
        false
    }
    /// Does the model order accesses by their dependencies on earlier reads (the graph engine
    /// then records them in each event: `GraphEvent::deps`)?
    fn uses_dependencies(&self) -> bool {
        false
    }
    /// Does the model allow cycles in program order and reads-from (load buffering: a read of
    /// a write that depends on what comes after the read in its thread)? Then a revisit keeps
    /// the events the write depends on as [`Model::depends_within`] says, not its whole
    /// porf-prefix, and graphs may have holes.
    fn porf_cycles(&self) -> bool {
        false
    }
    /// For a model with porf cycles: the events of `e`'s own thread that `e` depends on
    /// (which a revisit by a write that depends on `e` must keep), at least those its existence
    /// and values come from; the graph engine closes the set over them and reads-from.
    fn depends_within(&self, _g: &Graph, e: EventId, out: &mut Vec<EventId>) {
        if e.index > 0 {
            out.push(EventId {
                thread: e.thread,
                index: e.index - 1,
            });
        }
    }
    /// For a counterexample: what in graph `g` a sequentially consistent machine would not
    /// do. Nothing where the model reorders nothing.
    fn weakness(&self, _g: &Graph) -> Weakness {
        Weakness::default()
    }
    /// Is a store-conditional (POWER's `stwcx.`) a branch: failure (no write) or a write atomic
    /// with its load-reserve (herd's `ppc.cat`: it may fail whatever memory holds), rather than
    /// a compare-exchange of what the load-reserve read?
    fn store_conditionals_branch(&self) -> bool {
        false
    }
    /// Is the model explored over execution graphs only (no interleaving engine)?
    fn graph_only(&self) -> bool {
        false
    }
    /// The write to `addr` among the events `within`, `except` one whose write is not added
    /// yet (an update's read is), that the model counts as the latest (`None`: the initial
    /// value): a read added *maximally* reads from it. The last in coherence order, for a
    /// model that enumerates it.
    fn latest_write(
        &self,
        g: &Graph,
        addr: u64,
        within: &dyn Fn(EventId) -> bool,
        except: Option<EventId>,
    ) -> Option<EventId> {
        g.co_of(addr)
            .iter()
            .rev()
            .copied()
            .find(|&w| Some(w) != except && within(w))
    }
    /// [`Model::latest_write`] of each of `addrs` over the whole graph.
    fn latest_writes(&self, g: &Graph, addrs: &[u64]) -> Vec<Option<EventId>> {
        addrs
            .iter()
            .map(|&addr| self.latest_write(g, addr, &|_| true, None))
            .collect()
    }
}

/// Conflicts in chronological traces (TSO, PSO): a store touches nothing (its update does), and
/// a thread's loads are never ordered with its own updates.
fn buffered_conflicts(a: &Event, b: &Event) -> bool {
    if matches!(a.op, Op::ProcessExit { .. }) || matches!(b.op, Op::ProcessExit { .. }) {
        return true;
    }
    a.owner() != b.owner() && a.footprint(true).conflicts(&b.footprint(true))
}

/// The models this build supports, by command-line name. `bound` limits pending stores per
/// buffer; 0 leaves no room for any, which is SC.
pub fn by_name(name: &str, bound: Option<usize>) -> Option<Box<dyn Model>> {
    match (name, bound) {
        ("sc", _) | ("tso" | "pso", Some(0)) => Some(Box::new(Sc)),
        ("tso", _) => Some(Box::new(Tso { bound })),
        ("pso", _) => Some(Box::new(Pso { bound })),
        ("ra", _) => Some(Box::new(Ra)),
        ("power", _) => Some(Box::new(Power)),
        _ => None,
    }
}

pub const MODEL_NAMES: &[&str] = &["sc", "tso", "pso", "ra", "power"];

/// [`by_name`], or the message for a name that is not a model.
pub fn named(name: &str, bound: Option<usize>) -> Result<Box<dyn Model>, String> {
    by_name(name, bound).ok_or_else(|| {
        format!(
            "unknown model `{name}`; available: {}",
            MODEL_NAMES.join(", ")
        )
    })
}
