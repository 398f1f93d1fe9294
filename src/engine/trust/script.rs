//! Replays handed to the executor ahead of time: the steps that replay a graph are known
//! before it runs (each thread's events in the order `Graph::next_to_replay` gives, each read
//! given the bytes of its write), so the executor may run them without a round trip per step
//! ([`crate::engine::Executor::script`]) and answer the engine's calls for them from what it recorded.

use rustc_hash::FxHashMap as HashMap;

use crate::event::{ScriptStep, StoreBytes};
use crate::graph::{EventId, Graph};

use super::split::{first_piece, merged_reply};
use super::step::reply_to;
use super::{conditional, Slots, Trust, FENCE_LOCATION};

/// The steps the executor was given for the running replay, and how many of them the engine
/// has taken.
#[derive(Default)]
pub(super) struct Script {
    steps: Vec<ScriptStep>,
    taken: usize,
    /// What each location held before the program's first store to it, as the latest
    /// execution found: a read of the initial value where a store has run is given these.
    initial: HashMap<u64, StoreBytes>,
}

/// The step the engine took was not the script's: the executor has run ahead along the
/// script, so the replay starts again without one.
pub(super) struct Diverged;

impl Script {
    /// The engine takes step `slot`/`reply`: the script's next, if it has one left.
    pub(super) fn take(&mut self, slot: u32, reply: &crate::event::Reply) -> Result<(), Diverged> {
        let Some(step) = self.steps.get(self.taken) else {
            return Ok(());
        };
        match step {
            ScriptStep::Run {
                slot: s, reply: r, ..
            } if *s == slot && r == reply => {
                self.taken += 1;
                Ok(())
            }
            _ => Err(Diverged),
        }
    }

    /// A store at `addr` wrote over `bytes`, the first in its execution.
    pub(super) fn note_initial(&mut self, addr: u64, bytes: &StoreBytes) {
        if self.initial.get(&addr) != Some(bytes) {
            self.initial.insert(addr, bytes.clone());
        }
    }

    pub(super) fn clear(&mut self) {
        self.steps.clear();
        self.taken = 0;
    }
}

impl Trust<'_> {
    /// Hands the executor the steps that replay `g` (none with `scripted` false), as
    /// `catch_up` will take them: up to the first whose reply is not known before it runs (a
    /// pthread object's or a nondet call's, a read of an initial value no execution has seen yet).
    pub(super) fn hand_script(&mut self, g: &Graph, scripted: bool) {
        self.script.clear();
        if scripted {
            self.script.steps = self.script_for(g, |_, _, _| true);
        }
        self.exec.script(self.script.steps.clone());
    }

    /// The steps of `g`'s replay as far as they are known, up to the first that `take` (given
    /// its number, the step and its event) refuses.
    pub(super) fn script_for(
        &self,
        g: &Graph,
        take: impl FnMut(usize, &ScriptStep, EventId) -> bool,
    ) -> Vec<ScriptStep> {
        let cycles = self.model.porf_cycles();
        self.steps_in_order(g, |ran, _| g.next_to_replay(ran, cycles), take)
    }

    /// The steps that replay `g`'s events in the order `next` gives (from how many events of
    /// each thread have run, and how many steps), as far as their replies are known, up to the
    /// first that `take` refuses. Any order that runs each event after what it depends on
    /// ([`Graph::runs_next`]) replays the same graph.
    pub(super) fn steps_in_order(
        &self,
        g: &Graph,
        mut next: impl FnMut(&[u32], usize) -> Option<EventId>,
        mut take: impl FnMut(usize, &ScriptStep, EventId) -> bool,
    ) -> Vec<ScriptStep> {
        let mut ran = vec![0u32; g.threads.len()];
        let mut slots = Slots::default();
        let mut last: HashMap<u64, EventId> = HashMap::default();
        let mut steps = Vec::with_capacity(g.threads.iter().map(|evs| evs.len()).sum());
        while let Some(e) = next(&ran, steps.len()) {
            let Some(slot) = slots.of(e.thread) else {
                break;
            };
            let (ev, label) = (g.event(e), g.label(e));
            // (the engine answers an object's operation, or a nondet call, as it runs)
            if ev.op.is_some() {
                break;
            }
            // (an access over several pieces runs after its last, its events all in `g`)
            if let Some(piece) = ev.piece {
                if piece.index + 1 < piece.count {
                    ran[e.thread as usize] += 1;
                    continue;
                }
            }
            let first = first_piece(g, e);
            let location = g.label(first).location().filter(|&a| a != FENCE_LOCATION);
            let reply = match (ev.conditional, ev.piece) {
                (Some(c), _) => conditional::reply(c),
                (None, Some(piece)) if !label.writes() => {
                    match merged_reply(
                        g,
                        first,
                        piece.count,
                        |a| last.get(&a).copied(),
                        |a| self.script.initial.get(&a),
                    ) {
                        Some(r) => r,
                        None => break,
                    }
                }
                (None, Some(_)) => Default::default(),
                (None, None) => {
                    let addr = location.unwrap_or(0);
                    match reply_to(
                        g,
                        e,
                        last.get(&addr).copied(),
                        self.script.initial.get(&addr),
                    ) {
                        Some(r) => r,
                        None => break,
                    }
                }
            };
            let step = ScriptStep::Run {
                slot,
                reply,
                pc: ev.pc,
                addr: location.unwrap_or(0),
            };
            if !take(steps.len(), &step, e) {
                break;
            }
            steps.push(step);
            slots.note(label);
            if let (true, Some(_)) = (label.written().is_some(), location) {
                for index in first.index..=e.index {
                    let piece = EventId { index, ..e };
                    if let Some(addr) = g.label(piece).location() {
                        last.insert(addr, piece);
                    }
                }
            }
            ran[e.thread as usize] += 1;
        }
        steps
    }
}
