//! A test double for [`Executor`]: threads given as lists of operations, run in-process, so
//! the engine can be tested on abstract traces without any process.

use std::cell::Cell;
use std::collections::HashMap;

use super::{
    Config, Ended, ExecError, Executed, Executor, ProcessEnd, Reply, RuntimeError,
    RuntimeErrorKind, ScriptStep, SlotState, SlotView, Snapshot,
};
use crate::event::{CasOperands, Op, Pending, StoreBytes, TargetAddr};

/// A checked condition over final memory: an "assertion" that fails when it returns false.
pub type Check = fn(&HashMap<u64, u64>) -> bool;

/// The key of what the `index`th operation of script `script` read, in observations.
pub fn read_key(script: usize, index: usize) -> u32 {
    ((script as u32) << 8) | index as u32
}

/// The graph engine's reply to a lock that must wait (runtime/sync.c `SMC_BUSY`).
const GRAPH_BUSY: u64 = 1;
/// And to a futex wake that must wait (`SMC_WAKE_BUSY`).
const GRAPH_WAKE_BUSY: u64 = 1 << 32;

/// A futex wait under the graph engine, after it took the futex: the word's load, joining the
/// waiters (or not), the wait for a wake.
#[derive(Clone, Copy, PartialEq, Eq)]
enum FutexStep {
    None,
    Read,
    Join(bool),
    Woken,
}

/// Main (thread 0) spawns one thread per script, joins them all, then checks and exits.
pub struct Mock {
    pub scripts: Vec<Vec<(Op, u64)>>,
    check: Option<Check>,
    mem: HashMap<u64, u64>,
    /// Per slot: script index (main = None), position in its op list.
    slots: Vec<(Option<usize>, usize, u32)>,
    /// Per slot: the futex word it waits on (its wait found the expected value), until its
    /// wait returns (`Op::FutexWoken`, the next operation it stops at).
    waiting: Vec<Option<TargetAddr>>,
    /// Per slot, under the graph engine: where its futex wait is (runtime/sync.c's
    /// `futex_wait_graph`), after the futex was taken.
    futex: Vec<FutexStep>,
    prev: Vec<Option<Executed>>,
    /// Per slot: what its last load or compare-exchange read (a compare-exchange's expected
    /// value).
    last_read: Vec<u64>,
    main_pos: usize,
    pub executions: u32,
    /// Stores are buffered by the engine (TSO, PSO): they do not write memory themselves.
    pub buffered: bool,
    /// The graph engine's runtime: stores are captured as buffered ones, but stay in memory
    /// and report what they wrote over.
    pub graph: bool,
    /// Observes what each load and fetch-and-add of a thread read, keyed by [`read_key`].
    pub observe_reads: bool,
    reads: Vec<(u32, u64)>,
    /// Carries out the prefixes of executions itself ([`Executor::begin_after`]).
    pub prefixes: bool,
    /// Reports a compare-exchange's operands at its stop, as the runtime does for x86's.
    pub cas_operands: bool,
    /// Steps the engine asked for one by one, and steps of prefixes carried out alone.
    pub steps: u64,
    pub skipped: u64,
}

pub fn load(a: u64) -> (Op, u64) {
    (
        Op::Load {
            addr: TargetAddr(a),
            size: 4,
        },
        0,
    )
}
pub fn store(a: u64, v: u64) -> (Op, u64) {
    (
        Op::Store {
            addr: TargetAddr(a),
            size: 4,
        },
        v,
    )
}
/// The random numbers of the brute-force tests (a linear congruential generator: the same
/// programs on every machine).
pub struct Lcg(pub u64);

impl Lcg {
    /// The generator of a randomised test: `seed`, mixed with `SMC_TEST_SEED` where that is
    /// set, so that a loop over its values by hand tries other programs than the suite's
    /// (`SMC_TEST_SEED=$i cargo test --release --lib brute_force`; a failure is repeated by
    /// the value it failed with).
    pub fn for_test(seed: u64) -> Lcg {
        let extra = std::env::var("SMC_TEST_SEED")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0);
        Lcg(seed ^ extra.wrapping_mul(0x9e37_79b9_7f4a_7c15))
    }

    /// A number below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// A compare-exchange (a locked `cmpxchg`): if the word holds what its thread's last load
/// or compare-exchange read, adds `v` to it.
pub fn compare_exchange(a: u64, v: u64) -> (Op, u64) {
    (
        Op::Cas {
            addr: TargetAddr(a),
            size: 4,
        },
        v,
    )
}

/// Atomically adds `v` (a locked `xadd`).
pub fn fetch_add(a: u64, v: u64) -> (Op, u64) {
    (
        Op::Rmw {
            addr: TargetAddr(a),
            size: 4,
        },
        v,
    )
}
pub fn fence() -> (Op, u64) {
    (
        Op::Fence {
            kind: crate::event::FenceKind::Full,
        },
        0,
    )
}
pub fn lock(m: u64) -> (Op, u64) {
    (Op::MutexLock { obj: TargetAddr(m) }, 0)
}
pub fn unlock(m: u64) -> (Op, u64) {
    (Op::MutexUnlock { obj: TargetAddr(m) }, 0)
}
pub fn sem_wait(s: u64) -> (Op, u64) {
    (
        Op::SemWait {
            obj: TargetAddr(s),
            try_only: false,
        },
        0,
    )
}
pub fn sem_post(s: u64) -> (Op, u64) {
    (Op::SemPost { obj: TargetAddr(s) }, 0)
}
/// futex(FUTEX_WAIT): waits while the word at `a` holds `expected`, until a wake picks it.
pub fn futex_wait(a: u64, expected: u32) -> (Op, u64) {
    (
        Op::FutexWait {
            addr: TargetAddr(a),
            expected,
            timed: false,
        },
        0,
    )
}
/// futex(FUTEX_WAKE) of one waiter.
pub fn futex_wake(a: u64) -> (Op, u64) {
    (
        Op::FutexWake {
            addr: TargetAddr(a),
            count: 1,
        },
        0,
    )
}

impl Mock {
    pub fn new(scripts: Vec<Vec<(Op, u64)>>, check: Option<Check>) -> Mock {
        Mock {
            scripts,
            check,
            mem: HashMap::new(),
            slots: Vec::new(),
            waiting: Vec::new(),
            futex: Vec::new(),
            prev: Vec::new(),
            last_read: Vec::new(),
            main_pos: 0,
            executions: 0,
            buffered: false,
            graph: false,
            observe_reads: false,
            reads: Vec::new(),
            prefixes: true,
            cas_operands: true,
            steps: 0,
            skipped: 0,
        }
    }

    /// Main's program: spawn each thread, join each, exit.
    fn main_op(&self) -> Op {
        let n = self.scripts.len();
        match self.main_pos {
            p if p < n => Op::Spawn,
            p if p < 2 * n => Op::Join {
                slot: (p - n + 1) as u32,
            },
            _ => Op::ProcessExit {
                status: 0,
                handlers: false,
            },
        }
    }

    fn op_of(&self, slot: usize) -> Option<Op> {
        if let Some(addr) = self.waiting[slot] {
            return Some(Op::FutexWoken { addr, timed: false });
        }
        let (script, pos, _) = self.slots[slot];
        if let (Some(s), step) = (script, self.futex[slot]) {
            if let Some(&(Op::FutexWait { addr, .. }, _)) = self.scripts[s].get(pos.wrapping_sub(1))
            {
                match step {
                    FutexStep::None => {}
                    FutexStep::Read => return Some(Op::Load { addr, size: 4 }),
                    FutexStep::Join(waits) => return Some(Op::FutexJoin { addr, waits }),
                    FutexStep::Woken => return Some(Op::FutexWoken { addr, timed: false }),
                }
            }
        }
        match script {
            None => Some(self.main_op()),
            Some(s) => {
                let ops = &self.scripts[s];
                match pos {
                    0 => Some(Op::ThreadStart),
                    p if p <= ops.len() => Some(ops[p - 1].0),
                    p if p == ops.len() + 1 => Some(Op::ThreadExit),
                    _ => None,
                }
            }
        }
    }

    /// Slot `i`'s compare-exchange `op`: it expects what its thread last read, and adds its
    /// script's value to that.
    fn operands(&self, i: usize, op: &Op) -> Option<CasOperands> {
        let (Op::Cas { .. }, true, (Some(s), pos, _)) = (op, self.cas_operands, self.slots[i])
        else {
            return None;
        };
        let expected = self.last_read[i];
        let value = self.scripts[s].get(pos.wrapping_sub(1))?.1;
        Some(CasOperands {
            expected,
            desired: (expected + value) & 0xffff_ffff,
        })
    }

    fn snapshot(&self, ended: Option<Ended>) -> Snapshot {
        let slots = (0..self.slots.len())
            .map(|i| SlotView {
                parent: self.slots[i].2,
                state: match self.op_of(i) {
                    // a distinct pc per operation: no two loads look like an await loop
                    Some(op) => SlotState::Stopped(Pending {
                        op,
                        pc: 0x1000 + 0x100 * i as u64 + self.slots[i].1 as u64,
                        hash: 0,
                        site: 0,
                        skipped: 0,
                        cas: self.operands(i, &op),
                        stores: None,
                    }),
                    None => SlotState::Exited,
                },
                prev: self.prev[i].clone(),
            })
            .collect();
        Snapshot { slots, ended }
    }
}

/// What an operation that read `v` and wrote nothing reports.
fn read_only(v: u64) -> Executed {
    Executed {
        wrote: false,
        read: Some(v),
        written: None,
        stored: None,
        replaced: None,
    }
}

impl Executor for Mock {
    fn begin(&mut self) -> Result<Snapshot, ExecError> {
        self.executions += 1;
        self.mem.clear();
        self.reads.clear();
        self.slots = vec![(None, 0, 0)];
        self.waiting = vec![None];
        self.futex = vec![FutexStep::None];
        self.prev = vec![None];
        self.last_read = vec![0];
        self.main_pos = 0;
        Ok(self.snapshot(None))
    }

    fn max_prefix(&self) -> usize {
        if self.prefixes {
            usize::MAX
        } else {
            0
        }
    }

    fn begin_after(
        &mut self,
        steps: &mut dyn Iterator<Item = &ScriptStep>,
    ) -> Result<(Snapshot, usize), ExecError> {
        let mut snap = self.begin()?;
        let mut ran = 0;
        for step in steps {
            match step {
                ScriptStep::Run {
                    slot,
                    reply,
                    pc,
                    addr,
                } => {
                    // stopped where the step says, as the runtime checks
                    let here = snap.slots.get(*slot as usize).and_then(|v| match &v.state {
                        SlotState::Stopped(p) => Some(p),
                        SlotState::Exited | SlotState::Hung => None,
                    });
                    if !here.is_some_and(|p| {
                        p.pc == *pc && (*addr == 0 || p.op.location() == Some(*addr))
                    }) {
                        break;
                    }
                    snap = self.run(*slot, reply)?;
                }
                ScriptStep::Commit { owner, addr, bytes } => self.commit(*owner, *addr, bytes)?,
            }
            ran += 1;
            self.skipped += 1;
        }
        Ok((snap, ran))
    }

    fn step(&mut self, slot: u32, reply: &Reply) -> Result<Snapshot, ExecError> {
        self.steps += 1;
        self.run(slot, reply)
    }

    fn observed(&self) -> crate::results::Observation {
        let mut reads = self.reads.clone();
        reads.sort_unstable();
        reads
    }

    fn commit(&mut self, _owner: u32, addr: u64, bytes: &[u8]) -> Result<(), ExecError> {
        for (k, word) in bytes.chunks(4).enumerate() {
            let mut v = [0u8; 8];
            v[..word.len()].copy_from_slice(word);
            self.mem.insert(addr + 4 * k as u64, u64::from_le_bytes(v));
        }
        Ok(())
    }

    fn end(&mut self) -> Result<(), ExecError> {
        Ok(())
    }
}

impl Mock {
    /// A futex operation under the graph engine (runtime/sync.c's `futex_wait_graph`): the
    /// state after it (`None`: not one).
    fn futex_step(&mut self, i: usize, op: Op, reply: &Reply) -> Option<Snapshot> {
        let step = self.futex[i];
        match op {
            Op::FutexWait { .. } if reply.value == GRAPH_BUSY => {}
            Op::FutexWait { .. } => self.futex[i] = FutexStep::Read,
            Op::Load { addr, .. } if step == FutexStep::Read => {
                let v = self.word_seen(addr.0, 0, reply);
                let (s, pos, _) = self.slots[i];
                let expected = match s.and_then(|s| self.scripts[s].get(pos - 1)) {
                    Some(&(Op::FutexWait { expected, .. }, _)) => expected,
                    _ => 0,
                };
                self.futex[i] = FutexStep::Join(v as u32 == expected);
                self.prev[i] = Some(read_only(v));
            }
            Op::FutexJoin { waits: true, .. } => self.futex[i] = FutexStep::Woken,
            Op::FutexWoken { .. } if reply.value == GRAPH_BUSY => {}
            Op::FutexWake { .. } if reply.value == GRAPH_WAKE_BUSY => {}
            Op::FutexJoin { .. } | Op::FutexWoken { .. } | Op::FutexWake { .. } => {
                self.futex[i] = FutexStep::None;
                self.slots[i].1 += 1;
            }
            _ => return None,
        }
        Some(self.snapshot(None))
    }

    /// The `k`th 4-byte word of a load at `addr`: the engine's patch where it covers it, else
    /// memory.
    fn word_seen(&self, addr: u64, k: usize, reply: &Reply) -> u64 {
        match &reply.patch {
            Some((mask, bytes)) if mask >> (4 * k) & 0xf != 0 => {
                u32::from_le_bytes(bytes[4 * k..4 * k + 4].try_into().unwrap()) as u64
            }
            _ => self.mem.get(&(addr + 4 * k as u64)).copied().unwrap_or(0),
        }
    }

    /// What slot `i`'s load of `size` bytes at `addr` reads: each 4-byte word the engine's
    /// patch covers from it, the others from memory (observed, when reads are, for a script's
    /// thread).
    fn seen(&mut self, i: usize, addr: u64, size: u32, reply: &Reply) -> u64 {
        let mut v = 0;
        for k in 0..size.div_ceil(4) as usize {
            v |= self.word_seen(addr, k, reply) << (32 * k);
        }
        if let (true, Some(script)) = (self.observe_reads, self.slots[i].0) {
            self.reads.push((read_key(script, self.slots[i].1 - 1), v));
        }
        v
    }

    /// A store of `value`'s `size` bytes at `addr` (4-byte words): into memory unless
    /// buffered; its bytes (buffered or under the graph engine) and what it wrote over (graph).
    fn capture(
        &mut self,
        addr: u64,
        size: u32,
        value: u64,
    ) -> (Option<StoreBytes>, Option<StoreBytes>) {
        let words = size.div_ceil(4) as usize;
        let bytes = |v: u64| StoreBytes::from_slice(&v.to_le_bytes()[..4 * words]);
        let stored = (self.buffered || self.graph).then(|| bytes(value));
        let mut replaced = None;
        if !self.buffered || self.graph {
            let mut old = 0;
            for k in 0..words {
                let word = (value >> (32 * k)) & 0xffff_ffff;
                old |= self.mem.insert(addr + 4 * k as u64, word).unwrap_or(0) << (32 * k);
            }
            replaced = self.graph.then(|| bytes(old));
        }
        (stored, replaced)
    }

    /// What an operation that read `read` (if it read) and then wrote `value` reports.
    fn write(&mut self, addr: u64, size: u32, read: Option<u64>, value: u64) -> Executed {
        let (stored, replaced) = self.capture(addr, size, value);
        Executed {
            wrote: true,
            read,
            written: Some(value),
            stored,
            replaced,
        }
    }

    fn run(&mut self, slot: u32, reply: &Reply) -> Result<Snapshot, ExecError> {
        let i = slot as usize;
        let op = self.op_of(i).expect("stepped an exited slot");
        let value = match self.slots[i].0 {
            Some(s) if self.slots[i].1 >= 1 && self.slots[i].1 <= self.scripts[s].len() => {
                self.scripts[s][self.slots[i].1 - 1].1
            }
            _ => 0,
        };
        self.prev[i] = None;
        let waits = matches!(
            op,
            Op::MutexLock { .. }
                | Op::SemWait {
                    try_only: false,
                    ..
                }
        );
        if self.graph && reply.value == GRAPH_BUSY && waits {
            // the graph engine found the object taken: the runtime asks again (the same step)
            return Ok(self.snapshot(None));
        }
        if self.graph {
            if let Some(snap) = self.futex_step(i, op, reply) {
                return Ok(snap);
            }
        }
        match op {
            Op::Load { addr, size } => {
                let v = self.seen(i, addr.0, size, reply);
                self.last_read[i] = v;
                self.prev[i] = Some(read_only(v));
            }
            Op::Cas { addr, .. } => {
                let old = self.seen(i, addr.0, 4, reply);
                let expected = std::mem::replace(&mut self.last_read[i], old);
                self.prev[i] = Some(if old == expected {
                    self.write(addr.0, 4, Some(old), (old + value) & 0xffff_ffff)
                } else {
                    read_only(old)
                });
            }
            Op::Store { addr, size } => {
                // with store buffers the engine commits it later
                self.prev[i] = Some(self.write(addr.0, size, None, value));
            }
            Op::Rmw { addr, .. } => {
                // fetch-and-add of the script's value
                let old = self.seen(i, addr.0, 4, reply);
                self.prev[i] = Some(self.write(addr.0, 4, Some(old), (old + value) & 0xffff_ffff));
            }
            Op::Spawn => {
                let script = self.main_pos;
                self.slots.push((Some(script), 0, slot));
                self.waiting.push(None);
                self.futex.push(FutexStep::None);
                self.prev.push(None);
                self.last_read.push(0);
            }
            Op::FutexWait { addr, expected, .. } => {
                // the runtime compares the word; the engine queues the thread when equal
                let v = self.mem.get(&addr.0).copied().unwrap_or(0);
                if v as u32 == expected {
                    self.waiting[i] = Some(addr);
                }
                self.prev[i] = Some(read_only(v));
            }
            Op::FutexWoken { .. } => {
                self.waiting[i] = None;
                return Ok(self.snapshot(None));
            }
            Op::ProcessExit { .. } => {
                let ok = self.check.is_none_or(|c| c(&self.mem));
                let error = (!ok).then(|| RuntimeError {
                    kind: RuntimeErrorKind::Assertion,
                    pc: 0,
                    addr: 0,
                    message: "check failed".into(),
                    slot: Some(0),
                });
                return Ok(self.snapshot(Some(Ended {
                    how: ProcessEnd::Exited(0),
                    error,
                })));
            }
            _ => {}
        }
        if self.slots[i].0.is_none() {
            self.main_pos += 1;
        } else {
            self.slots[i].1 += 1;
        }
        Ok(self.snapshot(None))
    }
}

thread_local! {
    /// The steps a thread takes in a row before another that can run takes one, in the
    /// explorations of this test's thread ([`Config::fair_after`]).
    static TURNS: Cell<u32> = const { Cell::new(super::DEFAULT_FAIR_AFTER) };
}

/// The configuration of the explorations of a random test: the default, but for the turns
/// [`take_turns_after`] set on this test's thread.
pub fn test_config() -> Config {
    Config {
        fair_after: TURNS.with(Cell::get),
        ..Config::default()
    }
}

/// Threads take turns after `n` steps in this test's explorations ([`test_config`]).
pub fn take_turns_after(n: u32) {
    TURNS.with(|t| t.set(n));
}
