//! `--replay` of a graph engine's counterexample: its steps run again in their order, each
//! given the reply it was given (a read the bytes of the write it read), with no engine
//! deciding anything; the error it ends in is reported with its trace.

use crate::engine::dpor::own_report;
use crate::engine::{end_verdict, Config, EndVerdict, ExecError, Executor, SlotState, Snapshot};
use crate::event::{Event, Op, Pending, ThreadId};
use crate::results::{Counterexample, ErrorKind, Outcome, Schedule, ThreadInfo};

use super::objects::{may_only_read, BUSY, WAKE_BUSY};
use super::{deadlock_message, hang_message, le_value, livelock_message, stopped, Slots};

fn differs(step: usize) -> ExecError {
    ExecError::Fatal(format!(
        "the program behaved differently when replayed (at step {}): is it the same build, \
         with the same arguments and input?",
        step + 1
    ))
}

/// Runs the schedule's steps with its replies, those at `hung` expected to hang again; with
/// `hand_over`, the last step is the debugger's.
pub fn replay(
    exec: &mut dyn Executor,
    cfg: &Config,
    schedule: &Schedule,
    hand_over: bool,
) -> Result<Outcome, ExecError> {
    let Schedule {
        steps,
        replies,
        hung,
    } = schedule;
    if replies.len() != steps.len() {
        return Err(ExecError::Fatal(
            "malformed schedule: a graph engine's schedule has a reply per step".into(),
        ));
    }
    let mut snap = exec.begin()?;
    let mut threads = ReplayedThreads::default();
    let mut trace: Vec<Event> = Vec::new();
    // per slot: its last step's operation and reply (an operation told to ask again waits)
    let mut last: Vec<Option<(Pending, u64)>> = vec![None];
    for (i, (step, reply)) in steps.iter().zip(replies).enumerate() {
        let (id, slot) = threads.find(&step.thread).ok_or_else(|| differs(i))?;
        let p = stopped(&snap, slot as u32).ok_or_else(|| differs(i))?;
        if hand_over && i + 1 == steps.len() {
            exec.hand_over(slot as u32, reply)?;
            return Ok(Outcome::default());
        }
        snap = if hung.contains(&i) {
            exec.step_hanging(slot as u32, reply)?
        } else {
            exec.step(slot as u32, reply)?
        };
        last.resize(snap.slots.len(), None);
        last[slot] = Some((p, reply.value));
        match p.op {
            Op::Join { slot: joined } => threads.joined(joined as usize),
            Op::Spawn => {
                // (a creation that failed took no slot)
                let child = threads.next_free();
                if (snap.slots.get(child)).is_some_and(|v| v.state != SlotState::Exited) {
                    threads.spawned(id);
                    last[child] = None;
                }
            }
            _ => {}
        }
        let mut ev = Event::from_pending(ThreadId(id as u32), &p);
        let executed = snap.slots.get(slot).and_then(|v| v.prev.clone());
        ev.wrote = !matches!(p.op, Op::Cas { .. }) || executed.as_ref().is_some_and(|x| x.wrote);
        if let Some((_, size)) = p.op.data() {
            ev.value_read = match &reply.patch {
                Some((_, bytes)) => Some(le_value(&bytes[..(size as usize).min(bytes.len())])),
                None => executed.as_ref().and_then(|x| x.read),
            };
            ev.value_written = executed
                .as_ref()
                .and_then(|x| x.stored.as_deref())
                .map(le_value);
        }
        trace.push(ev);
        if snap.ended.is_some() && i + 1 < steps.len() {
            return Err(differs(i + 1));
        }
    }
    let mut outcome = Outcome::default();
    let output = exec.output();
    let error = match snap.ended.clone() {
        Some(ended) => match end_verdict(&ended, cfg.allow_exit_status) {
            EndVerdict::Error {
                kind,
                message,
                signal,
                ..
            } => {
                let own = own_report(&kind, signal, output.as_ref());
                Some((kind, own.unwrap_or(message)))
            }
            _ => None,
        },
        None => stuck(&snap, &last),
    };
    if snap.ended.is_some() || error.is_some() {
        outcome.stats.executions = 1;
        outcome.stats.events = trace.len() as u64;
    }
    if let Some((kind, message)) = error {
        let threads = (0..threads.paths.len())
            .map(|t| ThreadInfo {
                id: ThreadId(t as u32),
                parent: threads.parents[t].map(|p| ThreadId(p as u32)),
                start: trace
                    .iter()
                    .find(|e| e.thread == ThreadId(t as u32))
                    .map_or(0, |e| e.pc),
                pending: (threads.slot_of(t)).and_then(|s| stopped(&snap, s as u32)),
                buffer_of: None,
            })
            .collect();
        let mut cx = Counterexample {
            kind,
            message,
            trace,
            threads,
            fault: None,
            signal: None,
            schedule: steps.to_vec(),
            replies: replies.to_vec(),
            hung: hung.to_vec(),
            buffered: false,
            sources: Vec::new(),
            coherence: Vec::new(),
            dependencies: Vec::new(),
            reorderings: Vec::new(),
            weakness: None,
            heap: exec.heap_blocks(),
            output,
            found: (0, 1),
        };
        crate::engine::dpor::renumber(&mut cx);
        outcome.error = Some(cx.clone());
        outcome.errors.push((cx, 1));
    }
    exec.end()?;
    Ok(outcome)
}

/// The threads of a replayed schedule, each by its place in the tree of spawns (as schedules
/// name threads), and the slot each runs in ([`Slots`]: a joined thread's slot goes to the
/// next thread created, as the runtime gives them).
struct ReplayedThreads {
    /// Per thread: its path, how many threads it created, and its parent.
    paths: Vec<Vec<u64>>,
    spawned: Vec<u64>,
    parents: Vec<Option<usize>>,
    slots: Slots,
}

impl Default for ReplayedThreads {
    fn default() -> Self {
        ReplayedThreads {
            paths: vec![Vec::new()],
            spawned: vec![0],
            parents: vec![None],
            slots: Slots::default(),
        }
    }
}

impl ReplayedThreads {
    /// The thread of `path` and its slot, if it runs in one.
    fn find(&self, path: &[u64]) -> Option<(usize, usize)> {
        let id = self.paths.iter().position(|p| p == path)?;
        Some((id, self.slot_of(id)?))
    }

    fn slot_of(&self, id: usize) -> Option<usize> {
        self.slots.of(id as u32).map(|s| s as usize)
    }

    fn next_free(&self) -> usize {
        self.slots.next_free() as usize
    }

    /// Thread `parent` created one: it takes [`ReplayedThreads::next_free`].
    fn spawned(&mut self, parent: usize) {
        self.spawned[parent] += 1;
        let mut path = self.paths[parent].clone();
        path.push(self.spawned[parent]);
        self.paths.push(path);
        self.spawned.push(0);
        self.parents.push(Some(parent));
        self.slots.spawned((self.paths.len() - 1) as u32);
    }

    /// The thread in `slot` was joined.
    fn joined(&mut self, slot: usize) {
        if let Some(&t) = self.slots.get(slot) {
            self.slots.joined(t);
        }
    }
}

/// The schedule ran to its end with the process still there: a thread ran past the time
/// limit (a hang), or every live thread waits (an
/// operation told to ask again, a join of a thread still running, a load that repeats the
/// thread's last one), as the graph engine found it, a deadlock; a livelock where some
/// spin. `None` if a thread could go on.
fn stuck(snap: &Snapshot, last: &[Option<(Pending, u64)>]) -> Option<(ErrorKind, String)> {
    if snap.slots.iter().any(|v| v.state == SlotState::Hung) {
        return Some((ErrorKind::Hang, hang_message()));
    }
    let live: Vec<u32> = (0..snap.slots.len() as u32)
        .filter(|&s| stopped(snap, s).is_some())
        .collect();
    // (a thread still running, or hung, is not waiting)
    let settled =
        |v: &&crate::engine::SlotView| matches!(v.state, SlotState::Stopped(_) | SlotState::Exited);
    if live.is_empty() || !snap.slots.iter().all(|v| settled(&v)) {
        return None;
    }
    let (mut awaiting, mut spinning) = (Vec::new(), false);
    for &s in &live {
        let p = stopped(snap, s)?;
        let again = last
            .get(s as usize)
            .copied()
            .flatten()
            .filter(|(q, _)| q.pc == p.pc && q.hash == p.hash && q.op == p.op);
        match (p.op, again) {
            (Op::Join { slot }, _) => {
                let exited = snap.slots.get(slot as usize).map(|v| &v.state);
                if exited == Some(&SlotState::Exited) {
                    return None;
                }
            }
            (op, Some((_, reply))) if may_only_read(&op) && matches!(reply, BUSY | WAKE_BUSY) => {
                awaiting.push(s)
            }
            (op, Some(_)) if op.is_load() => {
                awaiting.push(s);
                spinning = true;
            }
            _ => return None,
        }
    }
    Some(if spinning {
        (ErrorKind::Hang, livelock_message(&awaiting))
    } else {
        (ErrorKind::Deadlock, deadlock_message(&live))
    })
}
