//! What an access *may* depend on: the loads whose values may decide whether it runs, where
//! it accesses, or what it stores. The model's dependencies (`deps.rs`) are what an access
//! must depend on, so that a missed one only adds behaviours; the exploration needs the other
//! side. A revisit keeps a write and what it depends on, and drops a later-added read it does
//! not depend on: where the analysis missed that the write runs only because of that read's
//! value (a branch in a function the value was passed to, an exception thrown on it), the
//! kept write is one the program no longer makes, and the graph where the read kept its value
//! is never visited. So an access is *exact* — its earlier reads outside its may-set are
//! certainly irrelevant to it — only where every way a value could reach it is seen:
//! - in a function that calls nothing, contains no system call, no indirect jump and only
//!   instructions whose register effects are known (general registers and condition-register
//!   fields: no floating-point, vector or special-purpose register moves), and that is entered
//!   only at its start;
//! - values flow through registers (union where paths meet), through the thread's own stack
//!   (one cell: what any access that may be to it stored, a private one or one whose address
//!   may point there — the runtime finds that, and makes it no event) and through control
//!   (a branch or trap on a value);
//! - and the function is its thread's start routine, which the runtime reports at the
//!   thread's start: run once per thread, with no earlier read of its thread to carry
//!   anything in (the engine checks this, `precise_in`).
//!
//! Everything else may depend on every earlier read of its thread.

use std::collections::BTreeMap;

use crate::decode::SiteDependencies as Dependencies;
use crate::site::{site_flags, site_kind, REG_NONE};

use super::deps::{propagate, successors, Set, Words};
use super::effects::{branch, effect, field, loads_gpr, stores_gpr, Effect};

/// What values may have reached a point of the function.
#[derive(Clone, PartialEq, Eq)]
struct State {
    gpr: Vec<Set>,
    cr: Vec<Set>,
    /// The link and count registers.
    lr: Set,
    ctr: Set,
    ctrl: Set,
    /// What the thread's own stack may hold.
    stack: Set,
    /// The general registers that may point into the thread's own stack or TLS (a bit
    /// each), and whether such an address may have been stored to memory (then a loaded
    /// value may be one).
    stacky: u32,
    escaped: bool,
    /// Past something whose flows are not seen (a call, a system call, an instruction whose
    /// effect is not known, floating point or vectors): anything may hold anything.
    lost: bool,
}

impl State {
    fn new(n: usize) -> State {
        State {
            gpr: vec![Set::empty(n); 32],
            cr: vec![Set::empty(n); 8],
            lr: Set::empty(n),
            ctr: Set::empty(n),
            ctrl: Set::empty(n),
            stack: Set::empty(n),
            // (at a start routine's entry: the stack and thread pointers, and what the
            // runtime left in the registers a function must set before it uses them; not the
            // TOC pointer, the argument or the entry address)
            stacky: !((1 << 2) | (1 << 3) | (1 << 12)),
            escaped: false,
            lost: false,
        }
    }

    fn sets_mut(&mut self) -> impl Iterator<Item = &mut Set> {
        (self.gpr.iter_mut()).chain(self.cr.iter_mut()).chain([
            &mut self.lr,
            &mut self.ctr,
            &mut self.ctrl,
            &mut self.stack,
        ])
    }

    fn sets(&self) -> impl Iterator<Item = &Set> {
        (self.gpr.iter()).chain(self.cr.iter()).chain([
            &self.lr,
            &self.ctr,
            &self.ctrl,
            &self.stack,
        ])
    }

    fn join(&mut self, o: &State) {
        for (a, b) in self.sets_mut().zip(o.sets()) {
            a.union(b);
        }
        self.stacky |= o.stacky;
        self.escaped |= o.escaped;
        self.lost |= o.lost;
    }

    fn stacky_of(&self, regs: &[u32]) -> bool {
        regs.iter().any(|&r| self.stacky & (1 << r) != 0)
    }

    /// Register `dst` gets a value computed from `srcs`.
    fn set_gpr(&mut self, dst: u32, srcs: &[u32], from: &State) {
        self.gpr[dst as usize] = from.of(srcs);
        self.stacky = (self.stacky & !(1 << dst)) | (u32::from(from.stacky_of(srcs)) << dst);
    }

    fn of(&self, regs: &[u32]) -> Set {
        let mut s = Set(vec![0; self.ctrl.0.len()]);
        for &r in regs {
            s.union(&self.gpr[r as usize]);
        }
        s
    }

    fn all_cr(&self) -> Set {
        let mut s = Set(vec![0; self.ctrl.0.len()]);
        for c in &self.cr {
            s.union(c);
        }
        s
    }
}

/// Whether word `w` is an access that writes its base register with its address (an update
/// form: `lwzu`, `stdu`, `lwzux`...).
fn updates_base(w: u32) -> bool {
    let po = w >> 26;
    let xo = (w >> 1) & 0x3ff;
    match po {
        33 | 35 | 37 | 39 | 41 | 43 | 45 | 49 | 51 | 53 | 55 => true,
        58 | 62 => w & 3 == 1, // ldu, stdu
        31 => matches!(
            xo,
            55 | 119 | 311 | 375 | 373 | 53 | 183 | 247 | 439 | 181 | 567 | 631 | 695 | 759
        ),
        _ => false,
    }
}

/// A conditional trap (`tw`, `td`, `twi`, `tdi`): the registers it compares.
fn trap_operands(w: u32) -> Option<Vec<u32>> {
    let po = w >> 26;
    let xo = (w >> 1) & 0x3ff;
    match po {
        2 | 3 => Some(vec![field(w, 16)]),
        31 if matches!(xo, 4 | 68) => Some(vec![field(w, 16), field(w, 11)]),
        _ => None,
    }
}

/// Fills in `may` and `precise_in` for the accesses of one function (its words `code`, the
/// first at `addr`) that no path from its start reaches past something whose flows are not
/// seen (`State::lost`).
pub(super) fn function(
    code: &[u32],
    addr: u64,
    entered_inside: bool,
    out: &mut BTreeMap<u64, Dependencies>,
) {
    if entered_inside || code.is_empty() {
        return;
    }
    let at = |i: usize| addr + 4 * i as u64;
    let Words {
        sites,
        load_index,
        loads,
    } = Words::of(code, addr);
    // (a load's value from its latest execution is token k, from an earlier one n + k)
    let n = loads.len().max(1);
    let mut before: Vec<Option<State>> = vec![None; code.len()];
    before[0] = Some(State::new(2 * n));
    let mut work = vec![0usize];
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
            // (a counter branch tests the count register; a branch to it or the link
            // register goes where they say)
            if w >> 26 != 18 && (w & (1 << 23) == 0 || b.target.is_none()) {
                next.ctrl.union(&state.ctr);
                next.ctrl.union(&state.lr);
            }
            if b.links {
                next.lost = true; // a call
            }
        } else {
            step(w, sites[i].as_ref(), &state, &mut next, load_index[i], n);
        }
        let succ = successors(b.as_ref(), i, code.len(), addr);
        propagate(&mut before, &succ, &next, &mut work, State::join);
    }
    // (what reaches each access, once every path has: the states only grow)
    for (i, (site, state)) in sites.iter().zip(&before).enumerate() {
        let (Some(site), Some(state)) = (site, state) else {
            continue;
        };
        if !state.lost {
            let set = may_depend(code[i], site, state);
            let d = out.entry(at(i)).or_default();
            d.may = set.members().filter(|&k| k < n).map(|k| loads[k]).collect();
            d.may_earlier = set
                .members()
                .filter(|&k| k >= n)
                .map(|k| loads[k - n])
                .collect();
            d.precise_in = Some(addr);
        }
    }
}

/// What word `w` (not a branch) does to the state.
fn step(
    w: u32,
    site: Option<&crate::site::Site>,
    state: &State,
    next: &mut State,
    me: usize,
    n: usize,
) {
    let (po, xo) = (w >> 26, (w >> 1) & 0x3ff);
    if po == 17 {
        next.lost = true; // a system call
        return;
    }
    if let Some(regs) = trap_operands(w) {
        next.ctrl.union(&state.of(&regs));
        return;
    }
    if let Some(site) = site {
        match site.kind {
            site_kind::FENCE => {}
            site_kind::LOAD if loads_gpr(w) => access(w, site, state, next, me, n),
            site_kind::STORE | site_kind::CAS if stores_gpr(w) => {
                access(w, site, state, next, me, n)
            }
            _ => next.lost = true,
        }
        return;
    }
    // the special registers a program moves values through: the link and count registers
    let spr = ((w >> 16) & 0x1f) | (((w >> 11) & 0x1f) << 5);
    let rt = field(w, 21);
    match (po, xo) {
        (31, 467) => match spr {
            8 => next.lr = state.of(&[rt]),
            9 => next.ctr = state.of(&[rt]),
            _ => next.lost = true,
        },
        (31, 339) => {
            next.gpr[rt as usize] = match spr {
                8 => state.lr.clone(),
                9 => state.ctr.clone(),
                _ => {
                    next.lost = true;
                    return;
                }
            };
            next.stacky |= 1 << rt;
        }
        (31, 19) => {
            next.gpr[rt as usize] = state.all_cr(); // mfcr, mfocrf
            next.stacky &= !(1 << rt);
        }
        (31, 144) => {
            // mtcrf, mtocrf: some fields from RS
            let v = state.of(&[rt]);
            next.cr.iter_mut().for_each(|c| c.union(&v));
        }
        _ => match effect(w) {
            Effect::Gpr { dst, srcs } => next.set_gpr(dst, &srcs, state),
            Effect::GprAndCr0 { dst, srcs } => {
                next.set_gpr(dst, &srcs, state);
                next.cr[0] = state.of(&srcs);
            }
            Effect::Compare { field, srcs } => next.cr[field as usize] = state.of(&srcs),
            // (nothing written: the fences and cache hints of opcode 31; not floating point
            // or vectors, whose registers are not followed)
            Effect::Nothing if po == 31 => {}
            Effect::Nothing | Effect::FloatCompare { .. } | Effect::Unknown => next.lost = true,
        },
    }
}

/// What access `w` may depend on: its address's registers, a store's value, control.
fn may_depend(w: u32, site: &crate::site::Site, state: &State) -> Set {
    let mut on = state.of(&address_registers(w, site));
    on.union(&state.ctrl);
    on.union(&state.of(&stored_registers(w, site)));
    on
}

fn address_registers(w: u32, site: &crate::site::Site) -> Vec<u32> {
    let (ra, rb) = (field(w, 16), field(w, 11));
    let mut address = Vec::new();
    if ra != 0 {
        address.push(ra);
    }
    if site.index != REG_NONE {
        address.push(rb);
    }
    address
}

/// The registers a store stores (stmw: RS..r31).
fn stored_registers(w: u32, site: &crate::site::Site) -> Vec<u32> {
    let rt = field(w, 21);
    match (site.kind, w >> 26) {
        (site_kind::STORE | site_kind::CAS, 47) => (rt..32).collect(),
        (site_kind::STORE | site_kind::CAS, _) => vec![rt],
        _ => Vec::new(),
    }
}

/// What an access writes: a private store the stack, a store-conditional CR0, an update
/// form its base, a load its target.
fn access(w: u32, site: &crate::site::Site, state: &State, next: &mut State, me: usize, n: usize) {
    let (rt, ra) = (field(w, 21), field(w, 16));
    let address = address_registers(w, site);
    // (an access is to the thread's own stack where the runtime finds its address there: a
    // private one, or one through a frame pointer or a pointer to a local)
    let own = site.flags & site_flags::PRIVATE != 0 || state.stacky_of(&address);
    let stored = stored_registers(w, site);
    if own {
        next.stack.union(&state.of(&stored));
    }
    if state.stacky_of(&stored) {
        next.escaped = true;
    }
    if site.kind == site_kind::CAS {
        let mut read = address.clone();
        read.push(rt);
        next.cr[0] = state.of(&read);
    }
    if updates_base(w) && ra != 0 {
        next.set_gpr(ra, &address, state);
    }
    if site.kind == site_kind::LOAD {
        // (a load the runtime finds on the thread's own stack is no event and gives what the
        // stack holds)
        if me != usize::MAX {
            // what its earlier executions gave is now an earlier execution's
            for set in next.sets_mut() {
                if set.contains(me) {
                    set.remove(me);
                    set.insert(n + me);
                }
            }
        }
        let mut value = if own {
            next.stack.clone()
        } else {
            Set(vec![0; next.ctrl.0.len()])
        };
        if me != usize::MAX {
            value.insert(me);
        }
        let targets: Vec<u32> = if w >> 26 == 46 {
            (rt..32).collect() // lmw
        } else {
            vec![rt]
        };
        for r in targets {
            next.gpr[r as usize] = value.clone();
            next.stacky = (next.stacky & !(1 << r)) | (u32::from(state.escaped) << r);
        }
    }
}
