//! What the user reads: the verdict, the statistics and the counterexample, as text or as
//! one JSON object (schema documented in README.md, versioned by `schema`).

pub mod combine;
pub mod dot;
pub mod litmus;
pub mod progress;
pub mod schedule;

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::channel::LOCK_WAIT_HASH;
use crate::event::{Event, FenceKind, Op, ThreadId};
use crate::program::Program;
use crate::results::{Counterexample, Outcome, Output, ThreadInfo};

pub const JSON_SCHEMA: u32 = 2;

/// Everything needed to name addresses of the program as it ran.
pub struct Symbolizer<'a> {
    pub program: &'a Program,
    pub load_bias: u64,
}

impl Symbolizer<'_> {
    fn file_addr(&self, a: u64) -> u64 {
        a.wrapping_sub(self.load_bias)
    }

    /// `main+0x1c (sb.c:12)` or the bare address.
    pub fn code(&self, pc: u64) -> String {
        let fa = self.file_addr(pc);
        let mut s = self
            .program
            .function_at(fa)
            .unwrap_or_else(|| format!("{pc:#x}"));
        if let Some(line) = self.program.line_at(fa) {
            s.push_str(&format!(" ({line})"));
        }
        s
    }

    pub fn function(&self, pc: u64) -> Option<String> {
        self.program.function_at(self.file_addr(pc))
    }

    pub fn line(&self, pc: u64) -> Option<String> {
        self.program.line_at(self.file_addr(pc))
    }

    /// `counter`, `table+16`, or the address.
    pub fn data(&self, addr: u64) -> String {
        self.program
            .object_at(self.file_addr(addr))
            .unwrap_or_else(|| format!("{addr:#x}"))
    }

    fn symbol(&self, addr: u64) -> Option<String> {
        self.program.object_at(self.file_addr(addr))
    }
}

fn thread_label(sym: &Symbolizer, threads: &[ThreadInfo], t: ThreadId) -> String {
    let info = threads.iter().find(|i| i.id == t);
    if let Some(owner) = info.and_then(|i| i.buffer_of) {
        return format!("{t} {owner}'s buffer");
    }
    let start = info.map_or(0, |i| i.start);
    let name = if t == ThreadId::MAIN {
        Some("main".to_string())
    } else {
        sym.program.function_named_at(sym.file_addr(start))
    };
    match name {
        Some(n) => format!("{t} {n}"),
        None => t.to_string(),
    }
}

/// For an event that reads memory: the index of the event whose write it read (None: the
/// initial value). Under TSO/PSO memory changes at updates, except that a load served from its
/// own thread's buffer reads that thread's latest store.
/// Under a model of execution graphs (where `sources` says what each load read): the latest
/// store to the location of load `i` that ran before it, when the load read an older one (or
/// the initial value) — what the model let stay invisible to that thread.
fn unseen(cx: &Counterexample, i: usize) -> Option<usize> {
    if cx.sources.is_empty() {
        return None;
    }
    let (addr, _) = cx.trace[i].op.data()?;
    let writes_here = |w: &Event| {
        let store = !w.op.is_load() || matches!(w.op, Op::Cas { .. });
        store && w.wrote && w.op.data().is_some_and(|(a, _)| a == addr)
    };
    // the latest in coherence order of the writes that ran before the read
    let k = (0..i)
        .filter(|&j| writes_here(&cx.trace[j]))
        .max_by_key(|&j| coherence_rank(cx, j))?;
    match reads_from(cx, i)? {
        Some(j) if coherence_rank(cx, j) >= coherence_rank(cx, k) => None,
        _ => Some(k),
    }
}

/// Where write `j` of the trace is in its location's coherence order, as far as it orders the
/// trace's writes to that location (the order of the trace where the counterexample gives
/// none).
fn coherence_rank(cx: &Counterexample, j: usize) -> usize {
    cx.coherence
        .iter()
        .find_map(|order| order.iter().position(|&w| w == j))
        .unwrap_or(j)
}

pub fn reads_from(cx: &Counterexample, i: usize) -> Option<Option<usize>> {
    if !cx.sources.is_empty() {
        return cx.sources.iter().find(|s| s.0 == i).map(|s| s.1);
    }
    let e = &cx.trace[i];
    let read = matches!(
        e.op,
        Op::Load { .. } | Op::RmwLoad { .. } | Op::Rmw { .. } | Op::Cas { .. }
    );
    e.op.data().filter(|_| read)?;
    let from_buffer = cx.buffered && e.forwarded != 0;
    let writes = |w: &Event| match w.op {
        Op::Store { .. } | Op::RmwStore { .. } if from_buffer => w.thread == e.thread,
        _ if from_buffer => false,
        _ => writes_memory(cx, w),
    };
    Some(
        (0..i)
            .rev()
            .find(|&j| writes(&cx.trace[j]) && overlap(e, &cx.trace[j])),
    )
}

/// Whether `e` changes memory (where reads-from and coherence live): under TSO/PSO a store
/// only fills its buffer and its update writes memory.
fn writes_memory(cx: &Counterexample, e: &Event) -> bool {
    match e.op {
        Op::Store { .. } | Op::RmwStore { .. } => !cx.buffered,
        Op::Update { .. } | Op::Rmw { .. } => true,
        Op::Cas { .. } => e.wrote,
        _ => false,
    }
}

/// Whether two events access overlapping bytes.
fn overlap(a: &Event, b: &Event) -> bool {
    match (a.op.data(), b.op.data()) {
        (Some((x, n)), Some((y, m))) => x.0 < y.0 + m as u64 && y.0 < x.0 + n as u64,
        _ => false,
    }
}

/// A few lines of source around `pc`'s line, when the file is readable.
pub fn source_excerpt(sym: &Symbolizer, pc: u64) -> Option<String> {
    let (file, line) = sym.program.source_at(sym.file_addr(pc))?;
    let text = std::fs::read_to_string(&file).ok()?;
    let line = line as usize;
    let first = line.saturating_sub(2).max(1);
    let mut out = String::new();
    for (n, l) in text
        .lines()
        .enumerate()
        .skip(first - 1)
        .take(line + 1 - first + 1)
    {
        let n = n + 1;
        let mark = if n == line { ">" } else { " " };
        out.push_str(&format!("  {mark}{n:>5} | {l}\n"));
    }
    Some(out)
}

/// The heap block holding `addr` (the latest allocated, as blocks can be reused after free):
/// its number (1-based, in allocation order) and address.
fn heap_block(cx: &Counterexample, addr: u64) -> Option<(usize, u64)> {
    cx.heap
        .iter()
        .enumerate()
        .rev()
        .find(|(_, &(a, size, _))| addr >= a && addr < a + size.max(1))
        .map(|(k, &(a, _, _))| (k + 1, a))
}

/// A data address as the user knows it: a global (`counter`, `table+16`), a heap block
/// (`heap#2+8`, listed with its allocation site under the trace), or the bare address.
fn data_name(sym: &Symbolizer, cx: &Counterexample, addr: u64) -> String {
    if let Some(s) = sym.symbol(addr) {
        return s;
    }
    match heap_block(cx, addr) {
        Some((k, base)) if addr == base => format!("heap#{k}"),
        Some((k, base)) => format!("heap#{k}+{}", addr - base),
        None => format!("{addr:#x}"),
    }
}

/// A heap block a counterexample touches.
struct UsedBlock {
    number: usize,
    size: u64,
    allocated_at: String,
    /// Earlier blocks of the execution over the same bytes (freed before it was allocated):
    /// their numbers and allocation sites. The trace names the bytes after the last block.
    earlier: Vec<(usize, String)>,
}

/// The heap blocks a counterexample touches, by number.
fn blocks_used(sym: &Symbolizer, cx: &Counterexample) -> Vec<UsedBlock> {
    let mut ks: Vec<usize> = cx
        .trace
        .iter()
        .filter_map(|e| e.op.data())
        .filter(|(a, _)| sym.symbol(a.0).is_none())
        .filter_map(|(a, _)| heap_block(cx, a.0).map(|(k, _)| k))
        .collect();
    ks.sort();
    ks.dedup();
    ks.into_iter()
        .map(|k| {
            let (addr, size, pc) = cx.heap[k - 1];
            let overlaps =
                |&(a, s, _): &(u64, u64, u64)| a < addr + size.max(1) && addr < a + s.max(1);
            let earlier = cx.heap[..k - 1]
                .iter()
                .enumerate()
                .filter(|(_, b)| overlaps(b))
                .map(|(j, &(_, _, at))| (j + 1, sym.code(at)))
                .collect();
            UsedBlock {
                number: k,
                size,
                allocated_at: sym.code(pc),
                earlier,
            }
        })
        .collect()
}

fn describe(sym: &Symbolizer, cx: &Counterexample, e: &Event) -> String {
    let v = |x: Option<u64>| match x {
        None => "?".to_string(),
        Some(v) if v < 0x10000 => v.to_string(),
        Some(v) => format!("{v:#x}"),
    };
    let sym_of = |a: crate::event::TargetAddr| format!("&{}", data_name(sym, cx, a.0));
    match e.op {
        Op::Load { addr, size } | Op::RmwLoad { addr, size } => {
            format!(
                "{} {} ({size} B) -> {}",
                e.op.kind_name(),
                data_name(sym, cx, addr.0),
                v(e.value_read)
            )
        }
        Op::Store { addr, size } | Op::RmwStore { addr, size } => {
            let buffered = if e.bytes.is_some() { " (buffered)" } else { "" };
            format!(
                "{} {} ({size} B) <- {}{buffered}",
                e.op.kind_name(),
                data_name(sym, cx, addr.0),
                v(e.value_written)
            )
        }
        Op::Update { addr, size, .. } => {
            format!(
                "update {} ({size} B) <- {} reaches memory",
                data_name(sym, cx, addr.0),
                v(e.value_written)
            )
        }
        Op::Rmw { addr, size } => {
            format!(
                "atomic-rmw {} ({size} B) {} -> {}",
                data_name(sym, cx, addr.0),
                v(e.value_read),
                v(e.value_written)
            )
        }
        // a lock the runtime models, waiting for its word (runtime/trap.c)
        Op::Cas { addr, size } if e.hash == LOCK_WAIT_HASH && e.value_read.is_none() => format!(
            "lock {} ({size} B): waits until it is free",
            data_name(sym, cx, addr.0)
        ),
        Op::Cas { addr, size } if e.wrote => {
            format!(
                "cas {} ({size} B) {} -> {}",
                data_name(sym, cx, addr.0),
                v(e.value_read),
                v(e.value_written)
            )
        }
        Op::Cas { addr, size } => format!(
            "cas {} ({size} B) failed, read {}",
            data_name(sym, cx, addr.0),
            v(e.value_read)
        ),
        Op::Join { slot } => {
            let t = cx
                .threads
                .get(slot as usize)
                .map_or("?".to_string(), |i| i.id.to_string());
            format!("pthread_join({t})")
        }
        Op::ProcessExit { status, .. } => format!("exit({status})"),
        Op::MutexLock { obj }
        | Op::MutexUnlock { obj }
        | Op::CondSignal { cond: obj }
        | Op::CondBroadcast { cond: obj } => {
            format!("{}({})", e.op.kind_name(), sym_of(obj))
        }
        Op::MutexTryLock { obj: o } => {
            format!(
                "mutex_trylock({}) = {}",
                sym_of(o),
                if e.wrote { "acquired" } else { "busy" }
            )
        }
        Op::CondWait { cond, mutex, .. } | Op::CondReacquire { cond, mutex, .. } => {
            format!("{}({}, {})", e.op.kind_name(), sym_of(cond), sym_of(mutex))
        }
        Op::Assume { cond } => format!("assume({})", cond as u8),
        Op::FutexWait { addr, expected, .. } => {
            let outcome = match e.value_read {
                Some(v) if v as u32 == expected => "waits".to_string(),
                Some(v) => format!("{v}: returns"),
                None => "?".to_string(),
            };
            format!("futex_wait({}, {expected}) -> {outcome}", sym_of(addr))
        }
        Op::FutexWoken { addr, .. } => format!("futex_woken({})", sym_of(addr)),
        Op::FutexJoin { addr, waits } => {
            format!(
                "futex_join({}{})",
                sym_of(addr),
                if waits { "" } else { ", not waiting" }
            )
        }
        Op::HeapRelease { addr, len } => format!("heap_release({}, {len} B)", sym_of(addr)),
        Op::FutexWake { addr, count } => {
            let n = if count == i32::MAX as u32 {
                "all".to_string()
            } else {
                count.to_string()
            };
            format!("futex_wake({}, {n}) = {}", sym_of(addr), e.reply)
        }
        // (a full fence: x86's mfence or a locked instruction's, POWER's sync)
        Op::Fence { kind } => match kind {
            FenceKind::Full => "fence",
            FenceKind::Store => "sfence",
            FenceKind::Load => "lfence",
            FenceKind::Lightweight => "lwsync",
            FenceKind::Eieio => "eieio",
            FenceKind::Isync => "isync",
        }
        .to_string(),
        Op::Nondet { signed, .. } if signed => format!("nondet -> {}", e.reply as i64),
        Op::Nondet { .. } => format!("nondet -> {}", e.reply),
        _ => match e.op.footprint(true, false).iter().next() {
            Some(a) => format!(
                "{}({})",
                e.op.kind_name(),
                sym_of(crate::event::TargetAddr(a.addr))
            ),
            None => e.op.kind_name().to_string(),
        },
    }
}

fn location(sym: &Symbolizer, e: &Event) -> String {
    match e.op {
        Op::ThreadStart => String::new(),
        _ if e.pc == 0 => String::new(),
        _ => sym.code(e.pc),
    }
}

/// The counterexample as numbered lines.
pub fn counterexample_text(sym: &Symbolizer, cx: &Counterexample) -> String {
    let mut out = String::new();
    out.push_str(&format!("counterexample ({} events):\n", cx.trace.len()));
    let w = cx
        .threads
        .iter()
        .map(|t| thread_label(sym, &cx.threads, t.id).len())
        .max()
        .unwrap_or(0);
    let rows: Vec<(String, String, String)> = cx
        .trace
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let from = match (reads_from(cx, i), unseen(cx, i)) {
                (None, _) => String::new(),
                (Some(None), None) => " (initial)".to_string(),
                (Some(None), Some(k)) => format!(" (initial; #{} not seen yet)", k + 1),
                (Some(Some(j)), _) if j > i => format!(" (from #{}, a later store)", j + 1),
                (Some(Some(j)), Some(k)) if k > j => {
                    format!(" (from #{}; #{} not seen yet)", j + 1, k + 1)
                }
                (Some(Some(j)), _) => format!(" (from #{})", j + 1),
            };
            (
                thread_label(sym, &cx.threads, e.thread),
                describe(sym, cx, e) + &from,
                location(sym, e),
            )
        })
        .collect();
    let dw = rows.iter().map(|r| r.1.len()).max().unwrap_or(0);
    for (i, (who, what, at)) in rows.iter().enumerate() {
        out.push_str(format!("  {:>4}  {who:<w$}  {what:<dw$}  {at}", i + 1).trim_end());
        out.push('\n');
    }
    for order in &cx.coherence {
        let Some((addr, _)) = cx.trace[order[0]].op.data() else {
            continue;
        };
        let chain: Vec<String> = order.iter().map(|i| format!("#{}", i + 1)).collect();
        out.push_str(&format!(
            "  coherence of {}: {}\n",
            data_name(sym, cx, addr.0),
            chain.join(" -> ")
        ));
    }
    for &(a, b, why) in &cx.reorderings {
        let name = |i: usize| {
            let e = &cx.trace[i];
            let what = e.op.data().map(|(addr, _)| data_name(sym, cx, addr.0));
            format!(
                "#{} {} {}",
                i + 1,
                e.op.kind_name(),
                what.unwrap_or_default()
            )
        };
        out.push_str(&format!(
            "  reordered: {} and {} ({}) took effect in the other order: {why}\n",
            name(a),
            name(b),
            thread_label(sym, &cx.threads, cx.trace[a].thread)
        ));
    }
    if let Some(why) = cx.weakness {
        out.push_str(&format!("  not sequentially consistent: {why}\n"));
    }
    for b in blocks_used(sym, cx) {
        let earlier: Vec<String> = b
            .earlier
            .iter()
            .map(|(j, at)| format!("heap block #{j} (allocated at {at})"))
            .collect();
        let reused = if earlier.is_empty() {
            String::new()
        } else {
            format!(", over what was {} until freed", earlier.join(", then "))
        };
        out.push_str(&format!(
            "  heap#{k}: heap block #{k} ({} B) allocated at {}{reused}\n",
            b.size,
            b.allocated_at,
            k = b.number
        ));
    }
    if let Some((t, pc, addr)) = cx.fault {
        let data = if cx.signal.is_some() {
            format!(" (data address {addr:#x})")
        } else {
            String::new()
        };
        out.push_str(&format!(
            "  failed: {} at {}{data}\n",
            thread_label(sym, &cx.threads, t),
            sym.code(pc)
        ));
        if let Some(src) = source_excerpt(sym, pc) {
            out.push_str(&src);
        }
    }
    for th in &cx.threads {
        if let Some(p) = &th.pending {
            let e = Event::from_pending(th.id, p);
            let line = format!(
                "  waiting: {:<w$}  {}  {}",
                thread_label(sym, &cx.threads, th.id),
                describe(sym, cx, &e),
                location(sym, &e)
            );
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    if let Some(o) = cx.output.as_ref().filter(|o| o.total > 0) {
        out.push_str(&format!(
            "  output of this execution ({}):\n",
            output_extent(o)
        ));
        for line in String::from_utf8_lossy(&o.tail).lines() {
            out.push_str(&format!("    | {line}\n"));
        }
    }
    out
}

/// `12 bytes`, `last 4096 of 9000 bytes`, `last 4096 of 1048576 bytes, cut there`.
fn output_extent(o: &Output) -> String {
    let mut s = if o.tail.len() as u64 == o.total {
        format!("{} bytes", o.total)
    } else {
        format!("last {} of {} bytes", o.tail.len(), o.total)
    };
    if o.cut {
        s.push_str(", cut there");
    }
    s
}

pub fn verdict(outcome: &Outcome) -> &'static str {
    verdict_of(
        outcome.error.is_some(),
        outcome.stats.bounded,
        outcome.stats.executions,
    )
}

/// The verdict of an exploration: "error" if one was found, else "bounded" if executions were
/// cut, else "vacuous" if none ran to its end (every one dropped by an assumption), else "ok".
pub fn verdict_of(error: bool, bounded: u64, executions: u64) -> &'static str {
    match (error, bounded, executions) {
        (true, _, _) => "error",
        (false, 1.., _) => "bounded",
        (false, 0, 0) => "vacuous",
        _ => "ok",
    }
}

fn event_json(sym: &Symbolizer, cx: &Counterexample, i: usize, e: &Event) -> Value {
    let mut o = json!({
        "index": i + 1,
        "thread": e.thread.to_string(),
        "thread_name": thread_label(sym, &cx.threads, e.thread),
        "op": e.op.kind_name(),
        "text": describe(sym, cx, e),
        "pc": format!("{:#x}", e.pc),
    });
    if let Some(f) = sym.function(e.pc) {
        o["function"] = json!(f);
    }
    if let Some(l) = sym.line(e.pc) {
        o["line"] = json!(l);
    }
    // (a freed or reallocated block is shown as the memory an access touches)
    let touched = match e.op {
        Op::HeapRelease { addr, len } => Some((addr, len)),
        _ => e.op.data().map(|(addr, size)| (addr, size as u64)),
    };
    if let Some((addr, size)) = touched {
        o["addr"] = json!(format!("{:#x}", addr.0));
        o["size"] = json!(size);
        o["symbol"] = json!(data_name(sym, cx, addr.0));
    }
    if e.op.data().is_some() {
        if let Some(v) = e.value_read {
            o["read"] = json!(v);
        }
        if let Some(from) = reads_from(cx, i) {
            o["reads_from"] = json!(from.map(|j| j + 1));
        }
        if let Some(v) = e.value_written {
            o["written"] = json!(v);
        }
    }
    o
}

/// A counterexample as data; `schedule_file` is where its schedule was saved.
pub fn error_json(sym: &Symbolizer, cx: &Counterexample, schedule_file: Option<&Path>) -> Value {
    let mut err = json!({
        "kind": cx.kind.name(),
        "message": cx.message,
        "trace": cx.trace.iter().enumerate().map(|(i, e)| event_json(sym, cx, i, e)).collect::<Vec<_>>(),
        "schedule_file": schedule_file.map(|p| p.display().to_string()),
        "heap_blocks": blocks_used(sym, cx).into_iter().map(|b| json!({
            "name": format!("heap#{}", b.number), "size": b.size, "allocated_at": b.allocated_at,
            "earlier_at_address": b.earlier.into_iter().map(|(j, at)| json!({
                "name": format!("heap#{j}"), "allocated_at": at,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    });
    if let Some((t, pc, addr)) = cx.fault {
        err["thread"] = json!(t.to_string());
        err["pc"] = json!(format!("{pc:#x}"));
        err["location"] = json!(sym.code(pc));
        err["fault_addr"] = json!(format!("{addr:#x}"));
    }
    if let Some(sig) = cx.signal {
        err["signal"] = json!(sig);
    }
    if !cx.coherence.is_empty() {
        err["coherence"] = json!(cx
            .coherence
            .iter()
            .map(|order| order.iter().map(|i| i + 1).collect::<Vec<_>>())
            .collect::<Vec<_>>());
    }
    if !cx.dependencies.is_empty() {
        err["dependencies"] = json!(cx
            .dependencies
            .iter()
            .map(|&(r, e, kind)| json!({"from": r + 1, "to": e + 1, "kind": kind}))
            .collect::<Vec<_>>());
    }
    if let Some(why) = cx.weakness {
        err["weakness"] = json!(why);
    }
    if !cx.reorderings.is_empty() {
        err["reorderings"] = json!(cx
            .reorderings
            .iter()
            .map(|&(a, b, why)| json!({"first": a + 1, "second": b + 1, "why": why}))
            .collect::<Vec<_>>());
    }
    if let Some(o) = &cx.output {
        err["output"] = json!({
            "tail": String::from_utf8_lossy(&o.tail),
            "bytes": o.total,
            "cut": o.cut,
        });
    }
    err
}

/// The whole report as one JSON object; `schedule_files[k]` is where the schedule of the k-th
/// distinct error was saved.
pub fn json(
    sym: &Symbolizer,
    model: &str,
    outcome: &Outcome,
    elapsed_s: f64,
    schedule_files: &[PathBuf],
    part: Part,
) -> Value {
    let s = &outcome.stats;
    let mut o = json!({
        "schema": JSON_SCHEMA,
        "verdict": verdict(outcome),
        "model": model,
        "program": sym.program.path.display().to_string(),
        "arch": sym.program.arch.name(),
        "executions": s.executions,
        "blocked": s.blocked,
        "bounded": s.bounded,
        "events": s.events,
        "elapsed_s": (elapsed_s * 1e6).round() / 1e6,
        "startup_s": (part.startup_s * 1e6).round() / 1e6,
        "jobs": part.jobs,
        "executor": part.executor,
        "engine": part.engine,
    });
    if let Some(kib) = part.worker_rss_kib {
        o["worker_peak_rss_kib"] = json!(kib);
    }
    if let Some((k, n)) = part.shard {
        o["shard"] = json!(format!("{k}/{n}"));
    }
    if let Some((leaves, hash)) = outcome.top {
        o["top"] = json!({ "leaves": leaves, "hash": format!("{hash:016x}") });
    }
    if !outcome.observations.is_empty() {
        o["observations"] = json!(outcome
            .observations
            .iter()
            .map(|(values, n)| json!({ "values": values, "count": n }))
            .collect::<Vec<_>>());
    }
    let file = |k: usize| schedule_files.get(k).map(PathBuf::as_path);
    if !outcome.errors.is_empty() {
        o["errors"] = json!(outcome
            .errors
            .iter()
            .enumerate()
            .map(|(k, (cx, n))| {
                let mut e = error_json(sym, cx, file(k));
                e["count"] = json!(n);
                e
            })
            .collect::<Vec<_>>());
    }
    if let Some(cx) = &outcome.error {
        o["error"] = error_json(sym, cx, file(0));
    }
    o
}

/// Which part of an exploration a result is: workers that explored it, and for `--shard K/N`
/// (K, N).
#[derive(Clone, Copy, Debug)]
pub struct Part {
    pub jobs: usize,
    pub shard: Option<(u64, u64)>,
    /// How executions ran: [`crate::supervisor::NativeTarget::executor`].
    pub executor: &'static str,
    /// Where the engine ran: "worker" (inside the program's worker process,
    /// `supervisor::in_worker`) or "checker".
    pub engine: &'static str,
    /// With the engine in the worker: the worker's peak resident memory (KiB).
    pub worker_rss_kib: Option<u64>,
    /// Seconds until the program stood instrumented at main, ready for its first execution.
    pub startup_s: f64,
}

/// The closing lines of a text report.
pub fn summary_text(model: &str, outcome: &Outcome, elapsed_s: f64, part: Part) -> String {
    let s = &outcome.stats;
    let mut out = format!(
        "executions: {}  blocked: {}  cut at the step bound: {}  time: {:.2}s  model: {}\n",
        s.executions, s.blocked, s.bounded, elapsed_s, model
    );
    if outcome.errors.len() > 1 || outcome.errors.first().is_some_and(|e| e.1 > 1) {
        for (cx, n) in &outcome.errors {
            out.push_str(&format!(
                "  {n} execution(s): {}: {}\n",
                cx.kind.name(),
                cx.message
            ));
        }
    }
    if let (None, Some((k, n))) = (&outcome.error, part.shard) {
        let what = match (s.bounded, s.executions) {
            (0, 0) => "nothing checked (no execution ran to its end)",
            (0, _) => "OK",
            _ => "BOUNDED (executions were cut at the step bound)",
        };
        out.push_str(&format!(
            "verdict of shard {k}/{n} only: {what} in this part of the exploration; \
             `smc-run combine` the --json results of all {n} shards for the verdict\n"
        ));
        return out;
    }
    let error = outcome
        .error
        .as_ref()
        .map(|cx| (cx.kind.name(), cx.message.as_str()));
    out.push_str(&verdict_line(model, error, s.bounded, s.executions));
    out
}

/// The verdict line of a check (or of combined shards): the error (kind, message) if one was
/// found, else bounded if executions were cut, else OK.
pub fn verdict_line(
    model: &str,
    error: Option<(&str, &str)>,
    bounded: u64,
    executions: u64,
) -> String {
    match (error, bounded) {
        (Some((kind, message)), _) => format!("verdict: ERROR ({kind}): {message}\n"),
        (None, 0) if executions == 0 => "verdict: NOTHING CHECKED: every execution was dropped \
             (by an assumption, __VERIFIER_assume, or under the graph engine as an await loop's \
             repeat that another execution covers), so no execution ran to its end\n"
            .to_string(),
        (None, 0) => format!(
            "verdict: OK: no assertion failure, crash, deadlock or hang is reachable under {model}\n"
        ),
        (None, n) => format!(
            "verdict: BOUNDED: no error found, but {n} execution(s) were cut at the step bound \
             (often a spin loop that is not a plain await loop; see --max-steps) or at more \
             than 256 threads alive at once\n"
        ),
    }
}
