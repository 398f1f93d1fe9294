//! The graph engine's locations: pieces of memory. The engine takes an event as reading or
//! writing one location as a whole, but a program accesses the same memory in several sizes
//! (a 16-byte copy of two 8-byte fields, a byte of a word, Rust's std moving a struct whose
//! fields its threads read one by one). So memory is cut into pieces where accesses begin and
//! end, and an access that spans several pieces is one event per piece (in address order):
//! each piece reads from its own write, as the bytes of a copy may come from different stores.
//! Each piece is atomic, the whole access is not (x86 makes no access wider than 8 bytes
//! atomic; an aligned one of 8 bytes or less that others access in parts loses its atomicity
//! here, which can only add behaviours: a possible false alarm, never a missed error).
//!
//! The pieces are learnt as the program runs. An access that begins or ends inside a known
//! piece cuts it: the exploration so far took that piece whole, so it starts again with the
//! finer pieces (they only get finer, so it ends).

use std::collections::BTreeMap;

/// A piece: its address and size.
pub(super) type Piece = (u64, u32);

/// The pieces of an access, in address order.
pub(super) type Split = smallvec::SmallVec<[Piece; 2]>;

/// The pieces known: their sizes by address, disjoint.
#[derive(Clone, Default, Debug)]
pub struct Pieces(BTreeMap<u64, u32>);

impl Pieces {
    /// The pieces of `[addr, addr + size)` if it is made of known pieces only.
    pub(super) fn known(&self, addr: u64, size: u32) -> Option<Split> {
        let end = addr + size as u64;
        let mut split = Split::new();
        let mut at = addr;
        while at < end {
            let &s = self.0.get(&at)?;
            split.push((at, s));
            at += s as u64;
        }
        (at == end).then_some(split)
    }

    /// Takes in an access: its pieces, and whether a known piece had to be cut for it.
    pub(super) fn add(&mut self, addr: u64, size: u32) -> (Split, bool) {
        let end = addr + size as u64;
        let cut = self.cut(addr) | self.cut(end);
        let mut split = Split::new();
        let mut at = addr;
        let inside: Split = self.0.range(addr..end).map(|(&a, &s)| (a, s)).collect();
        for (a, s) in inside {
            if a > at {
                // (memory no access touched yet between known pieces: a piece of its own)
                self.0.insert(at, (a - at) as u32);
                split.push((at, (a - at) as u32));
            }
            split.push((a, s));
            at = a + s as u64;
        }
        if at < end {
            self.0.insert(at, (end - at) as u32);
            split.push((at, (end - at) as u32));
        }
        (split, cut)
    }

    /// Cuts the piece `at` falls strictly inside, if any.
    fn cut(&mut self, at: u64) -> bool {
        let Some((&a, &s)) = self.0.range(..at).next_back() else {
            return false;
        };
        let end = a + s as u64;
        if end <= at {
            return false;
        }
        self.0.insert(a, (at - a) as u32);
        self.0.insert(at, (end - at) as u32);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(pieces: &[Piece]) -> Split {
        Split::from_slice(pieces)
    }

    #[test]
    fn accesses_are_cut_where_others_begin_and_end() {
        let mut p = Pieces::default();
        assert_eq!(p.add(0x100, 8), (s(&[(0x100, 8)]), false));
        assert_eq!(p.known(0x100, 8), Some(s(&[(0x100, 8)])));
        // a wider access over it and memory no one touched: no cut, two pieces
        assert_eq!(p.add(0x100, 16), (s(&[(0x100, 8), (0x108, 8)]), false));
        assert_eq!(p.known(0x100, 16), Some(s(&[(0x100, 8), (0x108, 8)])));
        // a byte inside a known piece cuts it
        assert_eq!(p.add(0x10a, 1), (s(&[(0x10a, 1)]), true));
        assert_eq!(
            p.known(0x108, 8),
            Some(s(&[(0x108, 2), (0x10a, 1), (0x10b, 5)]))
        );
        assert_eq!(p.known(0x104, 4), None);
        // across a gap between known pieces
        p.add(0x200, 4);
        assert_eq!(
            p.add(0x1fc, 12),
            (s(&[(0x1fc, 4), (0x200, 4), (0x204, 4)]), false)
        );
    }
}
