//! What the explorer remembers of memory: per 8-byte word, each byte's last write and each
//! thread's latest read, from which an access's happens-before links and races are found.

use smallvec::SmallVec;

use crate::event::ThreadId;

/// The histories of the 8 bytes of an aligned word, kept together so that an access looks up
/// each word it touches once, not each byte: per byte its last write, and the latest read of
/// each thread.
#[derive(Default)]
pub(super) struct WordHistory {
    /// Per byte: the position of its last write + 1 (0: none).
    pub(super) last_write: [u32; 8],
    /// Reads with the bytes of this word for which each is its thread's latest (a later
    /// write is ordered after those of other owners); inline for a few threads: checkpoints
    /// clone every word's history.
    pub(super) reads: SmallVec<[WordRead; 4]>,
}

/// A read in a [`WordHistory`], with its thread (so that its trace entry, far away in memory,
/// need not be looked at).
#[derive(Clone, Copy)]
pub(super) struct WordRead {
    pub(super) pos: u32,
    pub(super) thread: ThreadId,
    /// Bit i: byte i of the word.
    pub(super) mask: u8,
}

impl Clone for WordHistory {
    /// Element by element: a few, and a slice copy would be a call to memcpy.
    fn clone(&self) -> Self {
        WordHistory {
            last_write: self.last_write,
            reads: self.reads.iter().copied().collect(),
        }
    }
}

impl WordHistory {
    /// The read at `pos` of the bytes in `mask` by `thread`: the latest of that thread for them.
    pub(super) fn read(&mut self, pos: usize, mask: u8, thread: ThreadId) {
        self.reads.retain(|r| {
            if r.thread == thread {
                r.mask &= !mask;
            }
            r.mask != 0
        });
        self.reads.push(WordRead {
            pos: pos as u32,
            thread,
            mask,
        });
    }

    pub(super) fn write(&mut self, pos: usize, mask: u8) {
        for (i, w) in self.last_write.iter_mut().enumerate() {
            if mask >> i & 1 != 0 {
                *w = pos as u32 + 1;
            }
        }
    }
}

/// The words (address / 8) that `size` bytes at `addr` touch, each with the mask of its bytes
/// among them, but for those `skip` names (bit i: byte `addr + i`).
pub(super) fn word_masks(addr: u64, size: u32, skip: u64) -> impl Iterator<Item = (u64, u8)> {
    let end = addr + size as u64;
    (addr >> 3..=(end.max(addr + 1) - 1) >> 3).filter_map(move |w| {
        let mut mask = 0u8;
        for b in (w << 3).max(addr)..((w << 3) + 8).min(end) {
            let i = b - addr;
            if i >= 64 || skip >> i & 1 == 0 {
                mask |= 1 << (b & 7);
            }
        }
        (mask != 0).then_some((w, mask))
    })
}
