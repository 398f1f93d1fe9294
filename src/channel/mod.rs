//! The shared-memory channel between the supervisor and the runtime: the Rust mirror of
//! runtime/channel.h (checked against it by tests/channel_layout.rs), the memfd that holds it,
//! and validated reads of what the runtime wrote.
//!
//! Everything the runtime writes is untrusted: the program may have scribbled over it.

use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd};
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering::SeqCst};
use std::time::Duration;

use memmap2::MmapMut;

use crate::event::{FenceKind, Op, Pending, StoreBytes, TargetAddr};
use crate::site::Site;

pub const MAGIC: u64 = 0x314e4843434d53;
pub const VERSION: u32 = 19;
pub const MAX_THREADS: usize = 256;
pub const MSG_LEN: usize = 512;
pub use crate::event::MAX_ACCESS;
pub const MAX_COMMITS: usize = 512;
pub const MAX_OBSERVED: usize = 64;
pub const MAX_BLOCKS: usize = 256;
/// Shared stack and TLS ranges, each list (`Header::shared`, `Header::found`).
pub const MAX_SHARED: usize = 64;
pub const MAX_SCRIPT: usize = 2048;
pub const MAX_LOG: usize = 4096;
/// Buffered stores of all threads at once that their own threads see (runtime/pending.c).
pub const MAX_PENDING: usize = 16384;
pub const SCRIPT_COMMIT: u32 = u32::MAX;
/// The await hash of a compare-exchange by which a lock the runtime models waits for its word
/// (runtime/channel.h `SMC_HASH_LOCK_WAIT`): a thread left waiting so is deadlocked, not
/// spinning.
pub const LOCK_WAIT_HASH: u64 = 0x6c6f_636b_7761_6974;
/// The owner of a commit that is no thread's buffered store (the graph engine's writes stay in
/// memory; at the end it writes each location's latest).
pub const NO_OWNER: u32 = u32::MAX;

pub mod op {
    pub const LOAD: u32 = 1;
    pub const STORE: u32 = 2;
    pub const RMW: u32 = 3;
    pub const CAS: u32 = 4;
    pub const RMW_LOAD: u32 = 5;
    pub const RMW_STORE: u32 = 6;
    pub const FENCE: u32 = 7;
    pub const THREAD_START: u32 = 10;
    pub const THREAD_EXIT: u32 = 11;
    pub const SPAWN: u32 = 12;
    pub const JOIN: u32 = 13;
    pub const PROCESS_EXIT: u32 = 14;
    pub const MUTEX_LOCK: u32 = 20;
    pub const MUTEX_TRYLOCK: u32 = 21;
    pub const MUTEX_UNLOCK: u32 = 22;
    pub const COND_WAIT: u32 = 23;
    pub const COND_REACQUIRE: u32 = 24;
    pub const COND_SIGNAL: u32 = 25;
    pub const COND_BROADCAST: u32 = 26;
    pub const RW_RDLOCK: u32 = 27;
    pub const RW_WRLOCK: u32 = 28;
    pub const RW_UNLOCK: u32 = 29;
    pub const BARRIER_INIT: u32 = 30;
    pub const BARRIER_WAIT: u32 = 31;
    pub const BARRIER_LEAVE: u32 = 32;
    pub const SEM_INIT: u32 = 33;
    pub const SEM_WAIT: u32 = 34;
    pub const SEM_POST: u32 = 35;
    pub const YIELD: u32 = 40;
    pub const ASSUME: u32 = 41;
    pub const ATOMIC_BEGIN: u32 = 42;
    pub const ATOMIC_END: u32 = 43;
    pub const NONDET: u32 = 44;
    pub const FUTEX_WAIT: u32 = 45;
    pub const FUTEX_WOKEN: u32 = 46;
    pub const FUTEX_WAKE: u32 = 47;
    pub const HEAP_RELEASE: u32 = 48;
    pub const FUTEX_JOIN: u32 = 49;
    /// `NONDET`'s arg: the type is signed, or `_Bool`.
    pub const NONDET_SIGNED: u64 = 1;
    pub const NONDET_BOOL: u64 = 2;
    /// `arg` of a compare-exchange whose operands the runtime reports: `addr2` what it
    /// compares with, `arg2` what it writes.
    pub const CAS_OPERANDS: u64 = 1;
    /// `arg` of a store-conditional's stop: `arg2` what it stores if it writes.
    pub const SC_STORES: u64 = 2;
}

pub mod slot_state {
    pub const FREE: u32 = 0;
    pub const RUNNING: u32 = 1;
    pub const STOPPED: u32 = 2;
    pub const EXITED: u32 = 3;
    /// Set aside after a hang (coroutines): never resumed in this execution.
    pub const HUNG: u32 = 4;
}

/// `Header::coroutines`: how executions run in the program's process.
pub mod coroutines {
    pub const OFF: u32 = 0;
    pub const ON: u32 = 1;
    pub const FAILED: u32 = 2;
}

/// The reply to a store-conditional (POWER's `stwcx.`, a compare-exchange at a reserve site):
/// 0 lets the runtime decide by value (memory still holds what the load-reserve read); the
/// graph engine under a model with herd's reservations says which outcome it explores.
pub mod store_conditional {
    pub const BY_VALUE: u64 = 0;
    pub const FAIL: u64 = 1;
    pub const WRITE: u64 = 2;
}

pub const PREV_WROTE: u32 = 1;
pub const PREV_VALID: u32 = 2;
pub const PREV_READ: u32 = 4;
pub const PREV_STORED: u32 = 8;
/// Under [`FLAG_GRAPH`] the store stayed in memory; `replaced` holds what it wrote over.
pub const PREV_REPLACED: u32 = 16;
pub const FLAG_FENCES_VISIBLE: u32 = 1;
pub const FLAG_BUFFERED: u32 = 2;
pub const FLAG_DEBUGGABLE: u32 = 4;
pub const FLAG_CAPTURED: u32 = 8;
pub const FLAG_SSE_ONLY: u32 = 16;
/// Some stack or TLS memory is shared (`Header::shared`): private sites are patched too.
pub const FLAG_SHARED_STACKS: u32 = 32;
/// Every access to a thread's own stack or TLS is visible (private sites patched too).
pub const FLAG_ALL_STACKS: u32 = 64;
/// The graph engine chooses what every access reads: a locked instruction or compare-exchange
/// sees the patch too, and its write is undone and captured as a buffered store's.
pub const FLAG_GRAPH: u32 = 128;
/// The model has store buffers (TSO, PSO): a call whose C library code is a full fence where
/// the engines would not see one (a spin lock's try, `sched_yield`) reports one first.
pub const FLAG_STORE_BUFFERS: u32 = 256;

pub mod err {
    pub const NONE: u32 = 0;
    pub const ASSERT: u32 = 1;
    pub const SIGNAL: u32 = 2;
    pub const VERIFIER: u32 = 3;
    pub const UNSUPPORTED: u32 = 4;
    pub const RUNTIME: u32 = 5;
    pub const CALL: u32 = 6;
    pub const LIMIT: u32 = 7;
    pub const PANIC: u32 = 8;
}

pub mod init {
    pub const NONE: u32 = 0;
    pub const MAPPED: u32 = 1;
    pub const CODE: u32 = 2;
    pub const READY: u32 = 3;
    pub const FAILED: u32 = 4;
}

/// Set in both ends of a `Span` relative to the runtime's slot stack area (its address moves
/// with the channel's size); `SMC_SPAN_IN_STACK_AREA` in channel.h.
pub const SPAN_IN_STACK_AREA: u64 = 1 << 63;

/// A range of addresses [lo, hi).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Span {
    pub lo: u64,
    pub hi: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Block {
    pub addr: u64,
    pub size: u64,
    pub pc: u64,
}

#[repr(C)]
pub struct Slot {
    pub go: u32,
    pub state: u32,
    pub parent: u32,
    pub op: u32,
    pub addr: u64,
    pub addr2: u64,
    pub size: u64,
    pub arg: u64,
    /// A second operand: a compare-exchange's value to write (with [`op::CAS_OPERANDS`]).
    pub arg2: u64,
    pub pc: u64,
    pub hash: u64,
    pub reply: u64,
    pub prev_read: u64,
    pub prev_written: u64,
    pub prev_flags: u32,
    pub site: u32,
    pub patch_mask: u64,
    pub stored_size: u32,
    /// Loads of the thread so far that were no event (they fell on its own memory).
    pub skipped: u32,
    /// Its buffered stores in [`Header::pending`], oldest first (index + 1; 0: none).
    pub pending_head: u32,
    pub pending_tail: u32,
    pub patch: [u8; MAX_ACCESS],
    pub stored: [u8; MAX_ACCESS],
    pub replaced: [u8; MAX_ACCESS],
}

#[repr(C)]
pub struct Commit {
    pub addr: u64,
    pub size: u32,
    /// The slot whose store it is.
    pub owner: u32,
    pub bytes: [u8; MAX_ACCESS],
}

#[repr(C)]
pub struct ScriptStep {
    pub slot: u32,
    pub size: u32,
    pub reply: u64,
    pub patch_mask: u64,
    pub addr: u64,
    pub expect_pc: u64,
    pub expect_addr: u64,
    /// Commit: the slot whose store it is.
    pub owner: u32,
    pub pad: u32,
    pub bytes: [u8; MAX_ACCESS],
}

/// A buffered store as its own thread sees it (runtime/pending.c).
#[repr(C)]
pub struct PendingStore {
    pub addr: u64,
    pub size: u32,
    pub pad: u32,
    pub prev: u32,
    pub next: u32,
    pub bytes: [u8; MAX_ACCESS],
    pub saved: [u8; MAX_ACCESS],
}

#[repr(C)]
pub struct LogEntry {
    pub epoch: u32,
    pub slot: u32,
    pub copy: Slot,
}

#[repr(C)]
pub struct Header {
    pub magic: u64,
    pub version: u32,
    pub max_threads: u32,
    pub total_size: u64,
    pub nsites: u32,
    pub flags: u32,
    pub sites_off: u64,
    pub code_off: u64,
    pub code_cap: u64,
    pub init_state: u32,
    pub explore_cmd: u32,
    pub load_bias: u64,
    pub tramp_addr: u64,
    pub self_addr: u64,
    pub fs_cmd: u32,
    pub fs_quit: u32,
    pub child_pid: i32,
    pub wait_status: i32,
    pub exec_done: u32,
    pub abort: u32,
    pub coroutines: u32,
    pub rt_wake: u32,
    pub worker_cmd: u32,
    pub worker_last: u32,
    pub sup_sleeping: u32,
    pub rt_sleeping: u32,
    pub sup_futex: u32,
    pub running: u32,
    pub nthreads: u32,
    pub ncommits: u32,
    pub err_kind: u32,
    pub err_signal: u32,
    pub err_slot: u32,
    /// Engine in the worker: the step it runs now hung before; the runtime sets its thread
    /// aside after this many microseconds.
    pub hang_soon_us: u32,
    pub err_pc: u64,
    pub err_addr: u64,
    pub err_msg: [u8; MSG_LEN],
    pub observed_mask: u64,
    pub observed: [u64; MAX_OBSERVED],
    pub nblocks: u32,
    pub pad3: u32,
    pub blocks: [Block; MAX_BLOCKS],
    pub nshared: u32,
    pub nfound: u32,
    pub shared: [Span; MAX_SHARED],
    pub found: [Span; MAX_SHARED],
    pub slots: [Slot; MAX_THREADS],
    pub commits: [Commit; MAX_COMMITS],
    pub out_len: u64,
    pub script_len: u32,
    pub script_done: u32,
    pub log_len: u32,
    pub log_threads: u32,
    pub script_logged: u32,
    pub pad4: u32,
    pub script: [ScriptStep; MAX_SCRIPT],
    pub log: [LogEntry; MAX_LOG],
    pub pending_top: u32,
    pub pending_free: u32,
    pub pending: [PendingStore; MAX_PENDING],
}

/// The mapped channel. All access to shared words goes through atomics.
pub struct Channel {
    map: Mapping,
    file: Option<File>,
}

/// The supervisor's own mapping of the memfd, or (in the worker, where the engine runs inside
/// the program's process) the runtime's.
enum Mapping {
    Owned(MmapMut),
    Borrowed(&'static mut [u8]),
}

impl std::ops::Deref for Mapping {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Mapping::Owned(m) => m,
            Mapping::Borrowed(m) => m,
        }
    }
}

impl std::ops::DerefMut for Mapping {
    fn deref_mut(&mut self) -> &mut [u8] {
        match self {
            Mapping::Owned(m) => m,
            Mapping::Borrowed(m) => m,
        }
    }
}

macro_rules! atomic32 {
    ($name:ident, $field:ident) => {
        pub fn $name(&self) -> &AtomicU32 {
            // SAFETY: the field is a 4-aligned u32 inside the live mapping.
            unsafe { AtomicU32::from_ptr(std::ptr::addr_of_mut!((*self.header_ptr()).$field)) }
        }
    };
}

impl Channel {
    /// A new channel holding `sites` and room for `code_cap` bytes of relocated copies.
    /// A new channel for a program with `sites`, whose threads' accesses to `shared` stack or
    /// TLS memory are visible (at most `MAX_SHARED` ranges).
    pub fn create(
        sites: &[Site],
        code_cap: usize,
        flags: u32,
        shared: &[(u64, u64)],
    ) -> std::io::Result<Channel> {
        let file = memfd(c"smc-run-channel", libc::MFD_CLOEXEC)?;
        let sites_off = std::mem::size_of::<Header>().next_multiple_of(64);
        let code_off = (sites_off + std::mem::size_of_val(sites)).next_multiple_of(64);
        let total = (code_off + code_cap).next_multiple_of(4096);
        file.set_len(total as u64)?;
        // SAFETY: the memfd is ours; the runtime maps it too, which is the point of it.
        let mut map = unsafe { MmapMut::map_mut(&file)? };
        // SAFETY: sites is plain repr(C) data; the destination range was sized for it.
        unsafe {
            std::ptr::copy_nonoverlapping(
                sites.as_ptr() as *const u8,
                map.as_mut_ptr().add(sites_off),
                std::mem::size_of_val(sites),
            );
        }
        let ch = Channel {
            map: Mapping::Owned(map),
            file: Some(file),
        };
        let h = ch.header_ptr();
        // SAFETY: the mapping is at least a header long and nobody else has it yet.
        unsafe {
            (*h).magic = MAGIC;
            (*h).version = VERSION;
            (*h).max_threads = MAX_THREADS as u32;
            (*h).total_size = total as u64;
            (*h).nsites = sites.len() as u32;
            (*h).flags = flags;
            (*h).sites_off = sites_off as u64;
            (*h).code_off = code_off as u64;
            (*h).code_cap = code_cap as u64;
            let n = shared.len().min(MAX_SHARED);
            for (i, &(lo, hi)) in shared[..n].iter().enumerate() {
                (*h).shared[i] = Span { lo, hi };
            }
            (*h).nshared = n as u32;
            if n > 0 {
                (*h).flags |= FLAG_SHARED_STACKS;
            }
        }
        Ok(ch)
    }

    /// Ranges of one thread's accesses to another's stack or TLS outside the shared ones, as
    /// the runtime found them since the program started (validated: a range the runtime did
    /// not write sensibly is left out).
    pub fn found_shared(&self) -> Vec<(u64, u64)> {
        let h = self.header_ptr();
        let n = self.nfound().load(SeqCst) as usize;
        // SAFETY: the header is mapped; the runtime writes an entry before it publishes the
        // count that includes it.
        unsafe {
            (0..n.min(MAX_SHARED))
                .map(|i| std::ptr::read_volatile(std::ptr::addr_of!((*h).found[i])))
                .filter(|r| r.lo < r.hi && r.hi - r.lo <= 1 << 20)
                .map(|r| (r.lo, r.hi))
                .collect()
        }
    }

    /// Whether the fixed part of the header still says what the supervisor wrote there.
    pub fn intact(&self) -> bool {
        let h = self.header();
        h.magic == MAGIC
            && h.version == VERSION
            && h.max_threads == MAX_THREADS as u32
            && h.total_size == self.map.len() as u64
    }

    /// The whole mapping as the program sees it: any byte of it may be overwritten there, so
    /// tests overwrite it here.
    pub fn raw_mut(&mut self) -> &mut [u8] {
        &mut self.map
    }

    pub fn fd(&self) -> i32 {
        self.file.as_ref().map_or(-1, |f| f.as_raw_fd())
    }

    /// The channel as the runtime mapped it in this process (the engine inside the worker).
    ///
    /// # Safety
    /// `base` must be the runtime's live mapping of the channel, `len` bytes long, for the rest
    /// of the process.
    pub unsafe fn borrowed(base: *mut u8, len: usize) -> Channel {
        Channel {
            map: Mapping::Borrowed(std::slice::from_raw_parts_mut(base, len)),
            file: None,
        }
    }

    fn header_ptr(&self) -> *mut Header {
        self.map.as_ptr() as *mut Header
    }

    atomic32!(nfound, nfound);
    atomic32!(init_state, init_state);
    atomic32!(explore_cmd, explore_cmd);
    atomic32!(fs_cmd, fs_cmd);
    atomic32!(fs_quit, fs_quit);
    atomic32!(exec_done, exec_done);
    atomic32!(abort, abort);
    atomic32!(coroutines, coroutines);
    atomic32!(rt_wake, rt_wake);
    atomic32!(sup_sleeping, sup_sleeping);
    atomic32!(rt_sleeping, rt_sleeping);
    atomic32!(sup_futex, sup_futex);
    atomic32!(running, running);
    atomic32!(script_len, script_len);
    atomic32!(nthreads, nthreads);
    atomic32!(err_kind, err_kind);
    atomic32!(ncommits, ncommits);
    atomic32!(hang_soon_us, hang_soon_us);

    pub fn child_pid(&self) -> i32 {
        // SAFETY: aligned i32 inside the mapping.
        unsafe { AtomicI32::from_ptr(std::ptr::addr_of_mut!((*self.header_ptr()).child_pid)) }
            .load(SeqCst)
    }

    pub fn wait_status(&self) -> i32 {
        // SAFETY: aligned i32 inside the mapping.
        unsafe { AtomicI32::from_ptr(std::ptr::addr_of_mut!((*self.header_ptr()).wait_status)) }
            .load(SeqCst)
    }

    /// Read a plain (non-futex) header field.
    pub fn header(&self) -> &Header {
        // SAFETY: the mapping outlives the borrow; concurrent writes only race on plain data
        // that is re-validated by every reader.
        unsafe { &*self.header_ptr() }
    }

    pub fn code_area(&mut self) -> &mut [u8] {
        let h = self.header();
        let (off, cap) = (h.code_off as usize, h.code_cap as usize);
        // untrusted like the rest: an area that does not fit is no area
        let end = off.checked_add(cap).filter(|&e| e <= self.map.len());
        match end {
            Some(end) => &mut self.map[off..end],
            None => &mut [],
        }
    }

    fn slot_ptr(&self, i: usize) -> *mut Slot {
        // SAFETY: i < MAX_THREADS is checked by callers; the slots are inside the header.
        unsafe { std::ptr::addr_of_mut!((*self.header_ptr()).slots[i]) }
    }

    pub fn slot_go(&self, i: usize) -> &AtomicU32 {
        // SAFETY: aligned u32 inside the mapping.
        unsafe { AtomicU32::from_ptr(std::ptr::addr_of_mut!((*self.slot_ptr(i)).go)) }
    }

    pub fn slot_state(&self, i: usize) -> &AtomicU32 {
        // SAFETY: aligned u32 inside the mapping.
        unsafe { AtomicU32::from_ptr(std::ptr::addr_of_mut!((*self.slot_ptr(i)).state)) }
    }

    pub fn slot(&self, i: usize) -> &Slot {
        // SAFETY: inside the mapping; fields are re-validated when decoded.
        unsafe { &*self.slot_ptr(i) }
    }

    /// The reply for slot `i`, and the bytes its load must see over memory (mask bit n = byte n).
    pub fn set_reply(&self, i: usize, reply: u64, patch: Option<&(u64, [u8; MAX_ACCESS])>) {
        // SAFETY: plain stores the runtime reads after it sees `go`.
        unsafe {
            let s = self.slot_ptr(i);
            std::ptr::write_volatile(std::ptr::addr_of_mut!((*s).reply), reply);
            match patch {
                Some((mask, bytes)) => {
                    (*s).patch = *bytes;
                    std::ptr::write_volatile(std::ptr::addr_of_mut!((*s).patch_mask), *mask);
                }
                None => std::ptr::write_volatile(std::ptr::addr_of_mut!((*s).patch_mask), 0),
            }
        }
    }

    /// Give the runtime the first steps of the next execution (at most MAX_SCRIPT of them);
    /// `logged`: it logs the state before each step, for the engine to read back.
    /// Returns how many steps it was given.
    pub fn set_script<'a>(
        &self,
        steps: impl IntoIterator<Item = &'a crate::event::ScriptStep>,
        logged: bool,
    ) -> usize {
        use crate::event::ScriptStep as S;
        let mut n = 0;
        // SAFETY: no process of an execution exists while the supervisor writes the script.
        unsafe {
            let h = self.header_ptr();
            for (k, step) in steps.into_iter().take(MAX_SCRIPT).enumerate() {
                n = k + 1;
                let w = std::ptr::addr_of_mut!((*h).script[k]);
                match step {
                    S::Run {
                        slot,
                        reply,
                        pc,
                        addr,
                    } => {
                        (*w).slot = *slot;
                        (*w).expect_pc = *pc;
                        (*w).expect_addr = *addr;
                        (*w).reply = reply.value;
                        // the runtime reads the bytes only under a mask
                        match &reply.patch {
                            Some((mask, bytes)) => {
                                (*w).patch_mask = *mask;
                                (*w).bytes = *bytes;
                            }
                            None => (*w).patch_mask = 0,
                        }
                    }
                    S::Commit { owner, addr, bytes } => {
                        (*w).slot = SCRIPT_COMMIT;
                        (*w).owner = *owner;
                        (*w).addr = *addr;
                        let len = bytes.len().min(MAX_ACCESS);
                        (*w).size = len as u32;
                        let mut b = [0; MAX_ACCESS];
                        b[..len].copy_from_slice(&bytes[..len]);
                        (*w).bytes = b;
                    }
                }
            }
            (*h).script_done = 0;
            (*h).log_len = 0;
            (*h).log_threads = 0;
            (*h).script_logged = logged as u32;
            (*h).script_len = n as u32;
        }
        n
    }

    /// Whether the runtime is still running a script (it sets script_len to 0 when done).
    pub fn scripting(&self) -> bool {
        self.script_len().load(SeqCst) != 0
    }

    /// Steps of the script the runtime ran (at most `len`), and entries it logged.
    pub fn script_progress(&self, len: usize) -> (usize, usize) {
        let h = self.header();
        (
            (h.script_done as usize).min(len).min(MAX_SCRIPT),
            (h.log_len as usize).min(MAX_LOG),
        )
    }

    /// Log entry `k` (< MAX_LOG): the epoch, the slot, the slot's copy.
    pub fn log_entry(&self, k: usize) -> (u32, u32, &Slot) {
        let e = &self.header().log[k];
        (e.epoch, e.slot, &e.copy)
    }

    /// A private channel of the same size, to hold states read back from the log.
    pub fn scratch(&self) -> std::io::Result<Channel> {
        let file = memfd(c"smc-run-scratch", libc::MFD_CLOEXEC)?;
        file.set_len(self.map.len() as u64)?;
        // SAFETY: the memfd is ours alone.
        let map = unsafe { MmapMut::map_mut(&file)? };
        let ch = Channel {
            map: Mapping::Owned(map),
            file: Some(file),
        };
        let (from, to) = (self.header(), ch.header_ptr());
        // SAFETY: the fresh mapping is a header long and ours alone.
        unsafe {
            (*to).magic = from.magic;
            (*to).version = from.version;
            (*to).max_threads = from.max_threads;
            (*to).total_size = from.total_size;
        }
        Ok(ch)
    }

    /// Scratch channels: put `copy` in slot `i` (< MAX_THREADS), and the thread count.
    pub fn put_slot(&self, i: usize, copy: &Slot) {
        // SAFETY: a scratch channel is private; Slot is plain data.
        unsafe { std::ptr::copy_nonoverlapping(copy, self.slot_ptr(i), 1) };
    }

    /// Queue a buffered store's bytes (a store of slot `owner`) to reach memory before the next
    /// thread runs. False when the queue is full.
    pub fn push_commit(&self, owner: u32, addr: u64, bytes: &[u8]) -> bool {
        let n = self.ncommits().load(SeqCst) as usize;
        if n >= MAX_COMMITS || bytes.len() > MAX_ACCESS {
            return false;
        }
        // SAFETY: no thread of the program runs while the supervisor queues; entry n is unused.
        unsafe {
            let c = std::ptr::addr_of_mut!((*self.header_ptr()).commits[n]);
            (*c).addr = addr;
            (*c).size = bytes.len() as u32;
            (*c).owner = owner;
            (&mut (*c).bytes)[..bytes.len()].copy_from_slice(bytes);
        }
        self.ncommits().store(n as u32 + 1, SeqCst);
        true
    }

    /// A store of slot `owner` at `addr` that the engine wrote into memory itself leaves the
    /// stores its thread sees (runtime/pending.c `smc_commit`, the same rule: the
    /// owner's oldest at that address). Only while no thread of the program runs.
    pub fn retire_pending(&self, owner: u32, addr: u64) {
        let owner = owner as usize;
        if owner >= MAX_THREADS {
            return;
        }
        // SAFETY: no thread of the program runs; indices are checked (the runtime wrote them).
        unsafe {
            let h = self.header_ptr();
            let s = self.slot_ptr(owner);
            let valid = |i: u32| (1..=MAX_PENDING).contains(&(i as usize));
            let mut i = (*s).pending_head;
            for _ in 0..MAX_PENDING {
                if !valid(i) {
                    return;
                }
                let p = std::ptr::addr_of_mut!((*h).pending[i as usize - 1]);
                if (*p).addr != addr {
                    i = (*p).next;
                    continue;
                }
                let (prev, next) = ((*p).prev, (*p).next);
                if valid(prev) {
                    (*h).pending[prev as usize - 1].next = next;
                } else {
                    (*s).pending_head = next;
                }
                if valid(next) {
                    (*h).pending[next as usize - 1].prev = prev;
                } else {
                    (*s).pending_tail = prev;
                }
                (*p).next = (*h).pending_free;
                (*h).pending_free = i;
                return;
            }
        }
    }

    /// Empty the commit queue, returning what it held in order: (owner, address, bytes).
    pub fn take_commits(&self) -> Vec<(u32, u64, Vec<u8>)> {
        let n = (self.ncommits().load(SeqCst) as usize).min(MAX_COMMITS);
        let h = self.header();
        let out = h.commits[..n]
            .iter()
            .map(|c| {
                (
                    c.owner,
                    c.addr,
                    c.bytes[..(c.size as usize).min(MAX_ACCESS)].to_vec(),
                )
            })
            .collect();
        self.ncommits().store(0, SeqCst);
        out
    }

    /// The bytes the slot's last buffered store wrote (untrusted size, clamped).
    pub fn stored(&self, i: usize) -> StoreBytes {
        let s = self.slot(i);
        store_bytes(&s.stored, s.stored_size)
    }

    /// The bytes the slot's last store wrote over ([`PREV_REPLACED`]).
    pub fn replaced(&self, i: usize) -> StoreBytes {
        let s = self.slot(i);
        store_bytes(&s.replaced, s.stored_size)
    }

    /// The values the execution recorded with `__smc_observe`, by index.
    pub fn observed(&self) -> Vec<(u32, u64)> {
        let h = self.header();
        // SAFETY: the mask is an aligned u64 of the live mapping; read atomically because the
        // runtime sets its bits with an atomic or.
        let mask = unsafe {
            std::sync::atomic::AtomicU64::from_ptr(std::ptr::addr_of_mut!(
                (*self.header_ptr()).observed_mask
            ))
        }
        .load(SeqCst);
        // the set bits only: asked after every execution, and most programs observe nothing
        let mut rest = mask;
        let mut seen = Vec::new();
        while rest != 0 {
            let i = rest.trailing_zeros() as usize;
            if let Some(&v) = h.observed.get(i) {
                seen.push((i as u32, v));
            }
            rest &= rest - 1;
        }
        seen
    }

    /// The heap blocks the execution allocated, in order: (address, size, call site).
    pub fn heap_blocks(&self) -> Vec<(u64, u64, u64)> {
        let h = self.header();
        let n = (h.nblocks as usize).min(MAX_BLOCKS);
        h.blocks[..n]
            .iter()
            .map(|b| (b.addr, b.size, b.pc))
            .collect()
    }

    /// Clear the per-execution part before the fork server starts an execution.
    pub fn reset_execution(&self) {
        // SAFETY: no process of the execution exists now; the fork server only reads fs_cmd.
        unsafe {
            let h = self.header_ptr();
            (*h).err_signal = 0;
            (*h).err_slot = 0;
            (*h).err_pc = 0;
            (*h).err_addr = 0;
            (*h).err_msg[0] = 0;
            (*h).observed_mask = 0;
            (*h).nblocks = 0;
            (*h).child_pid = 0;
            (*h).wait_status = 0;
            let n = (*h).nthreads.min(MAX_THREADS as u32) as usize;
            // each used slot but its byte arrays, read only under a mask and a size zeroed here
            // (a fixed size: stores, not a call to memset per execution)
            for i in 0..n.max(1) {
                std::ptr::write_bytes(
                    self.slot_ptr(i).cast::<u8>(),
                    0,
                    std::mem::offset_of!(Slot, patch),
                );
            }
        }
        // SAFETY: as above.
        unsafe {
            let h = self.header_ptr();
            (*h).pending_top = 0;
            (*h).pending_free = 0;
        }
        self.err_kind().store(err::NONE, SeqCst);
        self.ncommits().store(0, SeqCst);
        self.exec_done().store(0, SeqCst);
        self.abort().store(0, SeqCst);
        self.slot_state(0).store(slot_state::RUNNING, SeqCst);
        self.nthreads().store(1, SeqCst);
        self.running().store(1, SeqCst);
    }

    /// Decode the pending operation of a stopped slot; None if the runtime wrote nonsense.
    #[inline] // built in place in the snapshot read after every step (copies stalled there)
    pub fn pending(&self, i: usize) -> Option<Pending> {
        let s = self.slot(i);
        let addr = TargetAddr(s.addr);
        let size = u32::try_from(s.size).ok().filter(|&n| n <= 64)?;
        let obj = addr;
        let op = match s.op {
            op::LOAD => Op::Load { addr, size },
            op::STORE => Op::Store { addr, size },
            op::RMW => Op::Rmw { addr, size },
            op::CAS => Op::Cas { addr, size },
            op::RMW_LOAD => Op::RmwLoad { addr, size },
            op::RMW_STORE => Op::RmwStore { addr, size },
            op::FENCE => Op::Fence {
                kind: FenceKind::from_code(s.arg).ok_or(()).ok()?,
            },
            op::THREAD_START => Op::ThreadStart,
            op::THREAD_EXIT => Op::ThreadExit,
            op::SPAWN => Op::Spawn,
            op::JOIN => Op::Join {
                slot: u32::try_from(s.arg)
                    .ok()
                    .filter(|&n| (n as usize) < MAX_THREADS)?,
            },
            op::PROCESS_EXIT => Op::ProcessExit {
                status: s.arg as i32,
                handlers: s.addr2 != 0,
            },
            op::MUTEX_LOCK => Op::MutexLock { obj },
            op::MUTEX_TRYLOCK => Op::MutexTryLock { obj },
            op::MUTEX_UNLOCK => Op::MutexUnlock { obj },
            op::COND_WAIT => Op::CondWait {
                cond: obj,
                mutex: TargetAddr(s.addr2),
                timed: s.arg != 0,
            },
            op::COND_REACQUIRE => Op::CondReacquire {
                cond: obj,
                mutex: TargetAddr(s.addr2),
                timed: s.arg != 0,
            },
            op::COND_SIGNAL => Op::CondSignal { cond: obj },
            op::COND_BROADCAST => Op::CondBroadcast { cond: obj },
            op::RW_RDLOCK => Op::RwRdLock {
                obj,
                try_only: s.arg != 0,
            },
            op::RW_WRLOCK => Op::RwWrLock {
                obj,
                try_only: s.arg != 0,
            },
            op::RW_UNLOCK => Op::RwUnlock { obj },
            op::BARRIER_INIT => Op::BarrierInit {
                obj,
                count: s.arg as u32,
            },
            op::BARRIER_WAIT => Op::BarrierWait { obj },
            op::BARRIER_LEAVE => Op::BarrierLeave { obj },
            op::SEM_INIT => Op::SemInit {
                obj,
                value: s.arg as u32,
            },
            op::SEM_WAIT => Op::SemWait {
                obj,
                try_only: s.arg != 0,
            },
            op::SEM_POST => Op::SemPost { obj },
            op::YIELD => Op::Yield,
            op::ASSUME => Op::Assume { cond: s.arg != 0 },
            op::ATOMIC_BEGIN => Op::AtomicBegin,
            op::ATOMIC_END => Op::AtomicEnd,
            op::FUTEX_WAIT => Op::FutexWait {
                addr: obj,
                expected: s.arg as u32,
                timed: s.addr2 != 0,
            },
            op::FUTEX_WOKEN => Op::FutexWoken {
                addr: obj,
                timed: s.addr2 != 0,
            },
            op::HEAP_RELEASE => Op::HeapRelease { addr, len: s.arg },
            op::FUTEX_JOIN => Op::FutexJoin {
                addr: obj,
                waits: s.arg != 0,
            },
            op::FUTEX_WAKE => Op::FutexWake {
                addr: obj,
                count: s.arg.min(u32::MAX as u64) as u32,
            },
            op::NONDET if matches!(s.size, 1 | 2 | 4 | 8) => Op::Nondet {
                size: s.size as u8,
                signed: s.arg & op::NONDET_SIGNED != 0,
                boolean: s.arg & op::NONDET_BOOL != 0,
            },
            _ => return None,
        };
        Some(Pending {
            op,
            pc: s.pc,
            hash: s.hash,
            site: s.site,
            skipped: s.skipped,
            cas: (s.op == op::CAS && s.arg & op::CAS_OPERANDS != 0 && size <= 8).then_some(
                crate::event::CasOperands {
                    expected: s.addr2,
                    desired: s.arg2,
                },
            ),
            stores: (s.op == op::CAS && s.arg & op::SC_STORES != 0 && size <= 8).then_some(s.arg2),
        })
    }

    /// The runtime's error message (NUL-terminated, untrusted bytes).
    pub fn err_msg(&self) -> String {
        let m = &self.header().err_msg;
        let end = m.iter().position(|&b| b == 0).unwrap_or(MSG_LEN);
        String::from_utf8_lossy(&m[..end]).into_owned()
    }
}

/// A new memfd. Callers pass MFD_CLOEXEC: programs started by other threads of the checker
/// (`litmus -j`) must not inherit it; a child that needs one clears the flag itself.
pub fn memfd(name: &std::ffi::CStr, flags: libc::c_uint) -> std::io::Result<File> {
    // SAFETY: plain syscall; the fd is owned by the File below.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), flags) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh, owned descriptor.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// Wait on a futex word while it holds `val`, at most `timeout`.
pub fn futex_wait(word: &AtomicU32, val: u32, timeout: Duration) {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: the word lives in a shared mapping; FUTEX_WAIT only reads it.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            val,
            &ts as *const libc::timespec,
            0usize,
            0u32,
        );
    }
}

pub fn futex_wake(word: &AtomicU32) {
    // SAFETY: as above.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE,
            i32::MAX,
            0usize,
            0usize,
            0u32,
        );
    }
}

/// The first `size` bytes of `buf` (an untrusted size, clamped).
fn store_bytes(buf: &[u8; MAX_ACCESS], size: u32) -> StoreBytes {
    let n = (size as usize).min(MAX_ACCESS);
    let mut first = [0; 16];
    first.copy_from_slice(&buf[..16]);
    // the usual sizes by a fixed-size copy (no call to memcpy per store)
    match n {
        0..=16 => StoreBytes::from_buf_and_len(first, n),
        _ => StoreBytes::from_slice(&buf[..n]),
    }
}
