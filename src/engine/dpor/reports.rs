//! A counterexample: built from the execution that ended in an error (trace, threads,
//! schedule, the steps that hung), and its words: threads named in the order they appear,
//! values and signals shown, and what a program's own report of its death (a Rust panic,
//! C++'s std::terminate) says.

use super::Run;
use crate::event::{Op, ThreadId};
use crate::results::{Counterexample, ErrorKind, Output, Step, ThreadInfo};

/// The threads in the order they appear (main first): the numbering of a counterexample.
fn by_appearance(seen: impl Iterator<Item = ThreadId>) -> Vec<ThreadId> {
    let mut order: Vec<ThreadId> = vec![ThreadId::MAIN];
    for t in seen {
        if !order.contains(&t) {
            order.push(t);
        }
    }
    order
}

/// Name the threads of a counterexample in the order they appear in it (main first), so that
/// the report does not depend on the order the exploration met them (replays show the same).
pub(in crate::engine) fn renumber(cx: &mut Counterexample) {
    let order = by_appearance(
        cx.trace
            .iter()
            .map(|e| e.thread)
            .chain(cx.threads.iter().map(|t| t.id)),
    );
    let new = |t: ThreadId| ThreadId(order.iter().position(|&o| o == t).unwrap() as u32);
    for e in &mut cx.trace {
        e.thread = new(e.thread);
        if let Op::Update { owner, .. } = &mut e.op {
            *owner = new(*owner);
        }
    }
    for th in &mut cx.threads {
        th.id = new(th.id);
        th.parent = th.parent.map(new);
        th.buffer_of = th.buffer_of.map(new);
    }
    if let Some((t, _, _)) = &mut cx.fault {
        *t = new(*t);
    }
}

/// An abort() by C++'s std::terminate after an exception no handler caught, as libstdc++'s
/// default handler reports it on stderr: what was thrown and its what().
pub(super) fn uncaught_exception(output: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(output);
    let at = text.rfind("terminate called ")?;
    let report = &text[at..];
    let thrown = report
        .strip_prefix("terminate called after throwing an instance of '")
        .and_then(|r| r.split('\'').next());
    let what = report
        .find("what():")
        .map(|w| report[w + 7..].lines().next().unwrap_or("").trim());
    Some(match (thrown, what) {
        (Some(t), Some(w)) => format!("uncaught exception {t}: {w} (std::terminate)"),
        (Some(t), None) => format!("uncaught exception {t} (std::terminate)"),
        _ => "std::terminate called without an active exception".to_string(),
    })
}

/// What the program itself said of its death, from the tail of its output: a Rust panic's
/// message, or C++'s std::terminate's (an abort), for an error's message.
pub(in crate::engine) fn own_report(
    kind: &ErrorKind,
    signal: Option<i32>,
    output: Option<&Output>,
) -> Option<String> {
    let tail = output.map(|o| o.tail.as_slice());
    match kind {
        ErrorKind::Panic => tail.and_then(panic_message),
        _ if signal == Some(libc::SIGABRT) => tail.and_then(uncaught_exception),
        _ => None,
    }
}

/// A Rust panic as std's default hook reports it: `thread 'main' (1234) panicked at
/// src/main.rs:9:5:` (the id only in newer releases) and the message on the next lines.
pub(super) fn panic_message(output: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(output);
    let at = text.rfind(" panicked at ")?;
    let start = text[..at].rfind("thread '")? + "thread '".len();
    let thread = text[start..at].split('\'').next().unwrap_or("?");
    let rest = &text[at + " panicked at ".len()..];
    let (place, message) = rest.split_once('\n').unwrap_or((rest, ""));
    let message = message
        .lines()
        .take_while(|l| !l.starts_with("note: "))
        .collect::<Vec<_>>()
        .join(" ");
    Some(format!(
        "thread '{thread}' panicked at {}: {}",
        place.trim_end_matches(':'),
        message.trim()
    ))
}

/// The first (up to) 8 bytes as a little-endian number, for reports.
pub(super) fn le_value(bytes: &[u8]) -> u64 {
    let mut v = [0u8; 8];
    let n = bytes.len().min(8);
    v[..n].copy_from_slice(&bytes[..n]);
    u64::from_le_bytes(v)
}

pub(super) fn names(ts: &[ThreadId]) -> String {
    ts.iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

pub(in crate::engine) fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGSEGV => "SIGSEGV (segmentation fault)",
        libc::SIGBUS => "SIGBUS (bus error)",
        libc::SIGFPE => "SIGFPE (arithmetic error)",
        libc::SIGILL => "SIGILL (illegal instruction)",
        libc::SIGABRT => "SIGABRT (abort)",
        libc::SIGTRAP => "SIGTRAP (trap)",
        libc::SIGKILL => "SIGKILL",
        _ => "signal",
    }
}

/// The counterexample of an execution that ended in an error: its trace, threads and schedule.
impl super::Explorer<'_> {
    pub(super) fn counterexample(
        &self,
        run: &Run,
        kind: ErrorKind,
        message: String,
        fault: Option<(ThreadId, u64, u64)>,
        signal: Option<i32>,
    ) -> Box<Counterexample> {
        let updaters = (0..run.threads.len() as u32)
            .map(ThreadId)
            .filter(|t| run.threads[t.index()].updater.is_some());
        let threads = run
            .slot_tid
            .iter()
            .copied()
            .chain(updaters)
            .map(|t| {
                let th = &run.threads[t.index()];
                ThreadInfo {
                    id: t,
                    parent: th.parent,
                    start: th.start,
                    pending: th.pending.filter(|_| th.updater.is_none()),
                    buffer_of: th.updater.map(|(o, _)| o),
                }
            })
            .collect();
        let nodes = &self.nodes[..run.trace.len().min(self.nodes.len())];
        let schedule = nodes
            .iter()
            .map(|n| Step {
                thread: self.names.path(n.chosen),
                alt: n.alt,
            })
            .collect();
        let hung = (nodes.iter().enumerate())
            .filter_map(|(i, n)| n.hangs.then_some(i))
            .collect();
        let mut cx = Counterexample {
            kind,
            message,
            trace: run.trace.iter().map(|t| t.ev.clone()).collect(),
            threads,
            fault,
            signal,
            schedule,
            buffered: run.buffers.is_some(),
            replies: Vec::new(),
            hung,
            sources: Vec::new(),
            coherence: Vec::new(),
            dependencies: Vec::new(),
            reorderings: Vec::new(),
            weakness: None,
            heap: Vec::new(),
            output: None,
            found: (0, 0),
        };
        renumber(&mut cx);
        Box::new(cx)
    }
}
