//! Dependencies between a thread's accesses, from the machine code (for the POWER model): an
//! access depends on a load by *address* (its address is computed from the loaded value),
//! by *data* (the value it stores is), by *control* (it comes after a conditional branch whose
//! condition is), and by *control+isync* (with an `isync` between that branch and it) — herd's
//! `addr`, `data`, `ctrl` and `ctrlisync`, syntactic, through registers.
//!
//! Each function is analysed on its own, over its control-flow graph: per general register
//! and condition-register field, the loads its value *must* come from (on every path, the
//! latest execution of each), and the loads a conditional branch on every path depended on.
//! The approximation only ever loses dependencies, never invents one (an invented one would
//! hide behaviours): paths meet by intersection; an instruction whose written registers are not
//! known clears every register; a call clears everything; a load executed again drops what
//! depended on its earlier execution (the dependency is on the latest one); registers other
//! than the general ones (floating-point, vector, CTR, XER) carry none. A dependency through
//! memory (a value spilled to the stack and loaded back) is not one, as in herd.

use std::collections::BTreeMap;

use crate::decode::SiteDependencies as Dependencies;
use crate::program::CodeSection;
use crate::site::site_kind;

use super::effects::{
    branch, effect, field, jumps_indirectly, loads_gpr, stores_gpr, Branch, Effect,
};

/// A set of a function's loads (by their index among its loads).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Set(pub(super) Vec<u64>);

impl Set {
    pub(super) fn empty(n: usize) -> Set {
        Set(vec![0; n.div_ceil(64)])
    }
    pub(super) fn one(n: usize, i: usize) -> Set {
        let mut s = Set::empty(n);
        s.0[i / 64] |= 1 << (i % 64);
        s
    }
    pub(super) fn contains(&self, i: usize) -> bool {
        self.0[i / 64] & (1 << (i % 64)) != 0
    }
    pub(super) fn insert(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    pub(super) fn union(&mut self, o: &Set) {
        self.0.iter_mut().zip(&o.0).for_each(|(a, b)| *a |= b);
    }
    fn intersect(&mut self, o: &Set) {
        self.0.iter_mut().zip(&o.0).for_each(|(a, b)| *a &= b);
    }
    pub(super) fn remove(&mut self, i: usize) {
        self.0[i / 64] &= !(1 << (i % 64));
    }
    fn clear(&mut self) {
        self.0.iter_mut().for_each(|w| *w = 0);
    }
    pub(super) fn members(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.0.len() * 64).filter(|&i| self.0[i / 64] & (1 << (i % 64)) != 0)
    }
}

/// What is known before an instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
struct State {
    gpr: Vec<Set>,
    cr: Vec<Set>,
    ctrl: Set,
    ctrlisync: Set,
    /// Condition-register bits whose value every path here has (a conditional branch on the
    /// bit went the same way, and nothing wrote its field since): a branch on one goes one
    /// way only, so a path that cannot reach a point does not take its dependencies away.
    known: CrBits,
}

/// Known condition-register bits: `mask` says which (bit `BI` of a branch is `1 << BI`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct CrBits {
    mask: u32,
    value: u32,
}

impl CrBits {
    fn get(self, bit: u32) -> Option<bool> {
        (self.mask >> bit & 1 == 1).then_some(self.value >> bit & 1 == 1)
    }
    fn set(&mut self, bit: u32, v: bool) {
        self.mask |= 1 << bit;
        self.value = (self.value & !(1 << bit)) | (u32::from(v) << bit);
    }
    /// CR field `f` (bits 4f..4f+3) was written.
    fn forget_field(&mut self, f: u32) {
        self.mask &= !(0xf << (4 * f));
        self.value &= self.mask;
    }
}

impl State {
    fn new(n: usize) -> State {
        State {
            gpr: vec![Set::empty(n); 32],
            cr: vec![Set::empty(n); 8],
            ctrl: Set::empty(n),
            ctrlisync: Set::empty(n),
            known: CrBits::default(),
        }
    }
    fn meet(&mut self, o: &State) {
        for (a, b) in self.gpr.iter_mut().zip(&o.gpr) {
            a.intersect(b);
        }
        for (a, b) in self.cr.iter_mut().zip(&o.cr) {
            a.intersect(b);
        }
        self.ctrl.intersect(&o.ctrl);
        self.ctrlisync.intersect(&o.ctrlisync);
        self.known.mask &= o.known.mask & !(self.known.value ^ o.known.value);
        self.known.value &= self.known.mask;
    }
    fn forget_registers(&mut self) {
        self.gpr
            .iter_mut()
            .chain(self.cr.iter_mut())
            .for_each(Set::clear);
        self.known = CrBits::default();
    }
    /// CR field `f` now holds a value computed from `deps`.
    fn set_cr(&mut self, f: u32, deps: Set) {
        self.cr[f as usize] = deps;
        self.known.forget_field(f);
    }
    /// The dependencies of a value computed from registers `regs`.
    fn of(&self, regs: &[u32]) -> Set {
        let mut s = Set(vec![0; self.ctrl.0.len()]);
        for &r in regs {
            s.union(&self.gpr[r as usize]);
        }
        s
    }
}

/// The dependencies of every memory access of `section`'s functions, by the access's address.
pub fn dependencies(section: &CodeSection) -> BTreeMap<u64, Dependencies> {
    let words = super::words_of(&section.bytes);
    let at = |i: usize| section.addr + 4 * i as u64;
    let function_of = |a: u64| {
        section
            .functions
            .iter()
            .position(|&(lo, hi)| a >= lo && a < hi)
    };
    // what another function (a cold part split off by the compiler) branches to: an entry of
    // its function whose registers are not known there
    let mut entries: Vec<u64> = words
        .iter()
        .enumerate()
        .filter_map(|(i, &w)| {
            let target = branch(w, at(i)).filter(|b| !b.links)?.target?;
            let to = function_of(target)?;
            (function_of(at(i)) != Some(to) && section.functions[to].0 != target).then_some(target)
        })
        .chain(section.landing_pads.iter().copied())
        .collect();
    entries.sort_unstable();
    let mut out = BTreeMap::new();
    for &(lo, hi) in &section.functions {
        let (Some(first), Some(end)) = (
            lo.checked_sub(section.addr).map(|o| (o / 4) as usize),
            hi.checked_sub(section.addr).map(|o| (o / 4) as usize),
        ) else {
            continue;
        };
        if first >= end
            || end > words.len()
            || words[first..end].iter().any(|&w| jumps_indirectly(w))
        {
            continue;
        }
        let inside = entries.iter().copied().filter(|&e| e >= lo && e < hi);
        let entered_inside = inside.clone().next().is_some();
        function(&words[first..end], at(first), inside, &mut out);
        super::may_deps::function(&words[first..end], at(first), entered_inside, &mut out);
    }
    out
}

/// One function's words `code`, the first at `addr`, also entered at `entries` (from other
/// functions).
fn function(
    code: &[u32],
    addr: u64,
    entries: impl Iterator<Item = u64>,
    out: &mut BTreeMap<u64, Dependencies>,
) {
    let at = |i: usize| addr + 4 * i as u64;
    let Words {
        sites,
        load_index,
        loads,
    } = Words::of(code, addr);
    if loads.is_empty() {
        return;
    }
    let n = loads.len();
    let mut before: Vec<Option<State>> = vec![None; code.len()];
    let mut work = vec![0usize];
    work.extend(entries.map(|e| ((e - addr) / 4) as usize));
    for &i in &work {
        before[i] = Some(State::new(n));
    }
    while let Some(i) = work.pop() {
        let Some(state) = before[i].clone() else {
            continue;
        };
        let w = code[i];
        let mut next = state.clone();
        let b = branch(w, at(i));
        if let Some(b) = &b {
            if let Some(f) = b.tests {
                next.ctrl.union(&state.cr[f as usize]);
            }
            if b.links {
                next = State::new(n); // a call: the callee may run this function's loads
            }
        } else {
            if let Some(site) = &sites[i] {
                match site.kind {
                    site_kind::FENCE => {
                        if site.size == 6 {
                            // isync: what follows depends by control+isync on what the branches
                            // before it depended on, here, and past the function's return,
                            // where this analysis does not follow: the isync's own
                            // `ctrlisync`, which the model extends to what follows it
                            next.ctrlisync.union(&state.ctrl);
                            let deps = Dependencies {
                                ctrlisync: names(&state.ctrl, &loads),
                                ..Default::default()
                            };
                            out.insert(at(i), deps);
                        }
                    }
                    site_kind::LOAD | site_kind::STORE | site_kind::CAS => access(
                        w,
                        site,
                        &state,
                        &mut next,
                        &loads,
                        load_index[i],
                        out,
                        at(i),
                        n,
                    ),
                    _ => next.forget_registers(), // what it writes is not known
                }
            } else {
                apply(effect(w), &mut next);
            }
            if w >> 26 == 17 {
                next = State::new(n); // a system call
            }
        }
        // (a conditional branch tells each way what the bit it tests is)
        let decided = decides(w, at(i), addr, code.len());
        for s in successors(b.as_ref(), i, code.len(), addr) {
            let mut there = next.clone();
            if let Some((bit, taken_if, target)) = decided {
                there
                    .known
                    .set(bit, if s == target { taken_if } else { !taken_if });
            }
            let (s, there) = thread(code, addr, s, there);
            propagate(&mut before, &[s], &there, &mut work, State::meet);
        }
    }
}

/// A conditional branch of word `w` at `at` that tests a condition-register bit only (no
/// counter) to a target in the function of `len` words at `addr`: the bit, the value it
/// branches on, and the target's index.
fn decides(w: u32, at: u64, addr: u64, len: usize) -> Option<(u32, bool, usize)> {
    let b = branch(w, at).filter(|b| !b.links)?;
    let ((bit, taken_if), target) = (b.decided_by?, b.target?);
    let index = target.checked_sub(addr)? / 4;
    (target.is_multiple_of(4) && (index as usize) < len).then_some((bit, taken_if, index as usize))
}

/// Where a state that reaches word `s` goes on: past the conditional branches there whose bit
/// it knows (each one still a control dependency on what its field carries), so that it is
/// not met with the states of the paths the branch sends the other way.
fn thread(code: &[u32], addr: u64, mut s: usize, mut state: State) -> (usize, State) {
    for _ in 0..16 {
        let at = addr + 4 * s as u64;
        let Some((bit, taken_if, target)) = decides(code[s], at, addr, code.len()) else {
            break;
        };
        let Some(v) = state.known.get(bit) else {
            break;
        };
        let f = (bit >> 2) as usize;
        let field_deps = state.cr[f].clone();
        state.ctrl.union(&field_deps);
        let next = if v == taken_if { target } else { s + 1 };
        if next >= code.len() {
            break;
        }
        s = next;
    }
    (s, state)
}

/// A function's words classified: each one's site, and the loads a value may come from, by
/// their index among them and their address.
pub(super) struct Words {
    pub(super) sites: Vec<Option<crate::site::Site>>,
    pub(super) load_index: Vec<usize>,
    pub(super) loads: Vec<u64>,
}

impl Words {
    pub(super) fn of(code: &[u32], addr: u64) -> Words {
        let at = |i: usize| addr + 4 * i as u64;
        let frame_pointer = super::keeps_frame_pointer(code);
        let sites: Vec<Option<crate::site::Site>> = code
            .iter()
            .enumerate()
            .map(|(i, &w)| super::classify(w, at(i), frame_pointer))
            .collect();
        // (a load of the thread's own stack is a load a value may come from too: where the
        // runtime finds the stack shared with another thread it is an event, and where not, no
        // event at its address is there to depend on)
        let mut load_index = vec![usize::MAX; code.len()];
        let mut loads = Vec::new();
        for (i, s) in sites.iter().enumerate() {
            if let Some(s) = s {
                if s.kind == site_kind::LOAD {
                    load_index[i] = loads.len();
                    loads.push(at(i));
                }
            }
        }
        Words {
            sites,
            load_index,
            loads,
        }
    }
}

/// Where control goes after word `i` of a function of `len` words at `addr`, `b` if it is a
/// branch: its target inside the function (not a call's), and the next word where it falls
/// through.
pub(super) fn successors(b: Option<&Branch>, i: usize, len: usize, addr: u64) -> Vec<usize> {
    let mut succ = Vec::new();
    let inside = |a: u64| {
        (a >= addr && a < addr + 4 * len as u64 && (a - addr).is_multiple_of(4))
            .then(|| ((a - addr) / 4) as usize)
    };
    match b {
        Some(b) => {
            if let Some(t) = b.target.filter(|_| !b.links).and_then(inside) {
                succ.push(t);
            }
            if b.falls_through && i + 1 < len {
                succ.push(i + 1);
            }
        }
        None if i + 1 < len => succ.push(i + 1),
        None => {}
    }
    succ
}

/// The state after a word, `next`, reaches its successors `succ`: merged into what each had
/// (`merge`), and those that changed are looked at again.
pub(super) fn propagate<S: Clone + PartialEq>(
    before: &mut [Option<S>],
    succ: &[usize],
    next: &S,
    work: &mut Vec<usize>,
    merge: impl Fn(&mut S, &S),
) {
    for &s in succ {
        let changed = match &mut before[s] {
            None => {
                before[s] = Some(next.clone());
                true
            }
            Some(old) => {
                let was = old.clone();
                merge(old, next);
                *old != was
            }
        };
        if changed {
            work.push(s);
        }
    }
}

fn apply(e: Effect, next: &mut State) {
    match e {
        Effect::Gpr { dst, srcs } => next.gpr[dst as usize] = next.of(&srcs),
        Effect::GprAndCr0 { dst, srcs } => {
            let d = next.of(&srcs);
            next.set_cr(0, d.clone());
            next.gpr[dst as usize] = d;
        }
        Effect::Compare { field, srcs } => {
            let d = next.of(&srcs);
            next.set_cr(field, d);
        }
        Effect::FloatCompare { field } => {
            let none = Set(vec![0; next.ctrl.0.len()]);
            next.set_cr(field, none);
        }
        Effect::Nothing => {}
        Effect::Unknown => next.forget_registers(),
    }
}

/// The loads of `s`, by the addresses of their words (`loads`: each load's).
fn names(s: &Set, loads: &[u64]) -> Vec<u64> {
    s.members().map(|i| loads[i]).collect()
}

/// A memory access at word `w`: record what it depends on, then what it writes.
#[allow(clippy::too_many_arguments)]
fn access(
    w: u32,
    site: &crate::site::Site,
    state: &State,
    next: &mut State,
    loads: &[u64],
    me: usize,
    out: &mut BTreeMap<u64, Dependencies>,
    addr: u64,
    n: usize,
) {
    let (rt, ra, rb) = (field(w, 21), field(w, 16), field(w, 11));
    let mut address = Vec::new();
    if ra != 0 {
        address.push(ra);
    }
    if site.index != crate::site::REG_NONE {
        address.push(rb);
    }
    let names = |s: &Set| names(s, loads);
    let writes = site.kind == site_kind::STORE || site.kind == site_kind::CAS;
    // a store of a general register: stw, stb, sth, std, their X forms and update forms, stmw
    // (its first register), stwcx. and friends
    let gpr_store = stores_gpr(w);
    let deps = Dependencies {
        addr: names(&state.of(&address)),
        data: if writes && gpr_store {
            names(&state.of(&[rt]))
        } else {
            Vec::new()
        },
        ctrl: names(&state.ctrl),
        ctrlisync: names(&state.ctrlisync),
        ..Default::default()
    };
    out.insert(addr, deps);
    // what it writes: a store-conditional CR0 (from the registers it reads, its address's and
    // the value's, as herd has it), an update form its base, a load its target
    if site.kind == site_kind::CAS {
        let mut read = address.clone();
        read.push(rt);
        next.set_cr(0, state.of(&read));
    }
    // (an update form's base becomes the address: its dependencies stay, a subset of the
    // address's)
    if me != usize::MAX {
        // the latest execution of this load: what depended on an earlier one no longer names it
        for s in next.gpr.iter_mut().chain(next.cr.iter_mut()) {
            s.remove(me);
        }
        next.ctrl.remove(me);
        next.ctrlisync.remove(me);
    }
    if site.kind == site_kind::LOAD {
        if w >> 26 == 46 {
            // lmw: RT..r31
            for r in rt..32 {
                next.gpr[r as usize].clear();
            }
        } else if loads_gpr(w) {
            next.gpr[rt as usize] = if me != usize::MAX {
                Set::one(n, me)
            } else {
                Set::empty(n)
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// gcc -O0's message passing consumer: an acquire load (`lwz; cmpw; bne-; isync`) whose
    /// value goes to a stack slot addressed through r31, the frame pointer, and comes back for
    /// the `if`. The stack slots are no loads (r31 is the frame: `mr r31,r1`), so the load
    /// after the `if` depends on the acquire load by control+isync. With r31 a general
    /// register (written otherwise), its accesses stay the program's.
    #[test]
    fn a_frame_pointers_stack_slots_are_the_threads_own() {
        let code = [
            0x7c08_02a6, // 1000 mflr r0
            0xf801_0010, // 1004 std r0,16(r1)
            0xfbe1_fff8, // 1008 std r31,-8(r1)
            0xf821_ffb1, // 100c stdu r1,-80(r1)
            0x7c3f_0b78, // 1010 mr r31,r1
            0x3922_8158, // 1014 addi r9,r2,-32424
            0xf93f_0020, // 1018 std r9,32(r31)
            0xe93f_0020, // 101c ld r9,32(r31)
            0x8129_0000, // 1020 lwz r9,0(r9)
            0x7c09_4800, // 1024 cmpw r9,r9
            0x40c2_0004, // 1028 bne- 102c
            0x4c00_012c, // 102c isync
            0x913f_0028, // 1030 stw r9,40(r31)
            0x813f_0028, // 1034 lwz r9,40(r31)
            0x2c09_0000, // 1038 cmpwi r9,0
            0x4182_0010, // 103c beq 104c
            0x3922_8154, // 1040 addi r9,r2,-32428
            0x8129_0000, // 1044 lwz r9,0(r9)
            0x3860_0000, // 1048 li r3,0
            0x383f_0050, // 104c addi r1,r31,80
            0xe801_0010, // 1050 ld r0,16(r1)
            0x7c08_03a6, // 1054 mtlr r0
            0xebe1_fff8, // 1058 ld r31,-8(r1)
            0x4e80_0020, // 105c blr
        ];
        assert!(super::super::keeps_frame_pointer(&code));
        let d = analyse(&code, code.len());
        assert_eq!(d[&0x1044].ctrlisync, vec![0x1020]);
        // (the address loaded back from the stack: no event, so no dependency, where the
        // slot is not shared)
        assert_eq!(d[&0x1020].addr, vec![0x101c]);
        // r31 loaded with a pointer as well: a general register, not the frame
        let mut general = code;
        general[16] = 0x83e9_0000; // 1040 lwz r31,0(r9)
        assert!(!super::super::keeps_frame_pointer(&general));
    }

    /// `words` as one function at 0x1000 (and any words after `end` as another).
    fn analyse(words: &[u32], end: usize) -> BTreeMap<u64, Dependencies> {
        functions(words, &[end])
    }

    /// `words` at 0x1000 as functions that end at word indexes `ends` (and a last one).
    fn functions(words: &[u32], ends: &[usize]) -> BTreeMap<u64, Dependencies> {
        let bytes = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let bounds: Vec<u64> = std::iter::once(0)
            .chain(ends.iter().copied())
            .chain(std::iter::once(words.len()))
            .map(|i| 0x1000 + 4 * i as u64)
            .collect();
        let section = CodeSection {
            name: ".text".into(),
            addr: 0x1000,
            bytes,
            landing_pads: vec![],
            functions: bounds.windows(2).map(|b| (b[0], b[1])).collect(),
            symbols: Vec::new(),
            one_word_returns: Vec::new(),
        };
        dependencies(&section)
    }

    /// gcc's compare-exchange loop with acquire (`lwarx; cmpwi; bne out; stwcx.; bne loop;
    /// out: isync`): both ways to the isync branched on the lwarx's value, so what follows
    /// depends on it by control+isync.
    #[test]
    fn a_compare_exchange_acquires_by_control_and_isync() {
        let code = [
            0x3882_815c, // 1000 addi r4,r2,-32420
            0x3940_0001, // 1004 li r10,1
            0x7c00_04ac, // 1008 hwsync
            0x7d20_2028, // 100c lwarx r9,0,r4
            0x2c09_0000, // 1010 cmpwi r9,0
            0x4082_000c, // 1014 bne 1020
            0x7d40_212d, // 1018 stwcx. r10,0,r4
            0x4082_fff0, // 101c bne 100c
            0x4c00_012c, // 1020 isync
            0x4082_0010, // 1024 bne 1034
            0x8122_8160, // 1028 lwz r9,-32416(r2)
            0x3929_0001, // 102c addi r9,r9,1
            0x9122_8160, // 1030 stw r9,-32416(r2)
            0x4e80_0020, // 1034 blr
        ];
        let d = analyse(&code, 14);
        let at = |a: u64| d.get(&a).cloned().unwrap_or_default();
        assert_eq!(at(0x1028).ctrlisync, vec![0x100c]);
    }

    /// gcc's weak compare-exchange with acquire, as a spin lock's loop: `lwarx; cmpwi; bne
    /// out; stwcx.; isync; out: bne retry`. The way from the first `bne` reaches `out` with
    /// CR0 "not equal", so its `bne` retries: only the way through the isync goes on, and what
    /// follows depends on the lwarx by control+isync (met with the other way, it was lost: a
    /// false alarm on a correct lock under power).
    #[test]
    fn a_branch_decided_by_an_earlier_one_does_not_lose_the_isync() {
        let code = [
            0x3900_0001, // 1000 li r8,1
            0x3922_8154, // 1004 addi r9,r2,-32428
            0x7d40_4828, // 1008 lwarx r10,0,r9
            0x2c0a_0000, // 100c cmpwi r10,0
            0x4082_000c, // 1010 bne 101c
            0x7d00_492d, // 1014 stwcx. r8,0,r9
            0x4c00_012c, // 1018 isync
            0x4082_ffec, // 101c bne 1008
            0x8122_8158, // 1020 lwz r9,-32424(r2)
            0x3929_0001, // 1024 addi r9,r9,1
            0x9122_8158, // 1028 stw r9,-32424(r2)
            0x4e80_0020, // 102c blr
        ];
        let d = analyse(&code, code.len());
        assert_eq!(d[&0x1020].ctrlisync, vec![0x1008]);
        assert_eq!(d[&0x1028].ctrlisync, vec![0x1008]);
        // with CR0 written between (another compare), the way from the first bne may go on
        let mut compared = code;
        compared[7] = 0x2c0a_0001; // 101c cmpwi r10,1 (then no branch: falls into the load)
        let d = analyse(&compared, compared.len());
        assert!(d[&0x1020].ctrlisync.is_empty());
    }

    /// A store-conditional's CR0 comes from the registers it reads (herd's dataflow): a branch
    /// on it depends on the load-reserve when the value stored came from it, not otherwise.
    #[test]
    fn a_store_conditional_passes_on_what_it_stores() {
        let stores_loaded = [
            0x7ca0_2028, // 1000 lwarx r5,0,r4
            0x7ca0_212d, // 1004 stwcx. r5,0,r4
            0x4082_0008, // 1008 bne 1010
            0x90c7_0000, // 100c stw r6,0(r7)
            0x4e80_0020, // 1010 blr
        ];
        let d = analyse(&stores_loaded, stores_loaded.len());
        assert_eq!(d[&0x1004].data, vec![0x1000]);
        assert_eq!(d[&0x100c].ctrl, vec![0x1000]);
        let stores_constant = [
            0x3860_0001, // 1000 li r3,1
            0x7ca0_2028, // 1004 lwarx r5,0,r4
            0x7c60_212d, // 1008 stwcx. r3,0,r4
            0x4082_0008, // 100c bne 1014
            0x90c7_0000, // 1010 stw r6,0(r7)
            0x4e80_0020, // 1014 blr
        ];
        let d = analyse(&stores_constant, stores_constant.len());
        assert!(d[&0x1008].data.is_empty());
        assert!(d[&0x1010].ctrl.is_empty());
    }

    /// What the analysis cannot see makes it forget, never guess: `addic` leaves CR0 as the
    /// compare set it; a function with a jump through a register (a switch table) gets none;
    /// a place another function branches to starts with nothing known.
    #[test]
    fn what_it_cannot_see_it_forgets() {
        let code = [
            0x8083_0000, // 1000 f: lwz r4,0(r3)
            0x7c04_2000, // 1004 cmpw r4,r4
            0x30a6_0001, // 1008 addic r5,r6,1 (sets CA, not CR0)
            0x4182_0004, // 100c beq 1010
            0x912a_0000, // 1010 stw r9,0(r10)
            0x4e80_0020, // 1014 blr
            0x8083_0000, // 1018 g: lwz r4,0(r3)
            0x7d89_03a6, // 101c mtctr r12
            0x9124_0000, // 1020 stw r9,0(r4)
            0x4e80_0420, // 1024 bctr
            0x8083_0000, // 1028 h: lwz r4,0(r3)
            0x9124_0000, // 102c stw r9,0(r4)
            0x4e80_0020, // 1030 blr
            0x4bff_fff8, // 1034 k: b 102c
        ];
        let d = functions(&code, &[6, 10, 13]);
        assert_eq!(d[&0x1010].ctrl, vec![0x1000]);
        assert!(!d.contains_key(&0x1020));
        assert!(d[&0x102c].addr.is_empty());
        // without the branch from k, h's store depends on its load
        let d = functions(&code[..13], &[6, 10]);
        assert_eq!(d[&0x102c].addr, vec![0x1028]);
    }

    #[test]
    fn address_data_control_and_isync() {
        let code = [
            0x8083_0000, // 1000 lwz r4,0(r3)
            0x7c85_2278, // 1004 xor r5,r4,r4: a false dependency counts
            0x7cc5_382e, // 1008 lwzx r6,r5,r7
            0x9088_0000, // 100c stw r4,0(r8)
            0x7c06_3000, // 1010 cmpw r6,r6
            0x4182_0004, // 1014 beq 1018
            0x912a_0000, // 1018 stw r9,0(r10)
            0x4c00_012c, // 101c isync
            0x816c_0000, // 1020 lwz r11,0(r12)
            0x3880_0000, // 1024 li r4,0
            0x9124_0000, // 1028 stw r9,0(r4)
            0x4800_000d, // 102c bl 1038
            0x90ca_0000, // 1030 stw r6,0(r10)
            0x4e80_0020, // 1034 blr
            0x4e80_0020, // 1038 blr (another function)
        ];
        let d = analyse(&code, 14);
        let at = |a: u64| d.get(&a).cloned().unwrap_or_default();
        let exact = Dependencies {
            precise_in: Some(0x1000),
            ..Dependencies::default()
        };
        assert_eq!(at(0x1000), exact);
        assert_eq!(at(0x1008).addr, vec![0x1000]);
        assert_eq!(at(0x100c).data, vec![0x1000]);
        assert!(at(0x100c).addr.is_empty());
        assert_eq!(at(0x1018).ctrl, vec![0x1008]);
        assert!(at(0x1018).ctrlisync.is_empty());
        assert_eq!(at(0x1020).ctrl, vec![0x1008]);
        assert_eq!(at(0x1020).ctrlisync, vec![0x1008]);
        // li clears r4; the call clears everything
        assert!(at(0x1028).addr.is_empty());
        assert_eq!(at(0x1028).ctrl, vec![0x1008]);
        assert_eq!(at(0x1030), Dependencies::default());
        // what may decide each access: the same loads, where it is all of it (not past the
        // call, where anything may)
        assert_eq!(at(0x1008).may, vec![0x1000]);
        assert_eq!(at(0x100c).may, vec![0x1000]);
        assert_eq!(at(0x1018).may, vec![0x1008]);
        assert_eq!(at(0x1028).precise_in, Some(0x1000));
        assert_eq!(at(0x1030).precise_in, None);
    }

    /// A value kept on the thread's stack and loaded back decides a store: no dependency on
    /// the first load that the model orders by (herd has none through memory), but one the
    /// exploration keeps.
    #[test]
    fn what_passes_through_the_stack_may_decide() {
        let code = [
            0x8083_0000, // 1000 lwz r4,0(r3)
            0x9081_0010, // 1004 stw r4,16(r1)
            0x3880_0000, // 1008 li r4,0
            0x80a1_0010, // 100c lwz r5,16(r1)
            0x90a3_0000, // 1010 stw r5,0(r3)
            0x4e80_0020, // 1014 blr
        ];
        let d = analyse(&code, 6);
        let at = |a: u64| d.get(&a).cloned().unwrap_or_default();
        // (on the load back from the stack, an event only where the slot is shared)
        assert_eq!(at(0x1010).data, vec![0x100c]);
        assert_eq!(at(0x1010).may, vec![0x1000, 0x100c]);
        assert_eq!(at(0x1010).precise_in, Some(0x1000));
    }

    /// A value from a load's first execution, kept past its second (`lb_data.c`'s loop):
    /// an earlier execution's.
    #[test]
    fn an_earlier_execution_of_a_load_may_decide() {
        let code = [
            0x38c0_0000, // 1000 li r6,0
            0x8083_0000, // 1004 lwz r4,0(r3)
            0x2c06_0000, // 1008 cmpwi r6,0
            0x4082_0008, // 100c bne 1014
            0x7c85_2378, // 1010 mr r5,r4
            0x38c6_0001, // 1014 addi r6,r6,1
            0x2c06_0002, // 1018 cmpwi r6,2
            0x4180_ffe8, // 101c blt 1004
            0x90a3_0000, // 1020 stw r5,0(r3)
            0x4e80_0020, // 1024 blr
        ];
        let d = analyse(&code, 10);
        let at = |a: u64| d.get(&a).cloned().unwrap_or_default();
        assert_eq!(at(0x1020).may_earlier, vec![0x1004]);
        assert_eq!(at(0x1004).may, Vec::<u64>::new());
    }

    /// Paths meet by intersection: a dependency on one path only is none; around a loop, a
    /// dependency is on the latest execution of a load.
    #[test]
    fn only_what_every_path_carries() {
        let code = [
            0x8083_0000, // 1000 lwz r4,0(r3)
            0x2c09_0000, // 1004 cmpwi r9,0
            0x4182_0008, // 1008 beq 1010
            0x3880_0000, // 100c li r4,0
            0x90a4_0000, // 1010 stw r5,0(r4): r4 from the load on one path only
            0x4e80_0020, // 1014 blr
        ];
        let d = analyse(&code, 6);
        assert!(d[&0x1010].addr.is_empty());
        let looped = [
            0x80c3_0000, // 1000 lwz r6,0(r3)
            0x7cc7_3378, // 1004 mr r7,r6
            0x80c3_0000, // 1008 lwz r6,0(r3)
            0x90a7_0000, // 100c stw r5,0(r7): from the first load, not the second
            0x4bff_fff0, // 1010 b 1000
        ];
        let d = analyse(&looped, 5);
        assert_eq!(d[&0x100c].addr, vec![0x1000]);
        let reloaded = [
            0x80c3_0000, // 1000 lwz r6,0(r3)
            0x7cc7_3378, // 1004 mr r7,r6
            0x90a7_0000, // 1008 stw r5,0(r7)
            0x4bff_fff4, // 100c b 1000: the next lwz is a later execution
        ];
        let d = analyse(&reloaded, 4);
        assert_eq!(d[&0x1008].addr, vec![0x1000]);
    }
}
