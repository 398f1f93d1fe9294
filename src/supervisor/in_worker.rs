//! The engine inside the worker: the whole exploration runs in the program's worker
//! process, where a step is a function call and a coroutine switch, instead of a round trip
//! between the checker and the worker (two context switches on one CPU) per new event.
//!
//! The runtime loads the engine library (`runtime/engine`, built from this crate) into the
//! fork server before the worker's snapshot and leaves its memory out of it; the library
//! allocates from mappings of its own, never from the program's heap, which every execution
//! puts back. The checker writes a request into a shared [`Area`], names the command an
//! exploration (`explore_cmd`), and waits; the worker answers with the statistics, the
//! observations and the schedule of each error, which the checker replays to report them as
//! usual. Whatever the worker cannot do (a library of another build, an execution that must end
//! the worker, the death of the worker, an engine that does not answer) makes the checker
//! explore that part by itself, from the start; a hang is an error like any other.

use std::collections::BTreeMap;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::sync::atomic::{
    AtomicU32, AtomicU64,
    Ordering::{Relaxed, SeqCst},
};
use std::time::{Duration, Instant};

use memmap2::MmapMut;
use serde_json::{json, Value};

use super::read::{ChannelReader, CORRUPTED};
use super::{interrupted, NativeTarget};
use crate::channel::{futex_wait, futex_wake, memfd, Channel, MAX_SCRIPT};
use crate::engine::parallel::Shard;
use crate::engine::trust::Dealing;
use crate::engine::{
    self, Config, ExecError, Executor, Portion, Progress, SlotView, Snapshot, Split,
};
use crate::event::{Reply, ScriptStep, MAX_ACCESS};
use crate::model::{self, Model};
use crate::program::Arch;
use crate::report::schedule;
use crate::results::{Counterexample, Observation, Outcome, Schedule, Stats, Step};

/// What the runtime hands the engine library (`struct smc_engine_ops` in runtime/worker.c).
#[repr(C)]
pub struct EngineOps {
    pub abi: u64,
    pub channel: *mut u8,
    pub channel_size: u64,
    /// Start an execution; 0 when every thread waits at a visible operation (or was set aside
    /// as hung, [`hang_signal`]), 1 when it is over already, negative when this worker cannot
    /// run another.
    pub begin: extern "C" fn() -> i32,
    /// Let the threads whose go is set run: as `begin`.
    pub run: extern "C" fn() -> i32,
    /// Abandon the current execution; negative when this worker cannot run another.
    pub end: extern "C" fn() -> i32,
}

/// Changes with [`EngineOps`] and the runtime's side of it.
pub const ENGINE_ABI: u64 = 3;

/// How often the hang signal goes out again while the thread has not been set aside.
pub(super) const HANG_RESEND: Duration = Duration::from_millis(100);

/// The signal that sets the running coroutine aside as hung (runtime/rt.h `SMC_HANG_SIGNAL`):
/// the checker sends it when the worker has taken no step for the execution time limit.
/// SIGRTMAX on x86-64; SIGSTKFLT for a ppc64le program, since qemu-user shifts real-time
/// signals between host and guest (7.2: the host's 64 is the guest's 62) and a standard one
/// arrives as itself.
pub fn hang_signal(arch: Arch) -> i32 {
    match arch {
        Arch::X86_64 => libc::SIGRTMAX(),
        Arch::Ppc64le => libc::SIGSTKFLT,
    }
}

/// The highest peak resident memory of a worker whose engine explored, in KiB.
static WORKER_PEAK_KIB: AtomicU64 = AtomicU64::new(0);

/// The peak resident memory of the workers whose engine explored (KiB; the highest of them),
/// if any did: the exploration's state lives there, not in the checker.
pub fn worker_peak_kib() -> Option<u64> {
    Some(WORKER_PEAK_KIB.load(SeqCst)).filter(|&k| k > 0)
}

/// The first word of field `name` (with its colon) in `/proc/PID/status`.
fn status_field(pid: u32, name: &str) -> Option<String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let rest = status.lines().find_map(|l| l.strip_prefix(name))?;
    rest.split_whitespace().next().map(str::to_string)
}

/// Whether process `pid` has a fatal signal pending (the kernel marks a process that a signal
/// kills with a pending SIGKILL at once, before it runs to exit).
fn dying(pid: u32) -> bool {
    status_field(pid, "SigPnd:")
        .and_then(|m| u64::from_str_radix(&m, 16).ok())
        .is_some_and(|m| m & (1 << (libc::SIGKILL - 1)) != 0)
}

/// `VmHWM` of process `pid`, in KiB.
fn peak_rss_kib(pid: u32) -> Option<u64> {
    status_field(pid, "VmHWM:")?.parse().ok()
}

/// The build of the checker, to refuse an engine library left from another one.
pub const BUILD_ID: &str = env!("SMC_BUILD_ID");

const AREA_SIZE: usize = 64 << 20;
const DATA: usize = 4096;
const AREA_MAGIC: u64 = 0x4145_4552_4b52_4f57; // "WORKREEA"

/// The start of the shared area; the request and then the result follow at [`DATA`].
#[repr(C)]
struct AreaHeader {
    magic: u64,
    /// executions, blocked, bounded, events, depth: the running totals
    stats: [AtomicU64; 5],
    /// Executions begun and steps taken: the checker's sign that the worker is not stuck.
    steps: AtomicU64,
    /// The checker asks the exploration to stop (interrupted).
    stop: AtomicU32,
    /// The worker's engine split the tree (`Split::on_split`).
    split: AtomicU32,
    /// A claim of a leaf of the split top (`Split::claim`): the worker puts the prefix in the
    /// data part and bumps `claim_asked`; the checker answers in `claim_answer` and sets
    /// `claim_done` to the same number (a futex the worker may sleep on).
    claim_asked: AtomicU32,
    claim_done: AtomicU32,
    claim_answer: AtomicU32,
    _pad: u32,
    len: AtomicU64,
}

/// A memfd both sides map: the checker's request, the worker's progress and its result.
pub struct Area {
    base: *mut u8,
    file: Option<File>,
    _map: Option<MmapMut>,
}

// SAFETY: the area is plain shared memory; its words are atomics, and its data part is read
// only after the word that says it is there.
unsafe impl Send for Area {}
unsafe impl Sync for Area {}

impl Area {
    /// The checker's side: a fresh area (pages are only used when written).
    pub fn create() -> std::io::Result<Area> {
        let file = memfd(c"smc-run-engine", libc::MFD_CLOEXEC)?;
        file.set_len(AREA_SIZE as u64)?;
        // SAFETY: the memfd is ours; the worker maps it too, which is the point of it.
        let mut map = unsafe { MmapMut::map_mut(&file)? };
        let base = map.as_mut_ptr();
        let a = Area {
            base,
            file: Some(file),
            _map: Some(map),
        };
        // SAFETY: the mapping starts with room for the header.
        unsafe { (*(base as *mut AreaHeader)).magic = AREA_MAGIC };
        Ok(a)
    }

    /// The worker's side: the checker's area, mapped by the runtime at start-up (it closed the
    /// descriptor, so that executions start with descriptors 0-2 only).
    ///
    /// # Safety
    /// Only in the worker, with the runtime's mapping of the descriptor the checker passed
    /// (`AREA_SIZE` bytes), or null.
    pub unsafe fn attach(base: *mut u8) -> Option<Area> {
        if base.is_null() {
            return None;
        }
        let a = Area {
            base,
            file: None,
            _map: None,
        };
        (a.header().magic == AREA_MAGIC).then_some(a)
    }

    pub fn fd(&self) -> i32 {
        self.file.as_ref().map_or(-1, |f| f.as_raw_fd())
    }

    fn header(&self) -> &AreaHeader {
        // SAFETY: the header is at the start of the live mapping; its shared words are atomics.
        unsafe { &*(self.base as *const AreaHeader) }
    }

    fn put(&self, v: &Value) -> bool {
        let bytes = v.to_string().into_bytes();
        if bytes.len() > AREA_SIZE - DATA {
            return false;
        }
        // SAFETY: the data part of the mapping is this long; the other side reads it only
        // after `len` says it is there.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.base.add(DATA), bytes.len()) };
        self.header().len.store(bytes.len() as u64, SeqCst);
        true
    }

    fn get(&self) -> Option<Value> {
        let n = self.header().len.load(SeqCst) as usize;
        if n > AREA_SIZE - DATA {
            return None;
        }
        // SAFETY: within the mapping; the bytes are untrusted, parsed as JSON.
        let bytes = unsafe { std::slice::from_raw_parts(self.base.add(DATA), n) };
        serde_json::from_slice(bytes).ok()
    }

    fn publish(&self, s: &Stats) {
        let h = self.header();
        for (w, v) in h
            .stats
            .iter()
            .zip([s.executions, s.blocked, s.bounded, s.events, s.depth])
        {
            w.store(v, SeqCst);
        }
    }

    fn stats(&self) -> Stats {
        let v = |i: usize| self.header().stats[i].load(SeqCst);
        Stats {
            executions: v(0),
            blocked: v(1),
            bounded: v(2),
            events: v(3),
            depth: v(4),
        }
    }
}

/// Wakes the checker, asleep on the channel's `sup_futex`, from the worker.
struct Bell {
    futex: *const AtomicU32,
    sleeping: *const AtomicU32,
}

// SAFETY: two words of the channel's live mapping, used only as atomics.
unsafe impl Sync for Bell {}

impl Bell {
    fn ring(&self) {
        // SAFETY: see the struct.
        let (futex, sleeping) = unsafe { (&*self.futex, &*self.sleeping) };
        futex.fetch_add(1, SeqCst);
        if sleeping.load(SeqCst) != 0 {
            futex_wake(futex);
        }
    }
}

impl Area {
    /// The worker's side of `Split::claim` and `Dealing::claim`: ask the checker, which keeps
    /// the claims of all workers, and wait for its answer.
    fn claim(&self, bell: &Bell, what: &Value) -> bool {
        let h = self.header();
        if !self.put(what) {
            return false;
        }
        let asked = h.claim_asked.load(SeqCst).wrapping_add(1);
        h.claim_asked.store(asked, SeqCst);
        bell.ring();
        let mut yields = 0;
        loop {
            let done = h.claim_done.load(SeqCst);
            if done == asked {
                return h.claim_answer.load(SeqCst) == 1;
            }
            if yields < 100 {
                yields += 1;
                // SAFETY: plain system call (not the program's interposed sched_yield)
                unsafe { libc::syscall(libc::SYS_sched_yield) };
            } else {
                futex_wait(&h.claim_done, done, Duration::from_millis(10));
            }
        }
    }
}

/// A schedule as JSON: [[path, alt], ...].
fn schedule_json(steps: &[Step]) -> Value {
    steps.iter().map(|st| json!([st.thread, st.alt])).collect()
}

/// What a graph engine's counterexample adds to its trace (which write each read read,
/// coherence, dependencies, the model's account of its weakness): a replay of its schedule
/// gives the rest. Sources, coherence and replies as a saved schedule has them.
fn graph_json(cx: &Counterexample) -> Value {
    json!({
        "events": cx.trace.len(),
        "sources": schedule::sources_json(&cx.sources),
        "coherence": cx.coherence,
        "dependencies": cx.dependencies,
        "reorderings": cx.reorderings,
        "weakness": cx.weakness,
    })
}

/// [`graph_json`] put on `cx`, a replay of the same schedule; `None` (and `cx` as it was) if it
/// does not fit.
fn add_graph(cx: &mut Counterexample, v: &Value) -> Option<()> {
    fn items<T>(v: &Value, item: impl Fn(&Value) -> Option<T>) -> Option<Vec<T>> {
        v.as_array()?.iter().map(item).collect()
    }
    // (two events and why the model relates them)
    let pair = |t: &Value| {
        Some((
            t[0].as_u64()? as usize,
            t[1].as_u64()? as usize,
            known(&t[2])?,
        ))
    };
    if v["events"].as_u64()? != cx.trace.len() as u64 {
        return None;
    }
    let sources = items(&v["sources"], schedule::source_of)?;
    let coherence = items(&v["coherence"], schedule::order_of)?;
    let dependencies = items(&v["dependencies"], pair)?;
    let reorderings = items(&v["reorderings"], pair)?;
    let weakness = match &v["weakness"] {
        Value::Null => None,
        w => Some(known(w)?),
    };
    cx.sources = sources;
    cx.coherence = coherence;
    cx.dependencies = dependencies;
    cx.reorderings = reorderings;
    cx.weakness = weakness;
    Some(())
}

/// One of the few phrases a counterexample names dependencies and weaknesses by, kept for
/// the life of the checker (each is made once).
fn known(v: &Value) -> Option<&'static str> {
    static KNOWN: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let s = v.as_str()?;
    let mut known = KNOWN.lock().unwrap();
    if let Some(k) = known.iter().find(|k| **k == s) {
        return Some(k);
    }
    let k: &'static str = Box::leak(s.to_string().into_boxed_str());
    known.push(k);
    Some(k)
}

/// A schedule from JSON; `None` if it is not one.
fn schedule_of(v: &Value) -> Option<Vec<Step>> {
    v.as_array()?
        .iter()
        .map(|st| {
            let thread = st[0]
                .as_array()?
                .iter()
                .map(Value::as_u64)
                .collect::<Option<_>>()?;
            let alt = u32::try_from(st[1].as_u64()?).ok()?;
            Some(Step { thread, alt })
        })
        .collect()
}

/// An [`Executor`] inside the worker: the runtime's coroutine loop, called directly.
struct WorkerExecutor<'a> {
    ops: &'a EngineOps,
    ch: Channel,
    area: &'a Area,
    in_exec: bool,
    /// The slots of the last snapshot the engine gave back, for the next one.
    spare_slots: Vec<SlotView>,
    /// They are the state of this execution before the next step (given back since the last
    /// snapshot): a step then reads only the slots it changed.
    spare_current: bool,
}

impl WorkerExecutor<'_> {
    fn reader(&self) -> ChannelReader<'_> {
        ChannelReader {
            ch: &self.ch,
            plan: None,
            load_bias: 0,
            tramp: 0,
        }
    }

    /// What the runtime's call returned: where the execution stands now (after a step of slot
    /// `stepped`, or a start).
    fn settle(&mut self, r: i32, stepped: Option<usize>) -> Result<Snapshot, ExecError> {
        // the worker is the counter's only writer: a plain increment, not a locked one
        let steps = &self.area.header().steps;
        steps.store(steps.load(Relaxed).wrapping_add(1), Relaxed);
        let slots = std::mem::take(&mut self.spare_slots);
        let current = std::mem::take(&mut self.spare_current);
        match r {
            0 => match stepped {
                Some(i) if current => self.reader().snapshot_after_step(slots, i),
                _ => self.reader().snapshot_into(false, slots),
            },
            1 => {
                self.in_exec = false;
                self.reader().snapshot_into(true, slots)
            }
            _ => {
                self.in_exec = false;
                Err(spent())
            }
        }
    }
}

fn spent() -> ExecError {
    ExecError::Fatal("this worker cannot run another execution".into())
}

impl Executor for WorkerExecutor<'_> {
    fn begin(&mut self) -> Result<Snapshot, ExecError> {
        self.begin_after(&mut std::iter::empty())
            .map(|(snap, _)| snap)
    }

    fn max_prefix(&self) -> usize {
        MAX_SCRIPT
    }

    /// An execution ends at its exit: only the exit handlers it registered run after
    /// (runtime/exits.c), not those registered before main.
    fn runs_code_after_exit(&self) -> bool {
        false
    }

    fn begin_after(
        &mut self,
        steps: &mut dyn Iterator<Item = &ScriptStep>,
    ) -> Result<(Snapshot, usize), ExecError> {
        self.end()?;
        self.ch.reset_execution();
        let n = self.ch.set_script(steps, false);
        self.in_exec = true;
        let r = (self.ops.begin)();
        let snap = self.settle(r, None)?;
        Ok((snap, self.ch.script_progress(n).0))
    }

    fn step_hanging(&mut self, slot: u32, reply: &Reply) -> Result<Snapshot, ExecError> {
        let us = super::HANG_AGAIN.as_micros() as u32;
        self.ch.hang_soon_us().store(us, SeqCst);
        self.step(slot, reply)
    }

    fn step(&mut self, slot: u32, reply: &Reply) -> Result<Snapshot, ExecError> {
        let i = super::give_reply(&self.ch, slot, reply)?;
        self.ch.running().store(1, SeqCst);
        self.ch.slot_go(i).store(1, SeqCst);
        let r = (self.ops.run)();
        self.settle(r, Some(i))
    }

    fn recycle(&mut self, snap: Snapshot) {
        self.spare_slots = snap.slots;
        self.spare_current = self.in_exec && snap.ended.is_none();
    }

    fn commit(&mut self, owner: u32, addr: u64, bytes: &[u8]) -> Result<(), ExecError> {
        // Every thread of the execution waits, and this is its process: write it now (the
        // runtime checks the same before writing a queued one).
        if addr >= 4096 && bytes.len() <= MAX_ACCESS {
            // SAFETY: a location a store of the program wrote in this execution.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), addr as *mut u8, bytes.len()) };
        }
        self.ch.retire_pending(owner, addr);
        Ok(())
    }

    fn end(&mut self) -> Result<(), ExecError> {
        if !self.in_exec {
            return Ok(());
        }
        self.in_exec = false;
        if (self.ops.end)() < 0 {
            return Err(spent());
        }
        Ok(())
    }

    fn observed(&self) -> Observation {
        self.ch.observed()
    }

    fn found_shared(&self) -> Vec<(u64, u64)> {
        self.ch.found_shared()
    }
}

/// The worker's side, called by the engine library: read the request, explore, write the
/// result. Never unwinds (the library catches panics around it).
///
/// # Safety
/// Only in the worker, between executions, with the runtime's operations and its mapping of
/// the checker's area.
pub unsafe fn serve(ops: &EngineOps, area: *mut u8) -> i32 {
    let Some(area) = Area::attach(area) else {
        return 1;
    };
    let result = match explore_here(ops, &area) {
        Ok(v) => v,
        Err(why) => json!({ "fallback": why }),
    };
    if !area.put(&result) {
        area.put(&json!({ "fallback": "the result does not fit the shared area" }));
    }
    0
}

fn explore_here(ops: &EngineOps, area: &Area) -> Result<Value, String> {
    let req = area.get().ok_or("no request")?;
    if ops.abi != ENGINE_ABI || req["build"] != BUILD_ID {
        return Err("the engine library is from another build of smc-run".into());
    }
    let bound = req["bound"].as_u64().map(|b| b as usize);
    let model = model::named(req["model"].as_str().unwrap_or(""), bound)?;
    let cfg = Config {
        max_steps: req["max_steps"].as_u64().ok_or("no step bound")? as usize,
        keep_going: req["keep_going"].as_bool().unwrap_or(false),
        allow_exit_status: req["allow_exit_status"].as_bool().unwrap_or(false),
        max_executions: req["max_executions"].as_u64(),
        spurious_wakeups: req["spurious_wakeups"].as_u64().unwrap_or(0) as u32,
        nondet_values: req["nondet_values"].as_u64().ok_or("no nondet domain")? as u32,
        graph: req["graph"].as_bool().unwrap_or(false),
        fair_after: crate::engine::DEFAULT_FAIR_AFTER,
    };
    // SAFETY: the runtime's mapping of the channel, for the life of the process.
    let ch = unsafe { Channel::borrowed(ops.channel, ops.channel_size as usize) };
    if !ch.intact() {
        return Err("the channel is not intact".into());
    }
    let bell = Bell {
        futex: ch.sup_futex(),
        sleeping: ch.sup_sleeping(),
    };
    let mut exec = WorkerExecutor {
        ops,
        ch,
        area,
        in_exec: false,
        spare_slots: Vec::new(),
        spare_current: false,
    };
    let mut progress = |s: &Stats| {
        area.publish(s);
        area.header().stop.load(SeqCst) == 0
    };
    let claim = |prefix: &[Step]| area.claim(&bell, &schedule_json(prefix));
    let on_split = || {
        area.header().split.store(1, SeqCst);
        bell.ring();
    };
    let claim_block = |block: u64| area.claim(&bell, &json!(block));
    let dealing = match &req["deal"] {
        Value::Null => None,
        v => Some(Dealing {
            shard: Shard {
                index: v["shard"][0].as_u64().ok_or("no shard")?,
                count: v["shard"][1].as_u64().ok_or("no shard")?,
            },
            counts_top: v["counts_top"].as_bool().ok_or("no dealing")?,
            claim: (v["claims"].as_bool().ok_or("no dealing")?)
                .then_some(&claim_block as &(dyn Fn(u64) -> bool + Sync)),
        }),
    };
    let split = match &req["split"] {
        Value::Null => None,
        v => Some(Split {
            after: v["after"].as_u64().ok_or("no split")?,
            leaves: v["leaves"].as_u64().ok_or("no split")?,
            claim: &claim,
            on_split: &on_split,
        }),
    };
    let explored = if cfg.graph {
        match engine::trust::explore_part(&mut exec, model.as_ref(), &cfg, &mut progress, dealing) {
            // the checker stopped it (another worker met an error, or the user interrupted)
            Err(ExecError::Interrupted) => return Ok(json!({ "stopped": true })),
            r => r,
        }
    } else {
        engine::explore_part(
            &mut exec,
            model.as_ref(),
            &cfg,
            &mut progress,
            split.as_ref(),
        )
    };
    let o = match explored.and_then(|o| exec.end().map(|_| o)) {
        Ok(o) => o,
        // a channel the program overwrote: the checker's explorations would read the same
        Err(ExecError::Fatal(m)) if m.starts_with(CORRUPTED) => return Ok(json!({ "fatal": m })),
        Err(e) => return Err(format!("{e:?}")),
    };
    area.publish(&o.stats);
    let s = &o.stats;
    Ok(json!({
        "stats": [s.executions, s.blocked, s.bounded, s.events, s.depth],
        "errors": o.errors.iter().map(|(cx, n)| json!({
            "schedule": schedule_json(&cx.schedule), "count": n,
            "replies": cx.replies.iter().map(schedule::reply_json).collect::<Vec<_>>(),
            "hung": cx.hung,
            "graph": cfg.graph.then(|| graph_json(cx)),
            "found": [cx.found.0, cx.found.1],
        })).collect::<Vec<_>>(),
        "observations": o.observations.iter().map(|(k, n)| json!([k, n])).collect::<Vec<_>>(),
        "top": o.top.map(|(a, b)| json!([a, b])),
    }))
}

/// The checker's side ([`Executor::explore_inside`]): explore with the engine inside the
/// worker, then replay each error the worker met to report it. `None` when the worker could
/// not (the caller explores by itself).
pub(super) fn explore(
    target: &mut NativeTarget,
    model: &dyn Model,
    cfg: &Config,
    portion: Portion,
    progress: Progress,
) -> Result<Option<Outcome>, ExecError> {
    let Some(v) = target.explore_in_worker(model, cfg, portion, progress)? else {
        return Ok(None);
    };
    if v.get("stopped").is_some() {
        target.explored_inside = true;
        return Ok(Some(Outcome::default()));
    }
    if v.get("fallback").is_some() {
        return Ok(None);
    }
    if let Some(m) = v["fatal"].as_str() {
        return Err(ExecError::Fatal(m.to_string()));
    }
    let Some((mut out, errors)) = decode(&v) else {
        return Ok(None);
    };
    // the runtime notes them in the channel, which we map too
    out.shared_found = target.found_shared();
    for e in errors {
        // A program whose error does not come back on replay: explore here, as without the
        // worker's engine.
        let r = match engine::replay(target, model, cfg, &e.schedule, false) {
            Err(ExecError::Fatal(_)) => return Ok(None),
            r => r?,
        };
        let Some(mut cx) = r.error else {
            return Ok(None);
        };
        if e.graph
            .as_ref()
            .is_some_and(|g| add_graph(&mut cx, g).is_none())
        {
            return Ok(None);
        }
        let count = e.count;
        cx.found = e.found;
        match out
            .errors
            .iter_mut()
            .find(|(e, _)| e.kind == cx.kind && e.message == cx.message)
        {
            Some(e) => e.1 += count,
            None => out.errors.push((cx.clone(), count)),
        }
        out.error.get_or_insert(cx);
    }
    target.explored_inside = true;
    Ok(Some(out))
}

/// An error as the worker reports it.
struct Found {
    /// Its steps; the graph engine's reply to each; the steps that hung.
    schedule: Schedule,
    /// The graph engine's: what its graph adds ([`graph_json`]).
    graph: Option<Value>,
    count: u64,
    found: (u64, u64),
}

/// The worker's result: the outcome but its errors, and those; `None` if it makes no sense.
fn decode(v: &Value) -> Option<(Outcome, Vec<Found>)> {
    let n = |v: &Value| v.as_u64();
    let s = v["stats"].as_array()?;
    let stats = Stats {
        executions: n(s.first()?)?,
        blocked: n(s.get(1)?)?,
        bounded: n(s.get(2)?)?,
        events: n(s.get(3)?)?,
        depth: n(s.get(4)?)?,
    };
    let mut errors = Vec::new();
    for e in v["errors"].as_array()? {
        let found = (n(&e["found"][0])?, n(&e["found"][1])?);
        let replies = match &e["replies"] {
            Value::Null => Vec::new(),
            r => (r.as_array()?.iter())
                .map(schedule::reply_of)
                .collect::<Option<_>>()?,
        };
        let hung = match &e["hung"] {
            Value::Null => Vec::new(),
            h => (h.as_array()?.iter())
                .map(|i| i.as_u64().map(|i| i as usize))
                .collect::<Option<_>>()?,
        };
        errors.push(Found {
            schedule: Schedule {
                steps: schedule_of(&e["schedule"])?,
                replies,
                hung,
            },
            graph: Some(e["graph"].clone()).filter(|g| !g.is_null()),
            count: n(&e["count"])?,
            found,
        });
    }
    let mut observations = BTreeMap::new();
    for o in v["observations"].as_array()? {
        let seen = o[0]
            .as_array()?
            .iter()
            .map(|p| Some((u32::try_from(n(&p[0])?).ok()?, n(&p[1])?)))
            .collect::<Option<Observation>>()?;
        observations.insert(seen, n(&o[1])?);
    }
    let top = match &v["top"] {
        Value::Null => None,
        t => Some((n(&t[0])?, n(&t[1])?)),
    };
    let out = Outcome {
        stats,
        observations,
        top,
        ..Outcome::default()
    };
    Some((out, errors))
}

impl NativeTarget {
    /// Where the engine ran: "worker" when the worker's engine explored (all of it, or this
    /// worker's part), else "checker".
    pub fn engine_placement(&self) -> &'static str {
        if self.explored_inside {
            "worker"
        } else {
            "checker"
        }
    }

    /// Ask the worker to explore; its answer, or `None` if it died or hung (then its
    /// executions are lost and the next begins in a fresh worker).
    fn explore_in_worker(
        &mut self,
        model: &dyn Model,
        cfg: &Config,
        portion: Portion,
        progress: Progress,
    ) -> Result<Option<Value>, ExecError> {
        let Some(area) = self.area.as_ref() else {
            return Ok(None);
        };
        // a claim the worker asks for: its leaf of the split top, or a block of graphs
        let answer = |v: &Value| match portion {
            Portion::Whole => Some(false),
            Portion::Split(s) => schedule_of(v).map(|p| (s.claim)(&p)),
            Portion::Deal(d) => v.as_u64().map(|n| d.claim.is_some_and(|c| c(n))),
        };
        let split = match portion {
            Portion::Split(s) => Some(s),
            _ => None,
        };
        let deal = match portion {
            Portion::Deal(d) => Some(d),
            _ => None,
        };
        let h = area.header();
        h.stop.store(0, SeqCst);
        h.steps.store(0, SeqCst);
        h.split.store(0, SeqCst);
        h.claim_done.store(h.claim_asked.load(SeqCst), SeqCst);
        area.publish(&Stats::default());
        let put = area.put(&json!({
            "build": BUILD_ID,
            "model": model.name(),
            "bound": model.buffers().and_then(|(_, b)| b),
            "max_steps": cfg.max_steps,
            "spurious_wakeups": cfg.spurious_wakeups,
            "nondet_values": cfg.nondet_values,
            "keep_going": cfg.keep_going,
            "allow_exit_status": cfg.allow_exit_status,
            "max_executions": cfg.max_executions,
            "graph": cfg.graph,
            "deal": deal.map(|d| json!({
                "shard": [d.shard.index, d.shard.count],
                "counts_top": d.counts_top,
                "claims": d.claim.is_some(),
            })),
            "split": split.map(|s| json!({ "after": s.after, "leaves": s.leaves })),
        }));
        if !put {
            return Ok(None);
        }
        self.end()?;
        self.ch.reset_execution();
        self.begin_command(true);
        // the last step count seen and when it changed; the first and last hang signal since
        let (mut steps_seen, mut quiet_since) = (0, Instant::now());
        let mut hang_sent: Option<(Instant, Instant)> = None;
        let mut shown = Instant::now();
        let mut stopping: Option<Instant> = None;
        let grace = Duration::from_secs(2);
        let (mut split_seen, mut garbled) = (false, false);
        loop {
            let seq = self.ch.sup_futex().load(SeqCst);
            if self.exec_ended() {
                break;
            }
            let area = self.area.as_ref().expect("an area");
            let h = area.header();
            let asked = h.claim_asked.load(SeqCst);
            if asked != h.claim_done.load(SeqCst) {
                // a claim the program scribbled over: nothing is claimed, and the worker's
                // part is explored again by the checker
                let yes = area.get().as_ref().and_then(answer);
                garbled |= yes.is_none();
                h.claim_answer.store((yes == Some(true)) as u32, SeqCst);
                h.claim_done.store(asked, SeqCst);
                futex_wake(&h.claim_done);
            }
            if let Some(split) = split {
                if !split_seen && h.split.load(SeqCst) != 0 {
                    split_seen = true;
                    (split.on_split)();
                }
            }
            if shown.elapsed() >= Duration::from_millis(100) {
                shown = Instant::now();
                if !progress(&area.stats()) || interrupted() {
                    h.stop.store(1, SeqCst);
                    stopping.get_or_insert_with(Instant::now);
                }
            }
            let steps = h.steps.load(SeqCst);
            let now = Instant::now();
            if steps != steps_seen {
                (steps_seen, quiet_since) = (steps, now);
                hang_sent = None;
            } else if now - quiet_since > self.timeout {
                // a thread runs without a visible operation: the worker sets it aside as
                // hung (again until it does: it waits out the runtime's own code)
                let (_, last) = hang_sent.get_or_insert((now, now - HANG_RESEND));
                if now - *last >= HANG_RESEND {
                    *last = now;
                    self.signal_execution(hang_signal(self.plan.arch));
                }
            }
            let stuck = hang_sent.is_some_and(|(first, _)| first.elapsed() > grace);
            if stuck || stopping.is_some_and(|t| t.elapsed() > grace) {
                // the engine itself is stuck: the checker explores by itself; or it does not
                // stop (it looks only between executions, and this one is long): stopped
                self.kill_execution()?;
                if stopping.is_some() {
                    self.ch.explore_cmd().store(0, SeqCst);
                    return Ok(Some(json!({ "stopped": true })));
                }
                break;
            }
            if let Ok(Some(st)) = self.server.try_wait() {
                return Err(super::server_died(st));
            }
            self.sleep(seq, Duration::from_millis(50));
        }
        self.in_exec = false;
        self.ch.explore_cmd().store(0, SeqCst);
        let answer = self.area.as_ref().and_then(Area::get);
        if answer.as_ref().is_some_and(|v| v.get("fatal").is_some()) {
            return Ok(answer); // a channel the program overwrote: nothing else counts
        }
        // A program that kills the fork server (its parent) may still see its worker finish
        // the exploration: that is the same error as when the checker's engine sees it die.
        if dying(self.server.id()) {
            let st = self
                .server
                .wait()
                .map_err(|e| ExecError::Fatal(e.to_string()))?;
            return Err(super::server_died(st));
        }
        if let Ok(Some(st)) = self.server.try_wait() {
            return Err(super::server_died(st));
        }
        if self.ch.wait_status() != 0 || garbled {
            return Ok(None);
        }
        // the worker waits for its next command: its peak so far is the exploration's
        if let Some(kib) = peak_rss_kib(self.ch.child_pid() as u32) {
            WORKER_PEAK_KIB.fetch_max(kib, SeqCst);
        }
        Ok(answer)
    }
}
