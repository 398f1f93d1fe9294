//! Execution graphs: per thread its events in program order, per read the write it reads from
//! (rf), per location the coherence order of its writes (co). The graph engine
//! (`engine::trust`) builds them; the memory models (`model/`) decide which are consistent.
//!
//! Every thread's events form a prefix of what the thread does, so a set of events closed
//! under program order is one length per thread (a [`Prefix`]).

use std::collections::BTreeMap;

use crate::event::StoreBytes;

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
    /// POWER's `eieio`.
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
    pub deps: Dependencies,
}

/// An event's dependencies on earlier reads of its thread (herd's `addr`, `data`, `ctrl`,
/// `ctrlisync`; `decode::SiteDependencies` says how they are found).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dependencies {
    pub addr: Vec<EventId>,
    pub data: Vec<EventId>,
    pub ctrl: Vec<EventId>,
    pub ctrlisync: Vec<EventId>,
}

/// A set of events closed under program order: how many events of each thread it holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Prefix(pub Vec<u32>);

impl Prefix {
    pub fn contains(&self, e: EventId) -> bool {
        self.0.get(e.thread as usize).is_some_and(|&n| e.index < n)
    }

    fn insert(&mut self, e: EventId) -> bool {
        let t = e.thread as usize;
        if self.0.len() <= t {
            self.0.resize(t + 1, 0);
        }
        if self.0[t] > e.index {
            return false;
        }
        self.0[t] = e.index + 1;
        true
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Graph {
    pub threads: Vec<Vec<GraphEvent>>,
    /// Per thread, the spawn that created it (`None` for the first thread).
    pub parents: Vec<Option<EventId>>,
    /// Per location, its writes in coherence order (after the initial value). A write not yet
    /// placed is in no list.
    pub co: BTreeMap<u64, Vec<EventId>>,
    pub next_stamp: u32,
}

impl Graph {
    pub fn event(&self, e: EventId) -> &GraphEvent {
        &self.threads[e.thread as usize][e.index as usize]
    }

    pub fn label(&self, e: EventId) -> &Label {
        &self.event(e).label
    }

    pub fn label_mut(&mut self, e: EventId) -> &mut Label {
        &mut self.threads[e.thread as usize][e.index as usize].label
    }

    pub fn len(&self) -> usize {
        self.threads.iter().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every event, thread by thread in program order.
    pub fn events(&self) -> impl Iterator<Item = EventId> + '_ {
        self.threads.iter().enumerate().flat_map(|(t, evs)| {
            (0..evs.len()).map(move |i| EventId {
                thread: t as u32,
                index: i as u32,
            })
        })
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
        self.threads.push(Vec::new());
        self.parents.push(parent);
        (self.threads.len() - 1) as u32
    }

    /// Appends an event to `thread`'s program order.
    pub fn push(&mut self, thread: u32, label: Label, pc: u64, hash: u64) -> EventId {
        let evs = &mut self.threads[thread as usize];
        let id = EventId {
            thread,
            index: evs.len() as u32,
        };
        evs.push(GraphEvent {
            label,
            stamp: self.next_stamp,
            pc,
            hash,
            deps: Dependencies::default(),
        });
        self.next_stamp += 1;
        id
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
        let mut prefix = Prefix(vec![0; self.threads.len()]);
        let mut todo = vec![e];
        while let Some(e) = todo.pop() {
            let from = prefix.0[e.thread as usize];
            if !prefix.insert(e) {
                continue;
            }
            // the events newly in the prefix: what each depends on from outside its thread
            for index in from..=e.index {
                let here = EventId {
                    thread: e.thread,
                    index,
                };
                todo.extend(self.outside_predecessor(here));
            }
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

    /// The graph cut down to the events in `keep` (a prefix per thread), coherence order
    /// included.
    pub fn restrict(&mut self, keep: &Prefix) {
        for (t, evs) in self.threads.iter_mut().enumerate() {
            evs.truncate(keep.0.get(t).copied().unwrap_or(0) as usize);
        }
        for list in self.co.values_mut() {
            list.retain(|w| keep.contains(*w));
        }
        self.co.retain(|_, list| !list.is_empty());
        // a thread whose spawn is gone has no events left (they came after it) and stays as
        // an empty entry, which the spawn takes again when it comes back
    }

    /// The events in an order that respects program order, reads-from, creation and joins
    /// (for replaying the graph), earliest stamp first where there is a choice. `None` when
    /// those relations have a cycle.
    pub fn replay_order(&self) -> Option<Vec<EventId>> {
        let mut done = Prefix(vec![0; self.threads.len()]);
        let mut order = Vec::with_capacity(self.len());
        let total = self.len();
        while order.len() < total {
            let next = (0..self.threads.len())
                .filter_map(|t| {
                    let index = done.0[t];
                    let e = EventId {
                        thread: t as u32,
                        index,
                    };
                    let ev = self.threads[t].get(index as usize)?;
                    let ready = self.outside_predecessor(e).is_none_or(|p| done.contains(p));
                    ready.then_some((ev.stamp, e))
                })
                .min()?;
            done.insert(next.1);
            order.push(next.1);
        }
        Some(order)
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

/// A relation over a graph's events, as adjacency lists, checked for cycles.
pub struct Relation {
    succ: Vec<Vec<u32>>,
}

impl Relation {
    pub fn new(n: usize) -> Relation {
        Relation {
            succ: vec![Vec::new(); n],
        }
    }

    pub fn add(&mut self, from: usize, to: usize) {
        self.succ[from].push(to as u32);
    }

    /// Kahn's algorithm: is there no cycle?
    pub fn acyclic(&self) -> bool {
        let n = self.succ.len();
        let mut indegree = vec![0u32; n];
        for s in &self.succ {
            for &t in s {
                indegree[t as usize] += 1;
            }
        }
        let mut ready: Vec<usize> = (0..n).filter(|&i| indegree[i] == 0).collect();
        let mut seen = 0;
        while let Some(i) = ready.pop() {
            seen += 1;
            for &t in &self.succ[i] {
                indegree[t as usize] -= 1;
                if indegree[t as usize] == 0 {
                    ready.push(t as usize);
                }
            }
        }
        seen == n
    }
}
