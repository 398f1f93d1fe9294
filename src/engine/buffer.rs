//! Store buffers of TSO and PSO, kept by the engine: what each thread has stored but not yet
//! written to memory, which entry can reach memory next, and what a load sees of them.
//!
//! Under TSO a thread has one FIFO buffer and one updater; under PSO each location (the start
//! address of a store) has its own updater, and an entry can reach memory once no older entry of
//! the same thread overlaps it and no older `sfence` epoch is still buffered.

use smallvec::SmallVec;

use crate::event::{StoreBytes, ThreadId, MAX_ACCESS};
use crate::model::BufferKind;

#[derive(Clone, Debug)]
pub struct Entry {
    /// The thread whose buffer holds it.
    pub owner: ThreadId,
    pub addr: u64,
    pub bytes: StoreBytes,
    /// Trace position of the store that made it.
    pub store: usize,
    /// Latest load of the owner that read from this entry by forwarding.
    pub forwarded_to: Option<usize>,
    /// sfence epoch (PSO): entries of a later epoch wait for all earlier ones.
    pub epoch: u32,
}

impl Entry {
    fn end(&self) -> u64 {
        self.addr + self.bytes.len() as u64
    }
    fn overlaps(&self, addr: u64, size: u64) -> bool {
        self.addr < addr + size && addr < self.end()
    }
}

/// The key of an updater: 0 under TSO, the location under PSO.
pub type UpdaterKey = u64;

/// Entries that may reach memory next: (owner, updater key, entry). A few at a time.
pub type Ready<'a> = SmallVec<[(ThreadId, UpdaterKey, &'a Entry); 4]>;

/// Past this many entries, PSO's readiness check looks older entries up in a
/// map instead of scanning them.
const SCAN_LIMIT: usize = 16;

#[derive(Default)]
pub struct Buffers {
    kind: Option<BufferKind>,
    bound: Option<usize>,
    /// The entries of all threads, oldest first (a thread's buffer is its own entries in this
    /// order): one vector, so that copying the buffers into a checkpoint reuses its allocation.
    entries: Vec<Entry>,
    /// sfence epoch of each thread (PSO), indexed by thread id.
    epochs: Vec<u32>,
    /// An entry was added or removed, or an epoch ended, since [`Buffers::take_changed`].
    changed: bool,
}

/// Checkpoints copy the buffers into retired states: `clone_from` keeps their allocations.
impl Clone for Buffers {
    fn clone(&self) -> Self {
        let mut b = Buffers::default();
        b.clone_from(self);
        b
    }

    fn clone_from(&mut self, o: &Self) {
        self.kind = o.kind;
        self.bound = o.bound;
        self.entries.clone_from(&o.entries);
        self.epochs.clone_from(&o.epochs);
        self.changed = o.changed;
    }
}

/// What a load sees of its own thread's buffer: for each byte, the entry (index among all
/// entries) that supplies it, if any.
pub struct Forwarding {
    pub mask: u64,
    pub bytes: [u8; MAX_ACCESS],
    pub sources: SmallVec<[usize; 4]>,
}

impl Buffers {
    pub fn new(kind: BufferKind, bound: Option<usize>) -> Buffers {
        Buffers {
            kind: Some(kind),
            bound,
            ..Buffers::default()
        }
    }

    fn of(&self, t: ThreadId) -> impl DoubleEndedIterator<Item = (usize, &Entry)> + '_ {
        self.entries
            .iter()
            .enumerate()
            .filter(move |(_, e)| e.owner == t)
    }

    pub fn is_empty(&self, t: ThreadId) -> bool {
        self.of(t).next().is_none()
    }

    /// Does `t`'s buffer hold a store into the `len` bytes at `addr`?
    pub fn holds(&self, t: ThreadId, addr: u64, len: u64) -> bool {
        self.of(t)
            .any(|(_, e)| e.addr < addr.saturating_add(len) && addr < e.addr + e.bytes.len() as u64)
    }

    /// Can `t` buffer one more store at `addr`?
    pub fn has_room(&self, t: ThreadId, addr: u64) -> bool {
        let Some(bound) = self.bound else { return true };
        let used = match self.kind {
            Some(BufferKind::PerLocation) => self.of(t).filter(|(_, e)| e.addr == addr).count(),
            _ => self.of(t).count(),
        };
        used < bound
    }

    /// Whether the entries that may reach memory next can differ from when this was last
    /// asked (then they are computed again).
    pub fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    pub fn push(&mut self, t: ThreadId, addr: u64, bytes: StoreBytes, store: usize) {
        self.changed = true;
        let epoch = self.epochs.get(t.index()).copied().unwrap_or(0);
        self.entries.push(Entry {
            owner: t,
            addr,
            bytes,
            store,
            forwarded_to: None,
            epoch,
        });
    }

    /// `sfence` under PSO: later stores wait for the ones buffered now.
    pub fn store_fence(&mut self, t: ThreadId) {
        self.changed = true;
        if self.epochs.len() <= t.index() {
            self.epochs.resize(t.index() + 1, 0);
        }
        self.epochs[t.index()] += 1;
    }

    /// The entries that may reach memory now, by owner (in thread id order), each owner's in
    /// buffer order.
    pub fn ready(&self) -> Ready<'_> {
        let mut ready = Ready::new();
        if self.kind == Some(BufferKind::PerLocation) {
            if self.entries.len() > SCAN_LIMIT {
                return self.ready_per_location_by_map();
            }
            // the oldest entry of each location of the first sfence epoch, unless an older
            // entry overlaps it
            for (i, e) in self.entries.iter().enumerate() {
                let mut older = self.entries[..i]
                    .iter()
                    .filter(|o| o.owner == e.owner)
                    .peekable();
                if older.peek().is_some_and(|first| first.epoch != e.epoch) {
                    continue;
                }
                if !older.any(|o| o.overlaps(e.addr, e.bytes.len() as u64)) {
                    ready.push((e.owner, e.addr, e));
                }
            }
        } else {
            // the oldest entry of each thread
            let mut seen: SmallVec<[ThreadId; 8]> = SmallVec::new();
            for e in &self.entries {
                if !seen.contains(&e.owner) {
                    seen.push(e.owner);
                    ready.push((e.owner, 0, e));
                }
            }
        }
        ready.sort_by_key(|(t, _, _)| *t);
        ready
    }

    /// [`Buffers::ready`] under PSO for long buffers: older entries looked up by start address
    /// (an access spans at most MAX_ACCESS bytes).
    fn ready_per_location_by_map(&self) -> Ready<'_> {
        let mut owners: Vec<ThreadId> = self.entries.iter().map(|e| e.owner).collect();
        owners.sort_unstable();
        owners.dedup();
        let mut ready = Ready::new();
        for t in owners {
            let first_epoch = self.of(t).next().map_or(0, |(_, e)| e.epoch);
            let mut older: std::collections::BTreeMap<u64, u64> = std::collections::BTreeMap::new();
            for (_, e) in self.of(t).take_while(|(_, e)| e.epoch == first_epoch) {
                let lo = e.addr.saturating_sub(MAX_ACCESS as u64 - 1);
                let blocked = older.range(lo..e.end()).any(|(_, &end)| e.addr < end);
                if !blocked {
                    ready.push((t, e.addr, e));
                }
                let end = older.entry(e.addr).or_insert(0);
                *end = (*end).max(e.end());
            }
        }
        ready
    }

    /// Remove the entry the updater `key` of `t` writes next.
    pub fn take(&mut self, t: ThreadId, key: UpdaterKey) -> Option<Entry> {
        let i = match self.kind {
            Some(BufferKind::PerLocation) => self.of(t).find(|(_, e)| e.addr == key)?.0,
            _ => self.of(t).next()?.0,
        };
        self.changed = true;
        Some(self.entries.remove(i))
    }

    /// What a load of `size` bytes at `addr` by `t` sees of its buffer: the newest entry for
    /// each byte. None when it sees none (asked of every event: answered without building one).
    pub fn forwarding(&self, t: ThreadId, addr: u64, size: u64) -> Option<Forwarding> {
        if !self.of(t).any(|(_, e)| e.overlaps(addr, size)) {
            return None;
        }
        let mut f = Forwarding {
            mask: 0,
            bytes: [0; MAX_ACCESS],
            sources: SmallVec::new(),
        };
        for i in 0..size.min(MAX_ACCESS as u64) {
            let b = addr + i;
            if let Some((n, e)) = self.of(t).rev().find(|(_, e)| e.overlaps(b, 1)) {
                f.mask |= 1 << i;
                f.bytes[i as usize] = e.bytes[(b - e.addr) as usize];
                if !f.sources.contains(&n) {
                    f.sources.push(n);
                }
            }
        }
        (f.mask != 0).then_some(f)
    }

    /// Remember that `load` read from these entries ([`Forwarding::sources`]).
    pub fn forwarded(&mut self, sources: &[usize], load: usize) {
        for &n in sources {
            if let Some(e) = self.entries.get_mut(n) {
                e.forwarded_to = Some(load);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: ThreadId = ThreadId(1);

    #[test]
    fn forwarding_is_byte_exact_and_newest_wins() {
        let mut b = Buffers::new(BufferKind::Fifo, None);
        b.push(P, 0x100, smallvec::smallvec![1, 2, 3, 4], 0);
        b.push(P, 0x102, smallvec::smallvec![9], 1);
        let f = b.forwarding(P, 0x100, 8).unwrap();
        assert_eq!(f.mask, 0b1111);
        assert_eq!(&f.bytes[..4], &[1, 2, 9, 4]);
        assert_eq!(f.sources[..], [0, 1]);
        // a load that only partly overlaps reads the rest from memory
        let f = b.forwarding(P, 0x0fe, 4).unwrap();
        assert_eq!((f.mask, &f.bytes[2..4]), (0b1100, &[1u8, 2][..]));
        // nothing of another thread's buffer, nor of other addresses
        assert!(b.forwarding(ThreadId(2), 0x100, 8).is_none());
        assert!(b.forwarding(P, 0x104, 8).is_none());
        assert!(b.forwarding(P, 0x0f8, 8).is_none());
    }

    #[test]
    fn tso_drains_in_order_and_pso_per_location() {
        let mut tso = Buffers::new(BufferKind::Fifo, None);
        tso.push(P, 0x100, smallvec::smallvec![1; 4], 0);
        tso.push(P, 0x200, smallvec::smallvec![2; 4], 1);
        assert_eq!(
            tso.ready()
                .iter()
                .map(|(_, k, e)| (*k, e.addr))
                .collect::<Vec<_>>(),
            vec![(0, 0x100)]
        );
        let mut pso = Buffers::new(BufferKind::PerLocation, None);
        pso.push(P, 0x100, smallvec::smallvec![1; 4], 0);
        pso.push(P, 0x200, smallvec::smallvec![2; 4], 1);
        pso.push(P, 0x102, smallvec::smallvec![3; 4], 2); // overlaps the first: must wait for it
        let ready: Vec<u64> = pso.ready().iter().map(|(_, k, _)| *k).collect();
        assert_eq!(ready, vec![0x100, 0x200]);
        assert_eq!(pso.take(P, 0x200).unwrap().bytes[..], [2; 4]);
        pso.store_fence(P);
        pso.push(P, 0x300, smallvec::smallvec![4; 4], 3);
        assert!(
            !pso.ready().iter().any(|(_, k, _)| *k == 0x300),
            "waits for the sfence"
        );
    }

    /// The scan of short PSO buffers and the lookup by address of long ones agree.
    #[test]
    fn pso_readiness_by_scan_and_by_map_agree() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let key = |r: &Ready| {
            r.iter()
                .map(|(t, k, e)| (*t, *k, e.store))
                .collect::<Vec<_>>()
        };
        for _ in 0..500 {
            let mut b = Buffers::new(BufferKind::PerLocation, None);
            for store in 0..1 + next(SCAN_LIMIT as u64) as usize {
                let t = ThreadId(1 + next(3) as u32);
                if next(8) == 0 {
                    b.store_fence(t);
                }
                let size = 1 << next(4);
                let addr = 0x100 + next(24);
                b.push(t, addr, smallvec::smallvec![0; size], store);
            }
            assert!(b.entries.len() <= SCAN_LIMIT);
            let (scan, map) = (b.ready(), b.ready_per_location_by_map());
            assert_eq!(key(&scan), key(&map));
            assert!(!scan.is_empty());
        }
    }

    #[test]
    fn bound_limits_pending_stores() {
        let mut b = Buffers::new(BufferKind::Fifo, Some(1));
        assert!(b.has_room(P, 0x100));
        b.push(P, 0x100, smallvec::smallvec![1], 0);
        assert!(!b.has_room(P, 0x200));
        b.take(P, 0);
        assert!(b.has_room(P, 0x200));
    }
}
