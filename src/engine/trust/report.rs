//! The graph engine's counterexample: the trace of the execution that ended in an error,
//! with what the graph adds to it (which write each read read, coherence order, the
//! dependencies, and the model's account of what made it weak).

use crate::graph::{EventId, Graph, Label};
use crate::results::{Counterexample, ErrorKind, Step, ThreadInfo};

use super::{stopped, Snapshot, Trust, FENCE_LOCATION};
use crate::engine::dpor::own_report;
use crate::engine::{end_verdict, EndVerdict};
use crate::event::ThreadId;

impl Trust<'_> {
    /// An error the running execution ended in: counted with its kind and message, the first
    /// of each kept with its counterexample.
    pub(super) fn note_error(
        &mut self,
        snap: &Snapshot,
        g: &Graph,
        kind: ErrorKind,
        message: String,
    ) {
        let output = self.exec.output();
        let signal = match snap.ended.as_ref().map(|e| end_verdict(e, true)) {
            Some(EndVerdict::Error { signal, .. }) => signal,
            _ => None,
        };
        let message = own_report(&kind, signal, output.as_ref()).unwrap_or(message);
        let found = (0, self.outcome.stats.executions);
        if let Some((_, n)) = self
            .outcome
            .errors
            .iter_mut()
            .find(|(c, _)| c.kind == kind && c.message == message)
        {
            *n += 1;
            return;
        }
        let threads = (0..g.threads.len() as u32)
            .filter(|&t| !g.threads[t as usize].is_empty() || t == 0)
            .map(|t| ThreadInfo {
                id: ThreadId(t),
                parent: g.parents[t as usize].map(|p| ThreadId(p.thread)),
                start: g.threads[t as usize].first().map_or(0, |ev| ev.pc),
                pending: self.slot_of(t).and_then(|s| stopped(snap, s)),
                buffer_of: None,
            })
            .collect();
        // (an access in pieces is one step, named by its first piece)
        let at = |e: EventId| {
            let first = super::split::first_piece(g, e);
            self.trace_events.iter().position(|&x| x == Some(first))
        };
        let sources = self
            .trace_events
            .iter()
            .enumerate()
            .filter_map(|(i, &e)| {
                let label = g.label(e?);
                let rf = label
                    .rf()
                    .filter(|_| label.location() != Some(FENCE_LOCATION))?;
                Some((i, rf.and_then(at)))
            })
            .collect();
        let weakness = self.model.weakness(g);
        let mut c = Counterexample {
            kind,
            message,
            sources,
            coherence: if self.model.enumerates_coherence() {
                coherence_in(g, &at)
            } else {
                Vec::new()
            },
            dependencies: if self.model.uses_dependencies() {
                dependencies_in(g, &at)
            } else {
                Vec::new()
            },
            reorderings: (weakness.reordered.into_iter())
                .filter_map(|(a, b, why)| Some((at(a)?, at(b)?, why)))
                .collect(),
            weakness: weakness.otherwise,
            trace: std::mem::take(&mut self.trace),
            threads,
            fault: None,
            signal: None,
            // (a slot's thread by its step's event: a slot may serve several threads)
            schedule: (self.replies.iter().zip(&self.trace_events))
                .map(|((slot, _), e)| Step {
                    thread: (e.map(|e| e.thread))
                        .or_else(|| self.slots.get(*slot as usize).copied())
                        .map_or(Vec::new(), |t| spawn_path(g, t)),
                    alt: 0,
                })
                .collect(),
            replies: self.replies.iter().map(|(_, r)| r.clone()).collect(),
            hung: self.hung.clone(),
            buffered: false,
            heap: self.exec.heap_blocks(),
            output,
            found,
        };
        crate::engine::dpor::renumber(&mut c);
        if self.outcome.error.is_none() {
            self.outcome.error = Some(c.clone());
        }
        self.outcome.errors.push((c, 1));
    }
}

/// Graph thread `t` by its place in the tree of spawns (as schedules name threads): the n-th
/// thread its parent created, after its parent's path; empty for main.
fn spawn_path(g: &Graph, t: u32) -> Vec<u64> {
    let Some(Some(spawn)) = g.parents.get(t as usize) else {
        return Vec::new();
    };
    let mut path = spawn_path(g, spawn.thread);
    let evs = &g.threads[spawn.thread as usize][..=spawn.index as usize];
    let nth = evs
        .iter()
        .filter(|ev| matches!(ev.label, Label::Spawn { .. }))
        .count();
    path.push(nth as u64);
    path
}

/// Per location with more than one write in the trace (`at` its index there): their
/// indices in coherence order.
fn coherence_in(g: &Graph, at: &dyn Fn(EventId) -> Option<usize>) -> Vec<Vec<usize>> {
    g.co.iter()
        .filter(|(&addr, _)| addr != FENCE_LOCATION)
        .map(|(_, list)| list.iter().filter_map(|&w| at(w)).collect::<Vec<_>>())
        .filter(|order| order.len() > 1)
        .collect()
}

/// The dependencies of the trace's events on earlier loads: (load, access, kind), as
/// indices in the trace (`at`).
fn dependencies_in(
    g: &Graph,
    at: &dyn Fn(EventId) -> Option<usize>,
) -> Vec<(usize, usize, &'static str)> {
    let mut out = Vec::new();
    for e in g.events() {
        let Some(i) = at(e) else { continue };
        let d = g.event(e).deps();
        for (kind, list) in [
            ("addr", &d.addr),
            ("data", &d.data),
            ("ctrl", &d.ctrl),
            ("ctrl+isync", &d.ctrlisync),
        ] {
            // (a control dependency with isync is shown as that alone)
            let shown = list
                .iter()
                .filter(|r| kind != "ctrl" || !d.ctrlisync.contains(r));
            out.extend(shown.filter_map(|&r| Some((at(r)?, i, kind))));
        }
    }
    out
}
