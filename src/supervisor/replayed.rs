//! A scripted prefix run by the runtime alone (one process per execution): the engine's calls
//! for its steps are answered from the log the runtime kept, state by state.

use std::sync::atomic::Ordering::SeqCst;

use super::{read, NativeTarget};
use crate::channel;
use crate::engine::{ExecError, Snapshot};
use crate::event::ScriptStep;

/// What the runtime ran of the current execution's script, and how far the engine has got.
pub(super) struct Replayed {
    steps: Vec<ScriptStep>,
    /// Steps the runtime ran.
    ran: usize,
    /// Steps the engine has asked for so far.
    served: usize,
    /// Entries of the log, and the next one to apply.
    logged: usize,
    next_entry: usize,
    /// The state after the last step it ran (the live one).
    live: Option<Snapshot>,
}

impl NativeTarget {
    /// After the runtime ran a script: the engine's calls for its steps are answered from the
    /// log, state by state, in a private copy of the slots; the state after the last step is
    /// the live one.
    pub(super) fn serve_script(&mut self, live: Snapshot) -> Result<Snapshot, ExecError> {
        let (ran, logged) = self.ch.script_progress(self.script.len());
        if ran == 0 {
            return Ok(live);
        }
        if self.scratch.is_none() {
            self.scratch = Some(
                self.ch
                    .scratch()
                    .map_err(|e| ExecError::Fatal(format!("cannot map a scratch channel: {e}")))?,
            );
        }
        self.scratch.as_ref().unwrap().nthreads().store(0, SeqCst);
        let steps = std::mem::take(&mut self.script);
        self.replayed = Some(Replayed {
            steps,
            ran,
            served: 0,
            logged,
            next_entry: 0,
            live: Some(live),
        });
        self.logged_state(0)
    }

    /// The state after `epoch` scripted steps, from the log (or live, after the last one).
    fn logged_state(&mut self, epoch: usize) -> Result<Snapshot, ExecError> {
        let r = self.replayed.as_mut().expect("replaying");
        if epoch == r.ran {
            let live = r.live.take().ok_or_else(|| read::corrupted("script log"))?;
            self.replayed = None;
            return Ok(live);
        }
        let scratch = self.scratch.as_ref().expect("a scratch channel");
        while r.next_entry < r.logged {
            let (e, slot, copy) = self.ch.log_entry(r.next_entry);
            if e as usize != epoch {
                break;
            }
            let slot = slot as usize;
            if slot >= channel::MAX_THREADS {
                return Err(read::corrupted("script log"));
            }
            scratch.put_slot(slot, copy);
            let n = scratch.nthreads().load(SeqCst).max(slot as u32 + 1);
            scratch.nthreads().store(n, SeqCst);
            r.next_entry += 1;
        }
        self.reader_of(scratch).snapshot(false)
    }

    /// If the engine's next step is one the runtime already ran (`is_next` says whether the
    /// script's step is the one asked for), the state it left.
    pub(super) fn replayed_step(
        &mut self,
        is_next: impl FnOnce(&ScriptStep) -> bool,
    ) -> Option<Result<Snapshot, ExecError>> {
        let r = self.replayed.as_mut()?;
        match r.steps.get(r.served) {
            Some(step) if is_next(step) => {}
            // a buffered store of other bytes than the last execution's at the same step:
            // values that differ from process to process (process and thread ids), which
            // one process per execution cannot repeat
            Some(ScriptStep::Commit { addr, .. }) => {
                return Some(Err(ExecError::Fatal(format!(
                    "the program stored other bytes at {addr:#x} when the start of an \
                     execution was replayed (a process or thread id?): with one process per \
                     execution, only values that repeat from run to run can be checked under \
                     tso or pso"
                ))))
            }
            step => {
                return Some(Err(ExecError::Fatal(format!(
                    "internal: the engine left the script at its step {} ({step:?})",
                    r.served
                ))))
            }
        }
        r.served += 1;
        let epoch = r.served;
        Some(self.logged_state(epoch))
    }
}
