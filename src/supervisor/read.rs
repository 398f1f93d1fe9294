//! Validated reading of what the runtime wrote into the channel. Everything there is untrusted
//! (the program may have scribbled over it): a reader returns an error, never panics. Needs no
//! process, so it is fuzzed on its own (tests/fuzz.rs).

use std::sync::atomic::Ordering::SeqCst;

use crate::channel::{self, err, slot_state, Channel, MAX_THREADS};
use crate::engine::{
    Ended, ExecError, Executed, ProcessEnd, RuntimeError, RuntimeErrorKind, SlotState, SlotView,
    Snapshot,
};
use crate::instrument::Plan;

/// The channel of a started program, with what is needed to make sense of it.
pub struct ChannelReader<'a> {
    pub ch: &'a Channel,
    /// Where the sites are (none for the engine inside the worker: pcs stay as the runtime
    /// reports them; the checker replays errors to report them).
    pub plan: Option<&'a Plan>,
    /// Where the program is loaded, and the runtime's trampoline (copies of the sites).
    pub load_bias: u64,
    pub tramp: u64,
}

impl ChannelReader<'_> {
    /// Map a pc inside a relocated copy back to the program's instruction.
    pub fn original_pc(&self, pc: u64) -> u64 {
        let Some(plan) = self.plan else { return pc };
        let end = self.tramp + plan.code_size() as u64;
        if self.tramp != 0 && pc >= self.tramp && pc < end {
            if let Some(s) = plan.site_of_copy(self.tramp, pc) {
                // a copy keeps the length of each instruction it runs: an offset into it is
                // one into the original (past them: the jump back, or on to the next site)
                let into = pc - self.tramp - s.site.copy_off as u64;
                let into = if into < s.bytes.len() as u64 { into } else { 0 };
                return s.site.offset + self.load_bias + into;
            }
        }
        pc
    }

    pub fn nthreads(&self) -> Result<usize, ExecError> {
        let n = self.ch.nthreads().load(SeqCst) as usize;
        if n == 0 || n > MAX_THREADS {
            return Err(corrupted("thread count"));
        }
        Ok(n)
    }

    /// The slot still running a thread (the one that hangs), 0 if none.
    pub fn running_slot(&self) -> Result<u32, ExecError> {
        Ok((0..self.nthreads()?)
            .find(|&i| self.ch.slot_state(i).load(SeqCst) == slot_state::RUNNING)
            .unwrap_or(0) as u32)
    }

    pub fn snapshot(&self, done: bool) -> Result<Snapshot, ExecError> {
        self.snapshot_into(done, Vec::new())
    }

    /// [`ChannelReader::snapshot`] into the allocation of `slots` (emptied first).
    pub fn snapshot_into(
        &self,
        done: bool,
        mut slots: Vec<SlotView>,
    ) -> Result<Snapshot, ExecError> {
        if !self.ch.intact() {
            return Err(corrupted("header"));
        }
        let n = self.nthreads()?;
        slots.truncate(n);
        slots.resize_with(n, SlotView::placeholder);
        let reported = self.ch.err_kind().load(SeqCst) != err::NONE;
        for (i, view) in slots.iter_mut().enumerate() {
            self.slot_view(i, n, done, reported, view)?;
        }
        let ended = if done { Some(self.ended(n)?) } else { None };
        Ok(Snapshot { slots, ended })
    }

    /// [`ChannelReader::snapshot_into`] after a step of `stepped`, `slots` being the state before
    /// it: only that slot and the slots of threads it started (new ones, or exited ones taken
    /// again) are read again, as no other thread ran. Falls back to reading every slot when the counts do not fit.
    pub fn snapshot_after_step(
        &self,
        mut slots: Vec<SlotView>,
        stepped: usize,
    ) -> Result<Snapshot, ExecError> {
        if !self.ch.intact() {
            return Err(corrupted("header"));
        }
        let n = self.nthreads()?;
        let before = slots.len();
        if n < before || stepped >= before {
            return self.snapshot_into(false, slots);
        }
        // a thread creation may have taken the slot of a thread that exited (and was joined)
        let spawned = matches!(&slots[stepped].state, SlotState::Stopped(p) if p.op == crate::event::Op::Spawn);
        slots.resize_with(n, SlotView::placeholder);
        for (i, view) in slots.iter_mut().enumerate() {
            if i >= before || i == stepped || (spawned && matches!(view.state, SlotState::Exited)) {
                self.slot_view(i, n, false, false, view)?;
            }
        }
        Ok(Snapshot { slots, ended: None })
    }

    /// What slot `i` of `n` holds (`done`: the process has ended; `reported`: with an error),
    /// written into `view` in place (a view is large: returned, it was moved several times).
    fn slot_view(
        &self,
        i: usize,
        n: usize,
        done: bool,
        reported: bool,
        view: &mut SlotView,
    ) -> Result<(), ExecError> {
        let h = self.ch.header();
        let s = self.ch.slot(i);
        let mut fresh = true;
        let state = match self.ch.slot_state(i).load(SeqCst) {
            slot_state::STOPPED => match self.ch.pending(i) {
                Some(p) => SlotState::Stopped(p),
                None => return Err(corrupted("pending event")),
            },
            slot_state::EXITED => SlotState::Exited,
            slot_state::HUNG => SlotState::Hung,
            // The process is gone; a thread that was running ended with it. Its results
            // are fresh only if it reported the error (the runtime publishes them then).
            slot_state::RUNNING if done => {
                fresh = reported && h.err_slot as usize == i;
                SlotState::Exited
            }
            _ => return Err(corrupted("thread state")),
        };
        let parent = if i == 0 { 0 } else { s.parent };
        if parent as usize >= n {
            return Err(corrupted("thread parent"));
        }
        let f = if fresh { s.prev_flags } else { 0 };
        view.parent = parent;
        view.state = state;
        view.prev = (f & channel::PREV_VALID != 0).then(|| Executed {
            wrote: f & channel::PREV_WROTE != 0,
            read: (f & channel::PREV_READ != 0).then_some(s.prev_read),
            written: (f & channel::PREV_WROTE != 0).then_some(s.prev_written),
            stored: (f & channel::PREV_STORED != 0).then(|| self.ch.stored(i)),
            replaced: (f & channel::PREV_REPLACED != 0).then(|| self.ch.replaced(i)),
        });
        Ok(())
    }

    fn ended(&self, n: usize) -> Result<Ended, ExecError> {
        let st = self.ch.wait_status();
        let how = if libc::WIFSIGNALED(st) {
            ProcessEnd::Signaled(libc::WTERMSIG(st))
        } else {
            ProcessEnd::Exited(libc::WEXITSTATUS(st))
        };
        let h = self.ch.header();
        let slot = (h.err_slot as usize) < n;
        let pc = self.original_pc(h.err_pc);
        let error = |kind| RuntimeError {
            kind,
            pc,
            // for SIGFPE and SIGILL the kernel gives the instruction's address: the original's
            // (a data address is never inside the copies)
            addr: self.original_pc(h.err_addr),
            message: self.ch.err_msg(),
            slot: slot.then_some(h.err_slot),
        };
        let error = match self.ch.err_kind().load(SeqCst) {
            err::NONE => None,
            err::ASSERT => Some(error(RuntimeErrorKind::Assertion)),
            err::VERIFIER => Some(error(RuntimeErrorKind::Verifier)),
            err::SIGNAL if (1..65).contains(&h.err_signal) => {
                Some(error(RuntimeErrorKind::Signal(h.err_signal as i32)))
            }
            err::UNSUPPORTED => {
                let what = self
                    .plan
                    .and_then(|p| {
                        let s = p
                            .sites
                            .iter()
                            .find(|s| s.site.offset + self.load_bias == pc)?;
                        Some(format!(" (`{}`)", p.disassemble(s)))
                    })
                    .unwrap_or_default();
                return Err(ExecError::Fatal(format!(
                    "unsupported instruction at {:#x}{what} on shared memory {:#x}: {}",
                    pc.wrapping_sub(self.load_bias),
                    h.err_addr,
                    "gathers, and string instructions with 32-bit addresses or an fs or gs segment, \
                     are not modelled"
                )));
            }
            err::CALL => {
                let what = self.ch.err_msg();
                let why = if what.starts_with("futex") {
                    "the checker models futex wait and wake only"
                } else if what.starts_with("pthread_") || what.starts_with("sem_") {
                    "the checker does not model this call yet"
                } else {
                    "a model checker of threads cannot follow other processes"
                };
                return Err(ExecError::Fatal(format!(
                    "the program calls {what} (at {:#x}): {why}",
                    pc.wrapping_sub(self.load_bias)
                )));
            }
            err::LIMIT => Some(error(RuntimeErrorKind::Limit)),
            err::PANIC => Some(error(RuntimeErrorKind::Panic)),
            err::RUNTIME => {
                return Err(ExecError::Fatal(format!(
                    "runtime failure: {}",
                    self.ch.err_msg()
                )))
            }
            _ => return Err(corrupted("error report")),
        };
        Ok(Ended { how, error })
    }
}

/// How a "channel corrupted" message starts.
pub const CORRUPTED: &str = "channel corrupted: ";

pub fn corrupted(what: &str) -> ExecError {
    ExecError::Fatal(format!(
        "{CORRUPTED}the program overwrote the checker's {what}"
    ))
}
