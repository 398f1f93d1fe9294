//! The vocabulary every part speaks: thread ids, target addresses, operations and events.

use std::fmt;

/// A thread's identity in the spawn tree, stable across executions (0 is main). Dense: the
/// engine interns (parent, n-th child) pairs, so ids index vectors.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct ThreadId(pub u32);

impl ThreadId {
    pub const MAIN: ThreadId = ThreadId(0);
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for ThreadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "T{}", self.0)
    }
}

/// An address in the program under test, never dereferenced by the checker.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct TargetAddr(pub u64);

impl fmt::Display for TargetAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

/// Widest access whose bytes can be buffered or substituted (AVX-512).
pub const MAX_ACCESS: usize = 64;

/// The bytes of one buffered store: inline up to 16 (every scalar and SSE store), so that a
/// store, its buffer entry and the checkpoints that copy it allocate nothing.
pub type StoreBytes = smallvec::SmallVec<[u8; 16]>;

/// A visible operation, as announced by a thread before it runs it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Op {
    Load {
        addr: TargetAddr,
        size: u32,
    },
    Store {
        addr: TargetAddr,
        size: u32,
    },
    /// Atomic read-modify-write (lock prefix, xchg).
    Rmw {
        addr: TargetAddr,
        size: u32,
    },
    /// Atomic compare-exchange: writes only when it succeeds.
    Cas {
        addr: TargetAddr,
        size: u32,
    },
    /// The two halves of a non-atomic read-modify-write (`add [m], 1`).
    RmwLoad {
        addr: TargetAddr,
        size: u32,
    },
    RmwStore {
        addr: TargetAddr,
        size: u32,
    },
    Fence {
        kind: FenceKind,
    },
    /// `free` or `realloc` of the heap block of `len` bytes at `addr`: the library writes the
    /// block (or copies it), so it conflicts with every access to the block, and under TSO
    /// and PSO the thread's own stores into it reach memory first, as they would before the
    /// library's own writes.
    HeapRelease {
        addr: TargetAddr,
        len: u64,
    },
    /// A buffered store of thread `owner` reaching memory (an event of its buffer, TSO/PSO).
    Update {
        addr: TargetAddr,
        size: u32,
        owner: ThreadId,
    },
    ThreadStart,
    ThreadExit,
    Spawn,
    /// Join the thread running in this slot of the execution.
    Join {
        slot: u32,
    },
    /// `exit()` or a return from main. With no exit handler registered in the execution it
    /// waits until every other thread has finished or is blocked (`Op::exits_last`).
    ProcessExit {
        status: i32,
        /// Exit handlers registered in the execution will run (they may touch what other
        /// threads use): the exit then may come anywhere among the other threads' events.
        handlers: bool,
    },
    MutexLock {
        obj: TargetAddr,
    },
    MutexTryLock {
        obj: TargetAddr,
    },
    MutexUnlock {
        obj: TargetAddr,
    },
    CondWait {
        cond: TargetAddr,
        mutex: TargetAddr,
        timed: bool,
    },
    CondReacquire {
        cond: TargetAddr,
        mutex: TargetAddr,
        timed: bool,
    },
    CondSignal {
        cond: TargetAddr,
    },
    CondBroadcast {
        cond: TargetAddr,
    },
    RwRdLock {
        obj: TargetAddr,
        try_only: bool,
    },
    RwWrLock {
        obj: TargetAddr,
        try_only: bool,
    },
    RwUnlock {
        obj: TargetAddr,
    },
    BarrierInit {
        obj: TargetAddr,
        count: u32,
    },
    BarrierWait {
        obj: TargetAddr,
    },
    BarrierLeave {
        obj: TargetAddr,
    },
    SemInit {
        obj: TargetAddr,
        value: u32,
    },
    SemWait {
        obj: TargetAddr,
        try_only: bool,
    },
    SemPost {
        obj: TargetAddr,
    },
    Yield,
    Assume {
        cond: bool,
    },
    AtomicBegin,
    AtomicEnd,
    /// `__VERIFIER_nondet_*`: a value of `size` bytes the engine chooses (each choice an
    /// outcome of the node, `SyncState::alternatives`), in the reply.
    Nondet {
        size: u8,
        signed: bool,
        boolean: bool,
    },
    /// `futex(FUTEX_WAIT)`: reads the 4-byte word at `addr` and, when it holds `expected`,
    /// waits (the engine learns which from the value read); `FutexWoken` is the return.
    FutexWait {
        addr: TargetAddr,
        expected: u32,
        timed: bool,
    },
    FutexWoken {
        addr: TargetAddr,
        timed: bool,
    },
    /// Under the graph engine, a wait's second part: after `FutexWait` took the futex and the
    /// word was read (a load of its own), the thread joins the waiters if the word held the
    /// value (`waits`), and lets the futex go.
    FutexJoin {
        addr: TargetAddr,
        waits: bool,
    },
    /// `futex(FUTEX_WAKE)`: wakes at most `count` waiters on `addr`.
    FutexWake {
        addr: TargetAddr,
        count: u32,
    },
}

/// Where the engine keeps a futex's waiters, as a synchronisation object of one byte: the
/// futex word's address in the upper half of the address space, where no program memory is,
/// so that waking conflicts with waiting but not with the word's loads and stores.
pub fn futex_queue(addr: TargetAddr) -> TargetAddr {
    TargetAddr(addr.0 | 1 << 63)
}

/// Fences (x86 and POWER).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FenceKind {
    /// mfence, POWER's sync: drains the store buffer.
    Full,
    /// sfence: orders stores (matters under PSO).
    Store,
    /// lfence: orders loads (no effect under SC, TSO, PSO).
    Load,
    /// POWER's lwsync: orders all but a write before a read (under PSO: stores).
    Lightweight,
    /// POWER's eieio: orders writes (under PSO: stores).
    Eieio,
    /// POWER's isync: orders nothing by itself (after a branch that depends on a read, what
    /// follows; the POWER model takes that from the program's dependencies).
    Isync,
}

impl FenceKind {
    /// From the runtime's code (runtime/channel.h `SMC_SITE_FENCE`).
    pub fn from_code(code: u64) -> Option<FenceKind> {
        match code {
            1 => Some(FenceKind::Full),
            2 => Some(FenceKind::Store),
            3 => Some(FenceKind::Load),
            4 => Some(FenceKind::Lightweight),
            5 => Some(FenceKind::Eieio),
            6 => Some(FenceKind::Isync),
            _ => None,
        }
    }

    /// Whether it keeps a thread's stores in order (all PSO needs of a fence but a full one).
    pub fn orders_stores(self) -> bool {
        matches!(
            self,
            FenceKind::Store | FenceKind::Lightweight | FenceKind::Eieio
        )
    }
}

/// One memory footprint of an event: `size` bytes at `addr`, written or only read.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Access {
    pub addr: u64,
    pub size: u32,
    pub write: bool,
}

impl Access {
    fn new(addr: TargetAddr, size: u32, write: bool) -> Access {
        Access {
            addr: addr.0,
            size: size.max(1),
            write,
        }
    }
    pub fn overlaps(&self, other: &Access) -> bool {
        self.addr < other.addr + other.size as u64 && other.addr < self.addr + self.size as u64
    }
}

impl Op {
    /// The shared memory this operation touches when it runs. `wrote` says whether a
    /// conditional write (CAS, try-lock) happened; for a pending operation pass `true`, the
    /// conservative answer. With store buffers (`buffered`) a store touches nothing: its
    /// update does. Synchronisation objects are modelled as one byte at their address.
    pub fn footprint(&self, wrote: bool, buffered: bool) -> Footprint {
        use Op::*;
        let mut f = Footprint::default();
        match *self {
            Load { addr, size } | RmwLoad { addr, size } => f.push(Access::new(addr, size, false)),
            Store { .. } | RmwStore { .. } if buffered => {}
            Store { addr, size }
            | RmwStore { addr, size }
            | Rmw { addr, size }
            | Update { addr, size, .. } => f.push(Access::new(addr, size, true)),
            Cas { addr, size } => f.push(Access::new(addr, size, wrote)),
            MutexLock { obj } | MutexUnlock { obj } | RwUnlock { obj } | SemPost { obj } => {
                f.push(Access::new(obj, 1, true))
            }
            BarrierInit { obj, .. } | BarrierWait { obj } | SemInit { obj, .. } => {
                f.push(Access::new(obj, 1, true))
            }
            MutexTryLock { obj }
            | RwRdLock { obj, .. }
            | RwWrLock { obj, .. }
            | SemWait { obj, .. } => f.push(Access::new(obj, 1, wrote)),
            BarrierLeave { obj } => f.push(Access::new(obj, 1, false)),
            CondWait { cond, mutex, .. } | CondReacquire { cond, mutex, .. } => {
                f.push(Access::new(cond, 1, true));
                f.push(Access::new(mutex, 1, true));
            }
            CondSignal { cond } | CondBroadcast { cond } => f.push(Access::new(cond, 1, true)),
            // A futex's waiters change when a wake picks a waiter or a wait returns without
            // being picked (a time-out, a spurious wake-up); a wake that found no one and a
            // wait that returns picked only look at them (`wrote` false). A wait is taken to
            // queue its thread whatever the word held: its outcome depends on other threads'
            // stores, and a race that such a store decides would vanish from the branch that
            // runs the store first (source-DPOR's initials assume a fixed dependency).
            FutexWait { addr, .. } => {
                f.push(Access::new(addr, 4, false));
                f.push(Access::new(futex_queue(addr), 1, true));
            }
            FutexWoken { addr, .. } | FutexWake { addr, .. } => {
                f.push(Access::new(futex_queue(addr), 1, wrote))
            }
            FutexJoin { addr, .. } => f.push(Access::new(futex_queue(addr), 1, true)),
            // the library writes the freed block (its links) or copies it: another thread's
            // access to it, before or after, is a race with the call (a reference count two
            // threads both read as zero before either frees: a double free)
            HeapRelease { addr, len } => f.push(Access::new(
                addr,
                u32::try_from(len).unwrap_or(u32::MAX),
                true,
            )),
            // (a section conflicts by what it touches inside: the engine moves it as one step)
            Fence { .. }
            | AtomicBegin
            | AtomicEnd
            | ThreadStart
            | ThreadExit
            | Spawn
            | Join { .. }
            | ProcessExit { .. }
            | Yield
            | Assume { .. }
            | Nondet { .. } => {}
        }
        f
    }

    /// An exit that comes only after every other thread has finished or is blocked: no other
    /// thread runs after it, so it is ordered with nothing. Sound because an error of another
    /// thread that an earlier exit would have cut off is still reached, and the exit itself
    /// (with no handler to run) does nothing another thread can see; with handlers, which may,
    /// the exit keeps its place among the others.
    pub fn exits_last(&self) -> bool {
        matches!(
            self,
            Op::ProcessExit {
                handlers: false,
                ..
            }
        )
    }

    /// Under store buffers: must the thread's buffer be empty first? Fences, locked
    /// instructions, and every interposed synchronisation call (glibc's contain fences).
    pub fn drains_buffer(&self) -> bool {
        use Op::*;
        !matches!(
            self,
            Load { .. }
                | Store { .. }
                | RmwLoad { .. }
                | RmwStore { .. }
                | Fence {
                    kind: FenceKind::Store
                        | FenceKind::Load
                        | FenceKind::Lightweight
                        | FenceKind::Eieio
                        | FenceKind::Isync
                }
                | HeapRelease { .. }
                | ThreadStart
                | Assume { .. }
                | Nondet { .. }
                | Update { .. }
        )
    }

    /// A try-lock or try-wait: it fails, and then only reads, where the object is not free.
    pub fn is_try(&self) -> bool {
        use Op::*;
        matches!(
            self,
            MutexTryLock { .. }
                | SemWait { try_only: true, .. }
                | RwRdLock { try_only: true, .. }
                | RwWrLock { try_only: true, .. }
        )
    }

    /// Whether the operation is a memory load whose repetition an await loop is made of.
    pub fn is_load(&self) -> bool {
        matches!(self, Op::Load { .. } | Op::Cas { .. } | Op::RmwLoad { .. })
    }

    /// The object of a call that tries to take a lock or a semaphore and returns at once
    /// (its await hash is its caller's state: a loop of failed tries is an await loop).
    pub fn tried(&self) -> Option<TargetAddr> {
        use Op::*;
        match *self {
            MutexTryLock { obj }
            | RwRdLock {
                obj,
                try_only: true,
            }
            | RwWrLock {
                obj,
                try_only: true,
            }
            | SemWait {
                obj,
                try_only: true,
            } => Some(obj),
            _ => None,
        }
    }

    /// The data address of a memory access, for reports.
    pub fn data(&self) -> Option<(TargetAddr, u32)> {
        use Op::*;
        match *self {
            Load { addr, size }
            | Store { addr, size }
            | Rmw { addr, size }
            | Cas { addr, size }
            | RmwLoad { addr, size }
            | RmwStore { addr, size }
            | Update { addr, size, .. } => Some((addr, size)),
            _ => None,
        }
    }

    /// The pthread object (mutex, condition variable, read-write lock, barrier, semaphore) the
    /// operation acts on.
    pub fn sync_object(&self) -> Option<TargetAddr> {
        use Op::*;
        match *self {
            MutexLock { obj }
            | MutexTryLock { obj }
            | MutexUnlock { obj }
            | RwRdLock { obj, .. }
            | RwWrLock { obj, .. }
            | RwUnlock { obj }
            | BarrierInit { obj, .. }
            | BarrierWait { obj }
            | BarrierLeave { obj }
            | SemInit { obj, .. }
            | SemWait { obj, .. }
            | SemPost { obj } => Some(obj),
            CondWait { cond, .. }
            | CondReacquire { cond, .. }
            | CondSignal { cond }
            | CondBroadcast { cond } => Some(cond),
            _ => None,
        }
    }

    /// The address the operation accesses or the object it acts on.
    pub fn location(&self) -> Option<u64> {
        use Op::*;
        if let Some(obj) = self.sync_object() {
            return Some(obj.0);
        }
        match *self {
            HeapRelease { addr, .. } => Some(addr.0),
            FutexWait { addr, .. }
            | FutexWoken { addr, .. }
            | FutexWake { addr, .. }
            | FutexJoin { addr, .. } => Some(addr.0),
            _ => self.data().map(|(a, _)| a.0),
        }
    }

    /// Short name of the operation kind, as shown in traces and JSON.
    pub fn kind_name(&self) -> &'static str {
        use Op::*;
        match self {
            Load { .. } => "load",
            Store { .. } => "store",
            Rmw { .. } => "atomic-rmw",
            Cas { .. } => "cas",
            RmwLoad { .. } => "rmw-load",
            RmwStore { .. } => "rmw-store",
            Fence { .. } => "fence",
            HeapRelease { .. } => "heap_release",
            Update { .. } => "update",
            ThreadStart => "thread-start",
            ThreadExit => "thread-exit",
            Spawn => "pthread_create",
            Join { .. } => "pthread_join",
            ProcessExit { .. } => "exit",
            MutexLock { .. } => "mutex_lock",
            MutexTryLock { .. } => "mutex_trylock",
            MutexUnlock { .. } => "mutex_unlock",
            CondWait { .. } => "cond_wait",
            CondReacquire { .. } => "cond_wake",
            CondSignal { .. } => "cond_signal",
            CondBroadcast { .. } => "cond_broadcast",
            RwRdLock { .. } => "rwlock_rdlock",
            RwWrLock { .. } => "rwlock_wrlock",
            RwUnlock { .. } => "rwlock_unlock",
            BarrierInit { .. } => "barrier_init",
            BarrierWait { .. } => "barrier_wait",
            BarrierLeave { .. } => "barrier_leave",
            SemInit { .. } => "sem_init",
            SemWait { .. } => "sem_wait",
            SemPost { .. } => "sem_post",
            Yield => "sched_yield",
            Assume { .. } => "assume",
            AtomicBegin => "atomic_begin",
            AtomicEnd => "atomic_end",
            Nondet { .. } => "nondet",
            FutexWait { .. } => "futex_wait",
            FutexWoken { .. } => "futex_woken",
            FutexWake { .. } => "futex_wake",
            FutexJoin { .. } => "futex_join",
        }
    }

    /// The synchronisation object a blocking acquire waits for, if this is one.
    pub fn acquired_object(&self) -> Option<TargetAddr> {
        use Op::*;
        match *self {
            MutexLock { obj }
            | RwRdLock {
                obj,
                try_only: false,
            }
            | RwWrLock {
                obj,
                try_only: false,
            } => Some(obj),
            CondReacquire { mutex, .. } => Some(mutex),
            SemWait {
                obj,
                try_only: false,
            } => Some(obj),
            _ => None,
        }
    }

    /// The object a release gives back, if this is one.
    pub fn released_object(&self) -> Option<TargetAddr> {
        use Op::*;
        match *self {
            MutexUnlock { obj } | RwUnlock { obj } | SemPost { obj } => Some(obj),
            CondWait { mutex, .. } => Some(mutex),
            _ => None,
        }
    }

    /// Whether this operation (when it succeeded) took the object: the acquire a release matches.
    pub fn takes_object(&self, wrote: bool) -> Option<TargetAddr> {
        use Op::*;
        match *self {
            MutexLock { obj } | RwRdLock { obj, .. } | RwWrLock { obj, .. } => Some(obj),
            MutexTryLock { obj } | SemWait { obj, .. } if wrote => Some(obj),
            CondReacquire { mutex, .. } => Some(mutex),
            _ => None,
        }
    }
}

/// At most a few accesses per event; kept inline.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Footprint {
    len: u8,
    items: [Option<Access>; 2],
}

impl Footprint {
    fn push(&mut self, a: Access) {
        self.items[self.len as usize] = Some(a);
        self.len += 1;
    }
    pub fn iter(&self) -> impl Iterator<Item = &Access> {
        self.items.iter().flatten()
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn writes(&self) -> bool {
        self.iter().any(|a| a.write)
    }
    /// Two footprints conflict when they overlap and at least one of the two writes.
    pub fn conflicts(&self, other: &Footprint) -> bool {
        self.iter()
            .any(|a| other.iter().any(|b| (a.write || b.write) && a.overlaps(b)))
    }
}

/// A thread's next visible operation, as reported by the runtime.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Pending {
    pub op: Op,
    /// Instruction (or call site) address in the program.
    pub pc: u64,
    /// Hash of the thread-local state at a load, for await-loop detection.
    pub hash: u64,
    /// Instrumented site number + 1, or 0.
    pub site: u32,
    /// Loads of the thread so far in the execution that were no event (they fell on its own
    /// memory): a dependency on an earlier load event does not hold past one.
    pub skipped: u32,
    /// A compare-exchange's operands, where the runtime knows them.
    pub cas: Option<CasOperands>,
    /// What a store-conditional stores if it writes (little-endian, of its access size).
    pub stores: Option<u64>,
}

/// What a compare-exchange compares memory with and what it writes if equal (little-endian,
/// of its access size): whether it writes follows from the write it reads from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct CasOperands {
    pub expected: u64,
    pub desired: u64,
}

/// An executed event of the trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub thread: ThreadId,
    pub op: Op,
    pub pc: u64,
    pub hash: u64,
    /// Did a conditional write happen (successful CAS or try-lock)? True for plain writes.
    pub wrote: bool,
    pub value_read: Option<u64>,
    pub value_written: Option<u64>,
    /// The supervisor's reply to the runtime (e.g. try-lock result).
    pub reply: u64,
    /// The bytes a buffered store put in its buffer, or an update wrote to memory.
    pub bytes: Option<StoreBytes>,
    /// For a load: the bytes (bit n = byte n) it read from its own store buffer.
    pub forwarded: u64,
}

impl Event {
    pub fn from_pending(thread: ThreadId, p: &Pending) -> Event {
        Event {
            thread,
            op: p.op,
            pc: p.pc,
            hash: p.hash,
            wrote: true,
            value_read: None,
            value_written: None,
            reply: 0,
            bytes: None,
            forwarded: 0,
        }
    }
    /// An atomic update that wrote the value it read (a test-and-set of a set bit, an
    /// exchange of 1 for 1, a compare-exchange of a value with itself): memory is as before,
    /// so for an await loop it is a read (a fence as well, which repeats nothing).
    pub fn is_silent_update(&self) -> bool {
        matches!(self.op, Op::Rmw { .. } | Op::Cas { .. })
            && self.wrote
            && self.value_read.is_some()
            && self.value_read == self.value_written
    }

    pub fn footprint(&self, buffered: bool) -> Footprint {
        match self.op.data() {
            // a load that read all its bytes from its own store buffer touches no memory
            Some((_, size))
                if self.op.is_load() && size < 64 && self.forwarded == (1u64 << size) - 1 =>
            {
                Footprint::default()
            }
            _ => self.op.footprint(self.wrote, buffered),
        }
    }

    /// The thread whose program this event belongs to (a buffer's updates belong to its thread).
    pub fn owner(&self) -> ThreadId {
        match self.op {
            Op::Update { owner, .. } => owner,
            _ => self.thread,
        }
    }
}

/// What the engine tells a thread it lets run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reply {
    /// Operation-specific result (try-lock outcome, barrier serial thread...).
    pub value: u64,
    /// For a load: bytes of its own store buffer it sees instead of memory (bit n of the mask =
    /// byte n of the access).
    pub patch: Option<(u64, [u8; MAX_ACCESS])>,
}

/// A decision of the previous execution that the next one repeats: the first steps of an
/// execution replay a prefix of the last one, and an executor may carry them out without
/// asking the engine step by step ([`Executor::script`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScriptStep {
    /// `slot` runs its pending operation with `reply`. It must be stopped at `pc`, at an
    /// operation on `addr` (0: any), as it was in the previous execution.
    Run {
        slot: u32,
        reply: Reply,
        pc: u64,
        addr: u64,
    },
    /// A buffered store of slot `owner` reaches memory.
    Commit {
        owner: u32,
        addr: u64,
        bytes: StoreBytes,
    },
}
