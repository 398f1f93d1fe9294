//! Store buffers of TSO and PSO, kept by the engine: what each thread has stored but not yet
//! written to memory, which entry can reach memory next, and what a load sees of them.
//!
//! Under TSO a thread has one FIFO buffer and one updater; under PSO each location (the start
//! address of a store) has its own updater, and an entry can reach memory once no older entry of
//! the same thread overlaps it and no older `sfence` epoch is still buffered.

use std::collections::VecDeque;

use crate::event::{ThreadId, MAX_ACCESS};
use crate::model::BufferKind;

#[derive(Clone, Debug)]
pub struct Entry {
    pub addr: u64,
    pub bytes: Vec<u8>,
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

#[derive(Default, Clone)]
pub struct Buffers {
    kind: Option<BufferKind>,
    bound: Option<usize>,
    /// Indexed by thread id.
    entries: Vec<VecDeque<Entry>>,
    epochs: Vec<u32>,
}

/// What a load sees of its own thread's buffer: for each byte, the entry (index in the buffer)
/// that supplies it, if any.
pub struct Forwarding {
    pub mask: u64,
    pub bytes: [u8; MAX_ACCESS],
    pub sources: Vec<usize>,
}

impl Buffers {
    pub fn new(kind: BufferKind, bound: Option<usize>) -> Buffers {
        Buffers {
            kind: Some(kind),
            bound,
            ..Buffers::default()
        }
    }

    fn of(&mut self, t: ThreadId) -> &mut VecDeque<Entry> {
        if self.entries.len() <= t.index() {
            self.entries.resize_with(t.index() + 1, VecDeque::new);
            self.epochs.resize(t.index() + 1, 0);
        }
        &mut self.entries[t.index()]
    }

    fn get(&self, t: ThreadId) -> Option<&VecDeque<Entry>> {
        self.entries.get(t.index())
    }

    pub fn is_empty(&self, t: ThreadId) -> bool {
        self.get(t).is_none_or(|b| b.is_empty())
    }

    /// Can `t` buffer one more store at `addr`?
    pub fn has_room(&self, t: ThreadId, addr: u64) -> bool {
        let Some(bound) = self.bound else { return true };
        let used = match self.kind {
            Some(BufferKind::PerLocation) => self
                .get(t)
                .map_or(0, |b| b.iter().filter(|e| e.addr == addr).count()),
            _ => self.get(t).map_or(0, |b| b.len()),
        };
        used < bound
    }

    pub fn push(&mut self, t: ThreadId, addr: u64, bytes: Vec<u8>, store: usize) {
        let epoch = self.epochs.get(t.index()).copied().unwrap_or(0);
        self.of(t).push_back(Entry {
            addr,
            bytes,
            store,
            forwarded_to: None,
            epoch,
        });
    }

    /// `sfence` under PSO: later stores wait for the ones buffered now.
    pub fn store_fence(&mut self, t: ThreadId) {
        self.of(t);
        self.epochs[t.index()] += 1;
    }

    /// The entries that may reach memory now, with their updater's key.
    pub fn ready(&self, t: ThreadId) -> Vec<(UpdaterKey, &Entry)> {
        let Some(buf) = self.get(t) else {
            return Vec::new();
        };
        match self.kind {
            Some(BufferKind::PerLocation) => {
                // the oldest entry of each location, unless an older entry overlaps it; older
                // entries are looked up by start address (an access spans at most MAX_ACCESS)
                let first_epoch = buf.front().map_or(0, |e| e.epoch);
                let mut older: std::collections::BTreeMap<u64, u64> =
                    std::collections::BTreeMap::new();
                let mut ready = Vec::new();
                for e in buf.iter().take_while(|e| e.epoch == first_epoch) {
                    let lo = e.addr.saturating_sub(MAX_ACCESS as u64 - 1);
                    let blocked = older.range(lo..e.end()).any(|(_, &end)| e.addr < end);
                    if !blocked {
                        ready.push((e.addr, e));
                    }
                    let end = older.entry(e.addr).or_insert(0);
                    *end = (*end).max(e.end());
                }
                ready
            }
            _ => buf.front().map(|e| (0, e)).into_iter().collect(),
        }
    }

    /// Remove the entry the updater `key` of `t` writes next.
    pub fn take(&mut self, t: ThreadId, key: UpdaterKey) -> Option<Entry> {
        let i = match self.kind {
            Some(BufferKind::PerLocation) => self.get(t)?.iter().position(|e| e.addr == key)?,
            _ => 0,
        };
        self.of(t).remove(i)
    }

    /// What a load of `size` bytes at `addr` by `t` sees of its buffer: the newest entry for
    /// each byte.
    pub fn forwarding(&self, t: ThreadId, addr: u64, size: u64) -> Forwarding {
        let mut f = Forwarding {
            mask: 0,
            bytes: [0; MAX_ACCESS],
            sources: Vec::new(),
        };
        let Some(buf) = self.get(t) else { return f };
        for i in 0..size.min(MAX_ACCESS as u64) {
            let b = addr + i;
            if let Some((n, e)) = buf.iter().enumerate().rev().find(|(_, e)| e.overlaps(b, 1)) {
                f.mask |= 1 << i;
                f.bytes[i as usize] = e.bytes[(b - e.addr) as usize];
                if !f.sources.contains(&n) {
                    f.sources.push(n);
                }
            }
        }
        f
    }

    /// Remember that `load` read from these entries of `t`.
    pub fn forwarded(&mut self, t: ThreadId, sources: &[usize], load: usize) {
        let buf = self.of(t);
        for &n in sources {
            if let Some(e) = buf.get_mut(n) {
                e.forwarded_to = Some(load);
            }
        }
    }

    /// Threads with something buffered.
    pub fn owners(&self) -> impl Iterator<Item = ThreadId> + '_ {
        self.entries
            .iter()
            .enumerate()
            .filter(|(_, b)| !b.is_empty())
            .map(|(i, _)| ThreadId(i as u32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: ThreadId = ThreadId(1);

    #[test]
    fn forwarding_is_byte_exact_and_newest_wins() {
        let mut b = Buffers::new(BufferKind::Fifo, None);
        b.push(P, 0x100, vec![1, 2, 3, 4], 0);
        b.push(P, 0x102, vec![9], 1);
        let f = b.forwarding(P, 0x100, 8);
        assert_eq!(f.mask, 0b1111);
        assert_eq!(&f.bytes[..4], &[1, 2, 9, 4]);
        assert_eq!(f.sources, vec![0, 1]);
        // a load that only partly overlaps reads the rest from memory
        let f = b.forwarding(P, 0x0fe, 4);
        assert_eq!((f.mask, &f.bytes[2..4]), (0b1100, &[1u8, 2][..]));
    }

    #[test]
    fn tso_drains_in_order_and_pso_per_location() {
        let mut tso = Buffers::new(BufferKind::Fifo, None);
        tso.push(P, 0x100, vec![1; 4], 0);
        tso.push(P, 0x200, vec![2; 4], 1);
        assert_eq!(
            tso.ready(P)
                .iter()
                .map(|(k, e)| (*k, e.addr))
                .collect::<Vec<_>>(),
            vec![(0, 0x100)]
        );
        let mut pso = Buffers::new(BufferKind::PerLocation, None);
        pso.push(P, 0x100, vec![1; 4], 0);
        pso.push(P, 0x200, vec![2; 4], 1);
        pso.push(P, 0x102, vec![3; 4], 2); // overlaps the first: must wait for it
        let ready: Vec<u64> = pso.ready(P).iter().map(|(k, _)| *k).collect();
        assert_eq!(ready, vec![0x100, 0x200]);
        assert_eq!(pso.take(P, 0x200).unwrap().bytes, vec![2; 4]);
        pso.store_fence(P);
        pso.push(P, 0x300, vec![4; 4], 3);
        assert!(
            !pso.ready(P).iter().any(|(k, _)| *k == 0x300),
            "waits for the sfence"
        );
    }

    #[test]
    fn bound_limits_pending_stores() {
        let mut b = Buffers::new(BufferKind::Fifo, Some(1));
        assert!(b.has_room(P, 0x100));
        b.push(P, 0x100, vec![1], 0);
        assert!(!b.has_room(P, 0x200));
        b.take(P, 0);
        assert!(b.has_room(P, 0x200));
    }
}
