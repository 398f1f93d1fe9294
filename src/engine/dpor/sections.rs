//! `__VERIFIER_atomic` sections as steps of the exploration. Inside a section only its thread
//! runs (and its buffer drains), so its events are contiguous in the trace; the explorer treats
//! them as one step whose footprint is what they touch (ARCHITECTURE.md, "Atomic sections are
//! steps"): the section's order (its events share its end's clock), its races (reversed at its
//! begin, once it has ended), its sleep-set entry (what it did, gathered over executions) and
//! the threads an execution left waiting for it.

use std::sync::Arc;

use super::*;

/// The events of an atomic section after its begin, gathered over executions; `Open` once
/// some execution did not finish it (it ended the process or hung inside).
pub(super) enum SectionBody {
    Closed(Vec<Event>),
    Open,
}

/// A thread's next step as a sleep set keeps it: its event, and when that begins an atomic
/// section, the rest of the section as it ran. Sections move as one step (race reversals go
/// to their begin), and the begin itself touches nothing, so a sleeping section wakes at what
/// conflicts with any part of it; until then it would run the same.
#[derive(Clone)]
pub(super) struct Asleep {
    pub(super) ev: Event,
    pub(super) section: Option<Arc<[Event]>>,
}

impl Asleep {
    pub(super) fn plain(ev: Event) -> Asleep {
        Asleep { ev, section: None }
    }

    pub(super) fn conflicts(&self, model: &dyn Model, ev: &Event) -> bool {
        model.conflicts(&self.ev, ev)
            || self
                .section
                .iter()
                .flat_map(|s| s.iter())
                .any(|e| model.conflicts(e, ev))
    }
}

impl Run {
    /// Whether `t` waits only for another thread's atomic section to end.
    pub(super) fn held_off_by_section(&self, t: ThreadId) -> bool {
        let Some(owner) = self.sync.atomic_owner else {
            return false;
        };
        self.owner_of(t) != owner
            && self.threads[t.index()].pending.is_some_and(|p| {
                (matches!(p.op, Op::AtomicBegin)
                    || self.sync.enabled(t, &p.op, self.join_target(&p.op)))
                    && !self.awaiting(t)
                    && self.buffer_allows(t, &p.op)
            })
    }

    /// The last event of the step `j` belongs to: the end of its atomic section, if it ended.
    pub(super) fn step_last(&self, j: usize) -> usize {
        self.trace[j].closed_at.map_or(j, |e| e as usize)
    }

    /// The first and last positions of the step `j` belongs to: its atomic section's begin,
    /// and its end (or, for a section still open, its last event so far).
    pub(super) fn step(&self, j: usize) -> (usize, usize) {
        match (self.trace[j].section, self.trace[j].closed_at) {
            (None, _) => (j, j),
            (Some(b), Some(end)) => (b, end as usize),
            (Some(b), None) => (
                b,
                (j..self.trace.len())
                    .take_while(|&k| self.trace[k].section == Some(b))
                    .last()
                    .unwrap_or(j),
            ),
        }
    }
}

impl Explorer<'_> {
    /// Reverse the races deferred to the end of their atomic section (it ended, or the
    /// execution did).
    pub(super) fn reverse_deferred(&mut self, run: &mut Run) {
        for &(e, e2) in &run.deferred {
            self.reverse(run, e, e2);
        }
        run.deferred.clear();
    }

    /// Add what the atomic sections of this execution did to their nodes, from the position
    /// where it left the last one's path (a section that began before it ran differently).
    pub(super) fn gather_sections(&mut self, run: &Run, from: usize) {
        let Some(first) = run.trace.get(from) else {
            return;
        };
        let start = first.section.unwrap_or(from);
        let mut j = start;
        while j < run.trace.len().min(self.nodes.len()) {
            if run.trace[j].section != Some(j) {
                j += 1;
                continue;
            }
            let t = run.trace[j].ev.thread;
            let body = run.trace[j + 1..]
                .iter()
                .take_while(|e| e.section == Some(j))
                .map(|e| &e.ev);
            let node = &mut self.nodes[j];
            let mut closed = false;
            if let Some(SectionBody::Open) = node.section {
                j += 1;
                continue;
            }
            let mut events = match node.section.take() {
                Some(SectionBody::Closed(v)) => v,
                _ => Vec::new(),
            };
            let mut n = 0;
            for ev in body {
                n += 1;
                closed = ev.thread == t && matches!(ev.op, Op::AtomicEnd);
                let same = |o: &Event| {
                    o.thread == ev.thread
                        && o.op == ev.op
                        && o.wrote == ev.wrote
                        && o.forwarded == ev.forwarded
                };
                if !events.iter().any(same) {
                    events.push(ev.clone());
                }
            }
            let ended_inside = run.ended_at.is_some_and(|x| x >= j && x <= j + n);
            node.section = Some(if closed && !ended_inside {
                SectionBody::Closed(events)
            } else {
                SectionBody::Open
            });
            j += n + 1;
        }
    }
}
