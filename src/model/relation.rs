//! Relations over a graph's events as bit matrices, with the operators of herd's cat files:
//! what an axiomatic model (`power.rs`) is computed with. One flat allocation per relation and
//! word-wide row operations: the POWER model checks every graph the engine builds.

use smallvec::{smallvec, SmallVec};

/// A set of events, a bit per event.
#[derive(Clone, PartialEq, Eq)]
pub(super) struct Set(SmallVec<[u64; 2]>);

impl Set {
    pub fn empty(n: usize) -> Set {
        Set(smallvec![0; words(n)])
    }

    pub fn of(n: usize, member: impl Fn(usize) -> bool) -> Set {
        let mut s = Set::empty(n);
        (0..n).filter(|&i| member(i)).for_each(|i| s.insert(i));
        s
    }

    pub fn insert(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }

    pub fn contains(&self, i: usize) -> bool {
        self.0[i / 64] & (1 << (i % 64)) != 0
    }

    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        bits(&self.0)
    }
}

fn words(n: usize) -> usize {
    n.div_ceil(64).max(1)
}

/// The positions of the set bits of `row`, in order.
fn bits(row: &[u64]) -> impl Iterator<Item = usize> + '_ {
    row.iter().enumerate().flat_map(|(k, &w)| {
        let mut w = w;
        std::iter::from_fn(move || {
            (w != 0).then(|| {
                let b = w.trailing_zeros() as usize;
                w &= w - 1;
                k * 64 + b
            })
        })
    })
}

/// A binary relation over `n` events: row `a` holds the `b` with `a → b`.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(super) struct Rel {
    n: usize,
    words: usize,
    rows: Vec<u64>,
}

impl Rel {
    pub fn empty(n: usize) -> Rel {
        let words = words(n);
        Rel {
            n,
            words,
            rows: vec![0; n * words],
        }
    }

    /// How many events it relates.
    pub fn len(&self) -> usize {
        self.n
    }

    fn row(&self, a: usize) -> &[u64] {
        &self.rows[a * self.words..(a + 1) * self.words]
    }

    fn row_mut(&mut self, a: usize) -> &mut [u64] {
        &mut self.rows[a * self.words..(a + 1) * self.words]
    }

    /// Row `a` |= row `k` of `o` (`o` may be `self`'s copy).
    fn or_row(&mut self, a: usize, o: &Rel, k: usize) {
        let w = self.words;
        let (dst, src) = (a * w, k * w);
        for j in 0..w {
            self.rows[dst + j] |= o.rows[src + j];
        }
    }

    pub fn add(&mut self, a: usize, b: usize) {
        self.rows[a * self.words + b / 64] |= 1 << (b % 64);
    }

    /// `a → b` for every `a` in `from`.
    pub fn add_column(&mut self, from: &Set, b: usize) {
        for a in from.iter() {
            self.add(a, b);
        }
    }

    /// `a → b` for every `b` in `to`.
    pub fn add_row(&mut self, a: usize, to: &Set) {
        self.row_mut(a)
            .iter_mut()
            .zip(&to.0)
            .for_each(|(x, y)| *x |= y);
    }

    pub fn has(&self, a: usize, b: usize) -> bool {
        self.rows[a * self.words + b / 64] & (1 << (b % 64)) != 0
    }

    pub fn succ(&self, a: usize) -> impl Iterator<Item = usize> + '_ {
        bits(self.row(a))
    }

    /// `self |= o`
    pub fn union_with(&mut self, o: &Rel) -> &mut Rel {
        self.rows.iter_mut().zip(&o.rows).for_each(|(x, y)| *x |= y);
        self
    }

    pub fn union(&self, o: &Rel) -> Rel {
        let mut r = self.clone();
        r.union_with(o);
        r
    }

    /// The pairs `a → b` with `keep(a, b)`.
    pub fn filter(&self, keep: impl Fn(usize, usize) -> bool) -> Rel {
        let mut r = Rel::empty(self.n);
        for a in 0..self.n {
            for b in self.succ(a).filter(|&b| keep(a, b)) {
                r.add(a, b);
            }
        }
        r
    }

    /// `self & o`
    pub fn intersect(&self, o: &Rel) -> Rel {
        let mut r = self.clone();
        r.rows.iter_mut().zip(&o.rows).for_each(|(x, y)| *x &= y);
        r
    }

    /// The pairs from `from` to `to` (`[from]; self; [to]`).
    pub fn between(&self, from: &Set, to: &Set) -> Rel {
        let mut r = Rel::empty(self.n);
        for a in from.iter() {
            r.row_mut(a)
                .iter_mut()
                .zip(self.row(a).iter().zip(&to.0))
                .for_each(|(x, (y, t))| *x = y & t);
        }
        r
    }

    /// The pairs `a → b` with `b` in `to(a)` (the same thread, the same location...).
    pub fn within<'s>(&self, to: impl Fn(usize) -> Option<&'s Set>) -> Rel {
        let mut r = Rel::empty(self.n);
        for a in 0..self.n {
            if let Some(to) = to(a) {
                r.row_mut(a)
                    .iter_mut()
                    .zip(self.row(a).iter().zip(&to.0))
                    .for_each(|(x, (y, t))| *x = y & t);
            }
        }
        r
    }

    /// The pairs `a → b` with `b` not in `to(a)`.
    pub fn outside<'s>(&self, to: impl Fn(usize) -> &'s Set) -> Rel {
        let mut r = self.clone();
        for a in 0..self.n {
            let to = to(a);
            r.row_mut(a)
                .iter_mut()
                .zip(&to.0)
                .for_each(|(x, t)| *x &= !t);
        }
        r
    }

    /// The pairs within events `lo..hi`, numbered from 0.
    pub fn block(&self, lo: usize, hi: usize) -> Rel {
        let mut r = Rel::empty(hi - lo);
        for a in lo..hi {
            for b in self.succ(a).filter(|b| (lo..hi).contains(b)) {
                r.add(a - lo, b - lo);
            }
        }
        r
    }

    /// Adds the pairs of `r`, a block numbered from `lo`.
    pub fn add_block(&mut self, lo: usize, r: &Rel) {
        for a in 0..r.n {
            for b in r.succ(a) {
                self.add(a + lo, b + lo);
            }
        }
    }

    /// `self ; o`
    pub fn then(&self, o: &Rel) -> Rel {
        let mut r = Rel::empty(self.n);
        if self.words == 1 {
            // (most graphs: a row is one word)
            for (x, &row) in r.rows.iter_mut().zip(&self.rows) {
                let mut w = row;
                while w != 0 {
                    *x |= o.rows[w.trailing_zeros() as usize];
                    w &= w - 1;
                }
            }
            return r;
        }
        for a in 0..self.n {
            for m in bits(self.row(a)) {
                r.or_row(a, o, m);
            }
        }
        r
    }

    /// `self+` (Warshall's closure, a row at a time)
    pub fn plus(&self) -> Rel {
        let mut r = self.clone();
        let w = self.words;
        if w == 1 {
            for k in 0..self.n {
                let through = r.rows[k];
                if through == 0 {
                    continue;
                }
                // every row reaching k reaches what k reaches (branch-free: it vectorises)
                r.rows
                    .iter_mut()
                    .for_each(|x| *x |= through & 0u64.wrapping_sub(*x >> k & 1));
            }
            return r;
        }
        for k in 0..self.n {
            if r.row(k).iter().all(|&x| x == 0) {
                continue;
            }
            for a in 0..self.n {
                if a != k && r.has(a, k) {
                    for j in 0..w {
                        let v = r.rows[k * w + j];
                        r.rows[a * w + j] |= v;
                    }
                }
            }
        }
        r
    }

    /// `self*`
    pub fn star(&self) -> Rel {
        self.plus().opt()
    }

    /// `self?`
    pub fn opt(&self) -> Rel {
        let mut r = self.clone();
        (0..self.n).for_each(|a| r.add(a, a));
        r
    }

    pub fn irreflexive(&self) -> bool {
        (0..self.n).all(|a| !self.has(a, a))
    }

    pub fn acyclic(&self) -> bool {
        self.plus().irreflexive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The closure, composition and filters against their definitions, on relations of one
    /// word a row and wider.
    #[test]
    fn operators_match_their_definitions() {
        operators_match_at(70);
        operators_match_at(40);
    }

    fn operators_match_at(n: usize) {
        let mut r = Rel::empty(n);
        let mut s = Rel::empty(n);
        let mut seed = 12345u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        for _ in 0..90 {
            r.add(next() % n, next() % n);
            s.add(next() % n, next() % n);
        }
        let then = r.then(&s);
        let plus = r.plus();
        for a in 0..n {
            for b in 0..n {
                let via = (0..n).any(|m| r.has(a, m) && s.has(m, b));
                assert_eq!(then.has(a, b), via, "{a};{b}");
            }
        }
        // plus is transitive, holds r, and each of its pairs is a path of r
        for a in 0..n {
            for m in plus.succ(a) {
                for b in plus.succ(m) {
                    assert!(plus.has(a, b));
                }
            }
        }
        let mut reach = r.clone();
        for _ in 0..n {
            reach = reach.union(&reach.then(&r));
        }
        assert!(reach == plus);
        let odd = Set::of(n, |i| i % 2 == 1);
        let between = r.between(&odd, &odd);
        assert!(between == r.filter(|a, b| a % 2 == 1 && b % 2 == 1));
        let outside = r.outside(|_| &odd);
        assert!(outside == r.filter(|_, b| b % 2 == 0));
        assert_eq!(r.acyclic(), plus.irreflexive());
        let mut blocks = Rel::empty(n);
        blocks.add_block(10, &r.block(10, n - 10));
        assert!(blocks == r.filter(|a, b| (10..n - 10).contains(&a) && (10..n - 10).contains(&b)));
        let mut cycle = Rel::empty(n);
        (0..n).for_each(|a| cycle.add(a, (a + 1) % n));
        assert!(!cycle.acyclic());
        assert!(cycle.filter(|a, _| a != n - 1).acyclic());
    }
}
