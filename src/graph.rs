//! Execution graphs: per thread its events in program order, per read the write it reads from
//! (rf), per location the coherence order of its writes (co). The graph engine
//! (`engine::trust`) builds them; the memory models (`model/`) decide which are consistent.
//!
//! Under a model that allows cycles in program order and reads-from (POWER's load buffering),
//! a revisit may keep an event of a thread and drop one before it in program order: that
//! place is a hole ([`GraphEvent::hole`]) until the thread, run again, adds an event there.
//! Under the other models every thread's events form a prefix of what the thread does.

use smallvec::SmallVec;
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::event::{CasOperands, Op, StoreBytes};

/// An event: its thread (the graph's own dense index, in order of creation) and its position
/// in the thread's program order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventId {
    pub thread: u32,
    pub index: u32,
}

/// What an event does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Label {
    /// Reads `size` bytes at `addr` from `rf` (`None`: the initial value).
    Read {
        addr: u64,
        size: u32,
        rf: Option<EventId>,
    },
    Write {
        addr: u64,
        size: u32,
        bytes: StoreBytes,
    },
    /// An atomic read-modify-write (a locked instruction, a successful compare-exchange): reads
    /// from `rf` and writes `bytes`, immediately after `rf` in coherence order.
    Update {
        addr: u64,
        size: u32,
        rf: Option<EventId>,
        bytes: StoreBytes,
    },
    /// A full fence (`mfence`, POWER's `sync`).
    Fence,
    /// POWER's `lwsync` (for the POWER model; the others order nothing by it).
    Lwsync,
    /// POWER's `eieio`, x86's `sfence`: a store fence (PSO orders stores by it).
    Eieio,
    /// Creates thread `child`, whose first event is its `Start`.
    Spawn {
        child: u32,
    },
    Start,
    Exit,
    /// Waits for thread `child` to exit.
    Join {
        child: u32,
    },
    /// Anything else the thread does in the open (no memory of others, no order).
    Local,
}

impl Label {
    pub fn location(&self) -> Option<u64> {
        self.access().map(|(addr, _)| addr)
    }

    /// The memory it reads or writes: address and size.
    pub fn access(&self) -> Option<(u64, u32)> {
        match self {
            Label::Read { addr, size, .. }
            | Label::Write { addr, size, .. }
            | Label::Update { addr, size, .. } => Some((*addr, *size)),
            _ => None,
        }
    }

    pub fn reads(&self) -> bool {
        matches!(self, Label::Read { .. } | Label::Update { .. })
    }

    pub fn writes(&self) -> bool {
        matches!(self, Label::Write { .. } | Label::Update { .. })
    }

    pub fn rf(&self) -> Option<Option<EventId>> {
        match self {
            Label::Read { rf, .. } | Label::Update { rf, .. } => Some(*rf),
            _ => None,
        }
    }

    /// The bytes a write leaves in memory.
    pub fn written(&self) -> Option<&StoreBytes> {
        match self {
            Label::Write { bytes, .. } | Label::Update { bytes, .. } => Some(bytes),
            _ => None,
        }
    }

    /// Orders everything before it with everything after it in its thread, under any model
    /// (thread creation and joining are calls that fence as well).
    pub fn is_barrier(&self) -> bool {
        matches!(
            self,
            Label::Fence
                | Label::Update { .. }
                | Label::Spawn { .. }
                | Label::Start
                | Label::Exit
                | Label::Join { .. }
        )
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphEvent {
    pub label: Label,
    /// When it was added to the graph (later events have larger stamps; restriction keeps
    /// stamps as they were).
    pub stamp: u32,
    /// Where its thread was stopped, for checking a replay.
    pub pc: u64,
    /// The thread's state at a read (registers and stack: `Pending::hash`), to tell an await
    /// loop's iterations apart.
    pub hash: u64,
    /// The reads of its thread it depends on (for a model that orders by dependencies).
    /// (Boxed, `None` where there are none: most models have no dependencies, and graphs are
    /// copied at every branch.)
    pub deps: Option<Box<Dependencies>>,
    /// A place a revisit emptied while keeping a later event of the thread: not an event
    /// ([`Graph::events`] skips it) until the thread, run again, adds one here. What does not
    /// depend on the values read stays as it was, for the model: the kind of fence, the
    /// dependencies (the instruction at this place is the same, as the kept events after it
    /// do not depend on a read the path to them branched on).
    pub hole: bool,
    /// A store-conditional (POWER's `stwcx.`, under a model where it may fail): its outcome.
    pub conditional: Option<Conditional>,
    /// Loads of its thread before it that were no event (`Pending::skipped`).
    pub skipped: u32,
    /// A synchronisation operation that took an object (acquire) or let it go (release),
    /// for a model that orders accesses by them only as the C library's barriers do.
    pub order: Option<Order>,
    /// The operation on a pthread object, or the nondeterministic value, that the engine
    /// answers itself (not memory: [`crate::engine::trust`]'s `objects`).
    pub op: Option<Op>,
    /// Which of the outcomes of `op` this event has (the waiter a signal wakes, the value a
    /// nondet call returns); `None` until its step chooses.
    pub choice: Option<u32>,
    /// Which piece of its operation's access it is, where the access spans several pieces
    /// of memory (one event each, in address order: [`crate::engine::trust`]'s `pieces`).
    pub piece: Option<Piece>,
    /// A locked instruction that may only read (x86's `lock cmpxchg` that finds another
    /// value): a full barrier whatever it did.
    pub locked: bool,
    /// A compare-exchange's operands (reported by the runtime, or, where it did not, what
    /// one that wrote read and wrote), which tell whether it writes with another source.
    pub cas: Option<CasOperands>,
}

/// What an event without dependencies depends on.
static NO_DEPENDENCIES: Dependencies = Dependencies {
    addr: Vec::new(),
    data: Vec::new(),
    ctrl: Vec::new(),
    ctrlisync: Vec::new(),
    may: Vec::new(),
    unknown: false,
};

impl GraphEvent {
    /// An event with nothing but its label and where its thread was (stamped when added).
    pub fn new(label: Label, pc: u64, hash: u64) -> GraphEvent {
        GraphEvent {
            label,
            stamp: 0,
            pc,
            hash,
            deps: None,
            hole: false,
            conditional: None,
            skipped: 0,
            order: None,
            op: None,
            choice: None,
            piece: None,
            locked: false,
            cas: None,
        }
    }

    /// The reads of its thread it depends on.
    pub fn deps(&self) -> &Dependencies {
        self.deps.as_deref().unwrap_or(&NO_DEPENDENCIES)
    }

    /// Orders everything before it with everything after it in its thread, under any model.
    pub fn is_barrier(&self) -> bool {
        self.label.is_barrier() || self.locked
    }
}

/// The `index`th of the `count` events of an access that spans several pieces of memory;
/// `atomic` where the processor makes the access atomic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    pub index: u8,
    pub count: u8,
    pub atomic: bool,
}

/// How a synchronisation event orders its thread's accesses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// What comes after it stays after it (a lock: POWER's `isync` after the update).
    Acquire,
    /// What comes before it stays before it, cumulatively (an unlock: `lwsync` before).
    Release,
    /// Both (a barrier's wait).
    AcquireRelease,
}

impl Order {
    /// Does it order as `o` does (an acquire-release as either)?
    pub fn includes(self, o: Order) -> bool {
        self == o || self == Order::AcquireRelease
    }
}

/// What a store-conditional did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conditional {
    /// It failed: no write (the event is [`Label::Local`]) to `size` bytes at `addr`.
    Failed { addr: u64, size: u32 },
    /// It wrote (a [`Label::Write`]), atomically with the load-reserve at index `reserve` of
    /// its thread: no other thread's write comes between them in coherence order.
    Written { reserve: u32 },
}

/// An event's dependencies on earlier reads of its thread (herd's `addr`, `data`, `ctrl`,
/// `ctrlisync`; `decode::SiteDependencies` says how they are found).
/// The model orders by those; the exploration keeps with an event what it *may* depend on
/// (`may`, or with `unknown` every earlier read of its thread), so that a revisit never keeps
/// an event whose existence rests on a read it drops.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dependencies {
    pub addr: Vec<EventId>,
    pub data: Vec<EventId>,
    pub ctrl: Vec<EventId>,
    pub ctrlisync: Vec<EventId>,
    pub may: Vec<EventId>,
    pub unknown: bool,
}

impl Dependencies {
    pub fn is_empty(&self) -> bool {
        self.addr.is_empty()
            && self.data.is_empty()
            && self.ctrl.is_empty()
            && self.ctrlisync.is_empty()
            && self.may.is_empty()
            && !self.unknown
    }
}

/// A set of events of a graph (what a revisit keeps: a write's prefix, the events added
/// before a read): the first places of each thread, which is what most such sets are, and the
/// other places one by one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Prefix {
    /// Per thread, how many of its first places are all in the set.
    firsts: SmallVec<[u32; 16]>,
    /// The others, sorted; each after its thread's first places and the place after them.
    others: SmallVec<[EventId; 8]>,
}

impl Prefix {
    /// How many of `thread`'s first places are all in the set.
    pub fn first(&self, thread: u32) -> u32 {
        self.firsts.get(thread as usize).copied().unwrap_or(0)
    }

    pub fn contains(&self, e: EventId) -> bool {
        e.index < self.first(e.thread) || self.others.binary_search(&e).is_ok()
    }

    /// Adds `e`; false if it was there.
    pub fn insert(&mut self, e: EventId) -> bool {
        if e.index == self.first(e.thread) {
            self.insert_first(e.thread, e.index + 1);
            return true;
        }
        if e.index < self.first(e.thread) {
            return false;
        }
        match self.others.binary_search(&e) {
            Ok(_) => false,
            Err(at) => {
                self.others.insert(at, e);
                true
            }
        }
    }

    /// Adds the first `n` places of `thread`.
    pub fn insert_first(&mut self, thread: u32, n: u32) {
        let t = thread as usize;
        if self.firsts.len() <= t {
            self.firsts.resize(t + 1, 0);
        }
        let mut first = self.firsts[t].max(n);
        // (places already in the set right after them join them)
        let from = self
            .others
            .partition_point(|o| *o < EventId { thread, index: 0 });
        let mut to = from;
        while to < self.others.len() && self.others[to].thread == thread {
            if self.others[to].index == first {
                first += 1;
            } else if self.others[to].index > first {
                break;
            }
            to += 1;
        }
        self.others.drain(from..to);
        self.firsts[t] = first;
    }

    /// How many places of `thread` up to the last one in the set.
    fn extent(&self, thread: usize) -> usize {
        let last = self
            .others
            .iter()
            .rev()
            .find(|o| o.thread as usize == thread);
        last.map_or(self.first(thread as u32), |o| o.index + 1) as usize
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Graph {
    /// Per thread, its events in program order; shared between copies of the graph until
    /// one changes them (graphs are copied at every branch, and a branch changes one thread).
    pub threads: Vec<Arc<Vec<GraphEvent>>>,
    /// Per thread, the spawn that created it (`None` for the first thread).
    pub parents: Vec<Option<EventId>>,
    /// Per location, its writes in coherence order (after the initial value). A write not yet
    /// placed is in no list.
    pub co: BTreeMap<u64, Vec<EventId>>,
    /// Per location, the threads that added an event there (bit `t`, bit 63 for every thread
    /// from 63 on). Events taken out leave their bit: a superset.
    pub accessors: BTreeMap<u64, u64>,
    pub next_stamp: u32,
    /// Where the exploration met the graph, not what it is: how many visits lead to it from
    /// the first, and (`--shard`) whether it lies below a graph dealt to this shard.
    pub depth: u32,
    pub owned: bool,
}

impl Graph {
    pub fn event(&self, e: EventId) -> &GraphEvent {
        &self.threads[e.thread as usize][e.index as usize]
    }

    pub fn label(&self, e: EventId) -> &Label {
        &self.event(e).label
    }

    pub fn label_mut(&mut self, e: EventId) -> &mut Label {
        &mut self.event_mut(e).label
    }

    pub fn event_mut(&mut self, e: EventId) -> &mut GraphEvent {
        &mut self.events_mut(e.thread)[e.index as usize]
    }

    /// `thread`'s events, to change: copied first where another graph shares them.
    pub fn events_mut(&mut self, thread: u32) -> &mut Vec<GraphEvent> {
        let evs = &mut self.threads[thread as usize];
        // (a count first: `get_mut` is a locked instruction, and no `Weak` is ever made)
        if Arc::strong_count(evs) != 1 {
            // (a copy with room for the events the running execution adds to the thread next:
            // one that grew from its exact length would be copied again at once)
            *evs = Arc::new(with_room(evs, evs.len()));
        }
        Arc::get_mut(evs).expect("a thread's events of its own")
    }

    /// How many events (holes are none).
    pub fn len(&self) -> usize {
        self.threads
            .iter()
            .flat_map(|evs| evs.iter())
            .filter(|ev| !ev.hole)
            .count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every event, thread by thread in program order.
    pub fn events(&self) -> impl Iterator<Item = EventId> + '_ {
        self.threads.iter().enumerate().flat_map(|(t, evs)| {
            evs.iter()
                .enumerate()
                .filter(|(_, ev)| !ev.hole)
                .map(move |(i, _)| EventId {
                    thread: t as u32,
                    index: i as u32,
                })
        })
    }

    /// The events that access `addr`, thread by thread (only the threads that did).
    pub fn events_at(&self, addr: u64) -> EventsAt<'_> {
        EventsAt {
            threads: &self.threads,
            addr,
            touched: self.accessors.get(&addr).copied().unwrap_or(0),
            at: EventId {
                thread: 0,
                index: 0,
            },
        }
    }

    /// Does the graph have holes (places a revisit emptied before kept events)?
    pub fn has_holes(&self) -> bool {
        self.threads
            .iter()
            .flat_map(|evs| evs.iter())
            .any(|ev| ev.hole)
    }

    /// The thread `spawn` creates: the one it created before the graph was cut down, or a new
    /// one.
    pub fn add_thread(&mut self, parent: Option<EventId>) -> u32 {
        if let Some(t) = self
            .parents
            .iter()
            .position(|&p| p.is_some() && p == parent)
        {
            return t as u32;
        }
        self.threads.push(Arc::default());
        self.parents.push(parent);
        (self.threads.len() - 1) as u32
    }

    /// Appends an event to `thread`'s program order.
    pub fn push(&mut self, thread: u32, label: Label, pc: u64, hash: u64) -> EventId {
        let index = self.threads[thread as usize].len() as u32;
        self.add_at(EventId { thread, index }, label, pc, hash)
    }

    /// Adds an event at place `e`: a hole, or the end of its thread.
    pub fn add_at(&mut self, e: EventId, label: Label, pc: u64, hash: u64) -> EventId {
        self.insert(e, GraphEvent::new(label, pc, hash))
    }

    /// Adds `ev`, stamped now, at place `e` (its other fields set before: a thread's events
    /// are made its own on every change, an atomic check where a graph shares them).
    pub fn insert(&mut self, e: EventId, mut ev: GraphEvent) -> EventId {
        if let Some(addr) = ev.label.location() {
            *self.accessors.entry(addr).or_default() |= 1 << e.thread.min(63);
        }
        ev.stamp = self.next_stamp;
        let evs = self.events_mut(e.thread);
        match evs.get_mut(e.index as usize) {
            Some(hole) => {
                debug_assert!(hole.hole);
                *hole = ev;
            }
            None => evs.push(ev),
        }
        self.next_stamp += 1;
        e
    }

    /// Takes event `e` out again: its place becomes a hole, or its thread ends before it.
    pub fn remove(&mut self, e: EventId) {
        self.unplace(e);
        let evs = self.events_mut(e.thread);
        evs[e.index as usize].hole = true;
        trim_holes(evs);
    }

    /// Is `e` the last place of its thread (no event or hole after it)?
    pub fn is_last_of_thread(&self, e: EventId) -> bool {
        self.threads[e.thread as usize].len() == e.index as usize + 1
    }

    /// Has no thread but `thread` an event at `addr`?
    pub fn only_thread_at(&self, addr: u64, thread: u32) -> bool {
        thread < 63
            && self
                .accessors
                .get(&addr)
                .is_none_or(|&m| m & !(1 << thread) == 0)
    }

    /// The writes to `addr` in coherence order.
    pub fn co_of(&self, addr: u64) -> &[EventId] {
        self.co.get(&addr).map_or(&[], Vec::as_slice)
    }

    /// Where `w` is in its location's coherence order (0 is the first write after the initial
    /// value).
    pub fn co_position(&self, w: EventId) -> Option<usize> {
        let addr = self.label(w).location()?;
        self.co_of(addr).iter().position(|&x| x == w)
    }

    /// Puts write `w` into coherence order at `position` (0: first after the initial value).
    pub fn place(&mut self, w: EventId, position: usize) {
        let addr = self.label(w).location().expect("placing a non-write");
        self.co.entry(addr).or_default().insert(position, w);
    }

    pub fn unplace(&mut self, w: EventId) {
        if let Some(addr) = self.label(w).location() {
            if let Some(list) = self.co.get_mut(&addr) {
                list.retain(|&x| x != w);
            }
        }
    }

    /// The events `e` depends on through program order, reads-from and thread creation and
    /// joining: its porf-prefix, itself included.
    pub fn porf_prefix(&self, e: EventId) -> Prefix {
        let threads = self.threads.len();
        let mut length: SmallVec<[u32; 16]> = SmallVec::from_elem(0, threads);
        // per thread, how many of its first events the prefix needs (all of them are then
        // scanned for what they depend on in other threads, until nothing grows)
        let mut need: SmallVec<[u32; 16]> = SmallVec::from_elem(0, threads);
        need[e.thread as usize] = e.index + 1;
        let mut grew = true;
        while grew {
            grew = false;
            for t in 0..threads {
                let (from, to) = (length[t], need[t]);
                if from >= to {
                    continue;
                }
                length[t] = to;
                grew = true;
                for (index, ev) in (from..to).zip(&self.threads[t][from as usize..to as usize]) {
                    if ev.hole {
                        continue;
                    }
                    let here = EventId {
                        thread: t as u32,
                        index,
                    };
                    if let Some(p) = self.outside_predecessor(here) {
                        let n = &mut need[p.thread as usize];
                        *n = (*n).max(p.index + 1);
                    }
                }
            }
        }
        // (a prefix of each thread)
        Prefix {
            firsts: length,
            others: SmallVec::new(),
        }
    }

    /// The events `e` depends on, itself included, where `within` says which events of its
    /// own thread an event depends on (all those before it: the porf-prefix), and reads-from,
    /// thread creation and joining the others.
    pub fn prefix(
        &self,
        e: EventId,
        within: &dyn Fn(&Graph, EventId, &mut Vec<EventId>),
    ) -> Prefix {
        let mut prefix = Prefix::default();
        let mut todo = vec![e];
        while let Some(e) = todo.pop() {
            if !prefix.insert(e) {
                continue;
            }
            if !self.event(e).hole {
                todo.extend(self.outside_predecessor(e));
            }
            within(self, e, &mut todo);
        }
        prefix
    }

    /// The event of another thread that `e` comes right after: the write it reads from, the
    /// spawn that started its thread, the exit it joined.
    pub fn outside_predecessor(&self, e: EventId) -> Option<EventId> {
        match &self.label(e) {
            Label::Read { rf, .. } | Label::Update { rf, .. } => *rf,
            Label::Start => self.parents[e.thread as usize],
            Label::Join { child } => {
                let evs = &self.threads[*child as usize];
                (!evs.is_empty()).then(|| EventId {
                    thread: *child,
                    index: evs.len() as u32 - 1,
                })
            }
            _ => None,
        }
    }

    /// A copy of the graph cut down to the events in `keep`, coherence order included: a
    /// place before a kept event of its thread becomes a hole. (What is dropped at the ends
    /// of threads is not copied.)
    pub fn restricted(&self, keep: &Prefix) -> Graph {
        let thread = |(t, evs): (usize, &Arc<Vec<GraphEvent>>)| {
            if keep.first(t as u32) as usize >= evs.len() {
                return Arc::clone(evs); // kept whole
            }
            // (room for the events the next execution adds again)
            let mut cut = with_room(&evs[..keep.extent(t).min(evs.len())], evs.len());
            trim_holes(&mut cut);
            for (i, ev) in cut.iter_mut().enumerate() {
                let e = EventId {
                    thread: t as u32,
                    index: i as u32,
                };
                if !keep.contains(e) {
                    ev.hole = true;
                }
            }
            Arc::new(cut)
        };
        let mut h = Graph {
            threads: self.threads.iter().enumerate().map(thread).collect(),
            parents: self.parents.clone(),
            co: self.co.clone(),
            accessors: self.accessors.clone(),
            next_stamp: self.next_stamp,
            depth: self.depth,
            owned: self.owned,
        };
        for list in h.co.values_mut() {
            list.retain(|w| keep.contains(*w));
        }
        h.co.retain(|_, list| !list.is_empty());
        // a thread whose spawn is gone has no events left (they came after it) and stays as
        // an empty entry, which the spawn takes again when it comes back
        h
    }

    /// May `e` be replayed next, where each thread's first `ran` events have: it is the next
    /// of its thread, not a hole, and what else it depends on (its source, its creation, the
    /// end of the thread it joins) has run.
    pub fn runs_next(&self, e: EventId, ran: &[u32]) -> bool {
        let done = |p: EventId| p.index < ran.get(p.thread as usize).copied().unwrap_or(0);
        let next = ran.get(e.thread as usize).copied().unwrap_or(0);
        let ev = self
            .threads
            .get(e.thread as usize)
            .and_then(|evs| evs.get(e.index as usize));
        e.index == next
            && ev.is_some_and(|ev| !ev.hole)
            && self.outside_predecessor(e).is_none_or(done)
    }

    /// The next event to replay, when each thread has run its first `ran` places: the next
    /// event of a thread (not a hole) whose event of another thread (the write it reads from,
    /// the spawn, the exit it joins) has run, the earliest added first. With `future_reads`,
    /// when there is none, a read whose write has not run (a cycle of program order and
    /// reads-from: it is given the bytes the write wrote, where it wrote any).
    pub fn next_to_replay(&self, ran: &[u32], future_reads: bool) -> Option<EventId> {
        let next = |t: usize| {
            let index = ran.get(t).copied().unwrap_or(0);
            let ev = self.threads[t].get(index as usize)?;
            (!ev.hole).then_some((
                ev.stamp,
                EventId {
                    thread: t as u32,
                    index,
                },
            ))
        };
        let candidates = || (0..self.threads.len()).filter_map(next);
        let ready = |&(_, e): &(u32, EventId)| self.runs_next(e, ran);
        // (the earliest added is most often ready, as events are added after what they depend
        // on, but for reads a revisit gave a later write)
        candidates()
            .min()
            .filter(ready)
            .or_else(|| candidates().filter(ready).min())
            .or_else(|| {
                // (only a write whose bytes are known: one that never ran — a store-conditional
                // that failed where it revisited — is waited for, its thread extended first)
                let known = |&(_, e): &(u32, EventId)| {
                    self.label(e).reads()
                        && (self.label(e).rf().flatten())
                            .is_none_or(|w| self.label(w).written().is_some_and(|b| !b.is_empty()))
                };
                future_reads
                    .then(|| candidates().filter(known).min())
                    .flatten()
            })
            .map(|(_, e)| e)
    }
}

/// [`Graph::events_at`]: a loop of its own, as it is on the engine's hot paths (each write
/// looks for the reads it may revisit through it).
pub struct EventsAt<'a> {
    threads: &'a [Arc<Vec<GraphEvent>>],
    addr: u64,
    /// The threads that accessed `addr` (bit 63: every thread from 63 on).
    touched: u64,
    /// Where the search goes on.
    at: EventId,
}

impl Iterator for EventsAt<'_> {
    type Item = EventId;

    fn next(&mut self) -> Option<EventId> {
        while let Some(evs) = self.threads.get(self.at.thread as usize) {
            let t = self.at.thread;
            if t < 63 && self.touched & (1 << t) == 0 {
                self.at = EventId {
                    thread: t + 1,
                    index: 0,
                };
                continue;
            }
            for (ev, index) in evs[self.at.index as usize..].iter().zip(self.at.index..) {
                if !ev.hole && ev.label.location() == Some(self.addr) {
                    self.at.index = index + 1;
                    return Some(EventId { thread: t, index });
                }
            }
            self.at = EventId {
                thread: t + 1,
                index: 0,
            };
        }
        None
    }
}

/// A copy of `events` with room for `len` of them and some more.
fn with_room(events: &[GraphEvent], len: usize) -> Vec<GraphEvent> {
    let mut copy = Vec::with_capacity(len.max(events.len()) + 8);
    copy.extend_from_slice(events);
    copy
}

/// A thread ends with its last event, not with holes.
fn trim_holes(evs: &mut Vec<GraphEvent>) {
    while evs.last().is_some_and(|ev| ev.hole) {
        evs.pop();
    }
}

/// The graph's events numbered densely (for relations over all of them): `offset[t] + index`.
pub struct Numbering {
    pub offset: Vec<usize>,
    pub total: usize,
}

impl Numbering {
    pub fn new(g: &Graph) -> Numbering {
        let mut offset = Vec::with_capacity(g.threads.len());
        let mut total = 0;
        for evs in &g.threads {
            offset.push(total);
            total += evs.len();
        }
        Numbering { offset, total }
    }

    pub fn of(&self, e: EventId) -> usize {
        self.offset[e.thread as usize] + e.index as usize
    }
}

/// A relation over a graph's events, as a list of edges, checked for cycles.
pub struct Relation {
    n: usize,
    edges: Vec<(u32, u32)>,
}

impl Relation {
    pub fn new(n: usize) -> Relation {
        Relation {
            n,
            edges: Vec::new(),
        }
    }

    pub fn add(&mut self, from: usize, to: usize) {
        self.edges.push((from as u32, to as u32));
    }

    /// The nodes from which a path leads to `target` (not `target` itself, unless on a
    /// cycle).
    pub fn reaching(&self, target: usize) -> Vec<bool> {
        let mut into: Vec<Vec<u32>> = vec![Vec::new(); self.n];
        for &(a, b) in &self.edges {
            into[b as usize].push(a);
        }
        let mut seen = vec![false; self.n];
        let mut work = vec![target as u32];
        while let Some(b) = work.pop() {
            for &a in &into[b as usize] {
                if !seen[a as usize] {
                    seen[a as usize] = true;
                    work.push(a);
                }
            }
        }
        seen
    }

    /// Kahn's algorithm, over the edges grouped by their source (a counting sort): is there
    /// no cycle?
    pub fn acyclic(self) -> bool {
        let n = self.n;
        // first[a]..first[a + 1]: the targets of a's edges, once placed
        let mut first = vec![0u32; n + 1];
        let mut indegree = vec![0u32; n];
        for &(a, b) in &self.edges {
            first[a as usize] += 1;
            indegree[b as usize] += 1;
        }
        let mut end = 0;
        for f in first.iter_mut() {
            end += *f;
            *f = end;
        }
        let mut targets = vec![0u32; self.edges.len()];
        for &(a, b) in &self.edges {
            first[a as usize] -= 1;
            targets[first[a as usize] as usize] = b;
        }
        let mut ready: Vec<u32> = (0..n as u32)
            .filter(|&a| indegree[a as usize] == 0)
            .collect();
        let mut seen = 0;
        while let Some(a) = ready.pop() {
            seen += 1;
            let edges = first[a as usize] as usize..first[a as usize + 1] as usize;
            for &b in &targets[edges] {
                indegree[b as usize] -= 1;
                if indegree[b as usize] == 0 {
                    ready.push(b);
                }
            }
        }
        seen == n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(addr: u64, rf: Option<EventId>) -> Label {
        Label::Read { addr, size: 4, rf }
    }

    fn write(addr: u64) -> Label {
        Label::Write {
            addr,
            size: 4,
            bytes: smallvec::smallvec![1, 0, 0, 0],
        }
    }

    fn id(thread: u32, index: u32) -> EventId {
        EventId { thread, index }
    }

    /// Load buffering: each thread reads, then writes what the other reads.
    fn load_buffering() -> Graph {
        let mut g = Graph::default();
        let (t0, t1) = (g.add_thread(None), g.add_thread(Some(id(0, 0))));
        g.push(t0, read(0x10, Some(id(1, 1))), 0, 0);
        g.push(t0, write(0x20), 0, 0);
        g.push(t1, read(0x20, Some(id(0, 1))), 0, 0);
        g.push(t1, write(0x10), 0, 0);
        g.place(id(0, 1), 0);
        g.place(id(1, 1), 0);
        g
    }

    /// A set of events built by single places and first places, in any order, holds what
    /// a plain set of them holds, and its extent per thread is one past its last place.
    #[test]
    fn prefixes_hold_what_was_inserted() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u32| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as u32
        };
        for _ in 0..500 {
            let mut prefix = Prefix::default();
            let mut set = std::collections::BTreeSet::new();
            for _ in 0..next(12) {
                let (thread, index) = (next(3), next(10));
                if next(3) == 0 {
                    prefix.insert_first(thread, index);
                    set.extend((0..index).map(|i| id(thread, i)));
                } else {
                    assert_eq!(
                        prefix.insert(id(thread, index)),
                        set.insert(id(thread, index))
                    );
                }
            }
            for thread in 0..3 {
                for index in 0..12 {
                    let e = id(thread, index);
                    assert_eq!(prefix.contains(e), set.contains(&e), "{e:?} in {prefix:?}");
                }
                let last = set
                    .iter()
                    .filter(|e| e.thread == thread)
                    .map(|e| e.index + 1);
                assert_eq!(
                    prefix.extent(thread as usize),
                    last.max().unwrap_or(0) as usize
                );
            }
        }
    }

    #[test]
    fn a_kept_event_after_a_dropped_one_leaves_a_hole() {
        let g = load_buffering();
        let mut keep = Prefix::default();
        keep.insert(id(0, 1));
        keep.insert(id(1, 0));
        keep.insert(id(1, 1));
        let mut g = g.restricted(&keep);
        assert!(g.event(id(0, 0)).hole);
        assert_eq!(
            g.events().collect::<Vec<_>>(),
            [id(0, 1), id(1, 0), id(1, 1)]
        );
        assert_eq!(g.len(), 3);
        // the thread stops at its hole; the other thread's read of the write after the hole
        // comes first only where reads may come before their writes
        assert_eq!(g.next_to_replay(&[0, 0], false), None);
        assert_eq!(g.next_to_replay(&[0, 0], true), Some(id(1, 0)));
        // the hole filled, the kept write follows it
        let e = g.add_at(id(0, 0), read(0x10, None), 0, 0);
        assert!(!g.event(e).hole && g.event(e).stamp > g.event(id(0, 1)).stamp);
        assert_eq!(g.next_to_replay(&[0, 0], false), Some(id(0, 0)));
        // taken out again: a hole before a kept event, the end of a thread otherwise
        g.remove(e);
        assert!(g.event(id(0, 0)).hole);
        g.remove(id(1, 1));
        assert_eq!(g.threads[1].len(), 1);
    }

    #[test]
    fn a_prefix_follows_reads_from_and_what_each_thread_says() {
        let g = load_buffering();
        // program order: the porf-prefix of a write holds the whole cycle
        let porf = g.prefix(id(1, 1), &|_, e, out| {
            out.extend((0..e.index).map(|i| id(e.thread, i)))
        });
        assert!(porf.contains(id(0, 0)) && porf.contains(id(0, 1)));
        assert_eq!(porf, g.porf_prefix(id(1, 1)));
        // no dependency within threads: only the write itself
        let none = g.prefix(id(1, 1), &|_, _, _| {});
        assert_eq!(g.events().filter(|&e| none.contains(e)).count(), 1);
    }
}
