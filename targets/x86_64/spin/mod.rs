//! Bounded spin loops: a load repeated, with a pause, until its value changes or a counter
//! runs out, as Rust's std futex `Mutex` and `RwLock` do up to 100 times before they wait:
//!
//! ```text
//! L:  pause
//!     mov  eax, [rbx]        ; the spin load
//!     cmp  eax, 1
//!     jne  T                 ; the value changed
//!     test ecx, ecx
//!     lea  ecx, [rcx+1]
//!     jne  L                 ; the counter has not run out
//! T:  ...                    ; both exits, the counter dead here
//! ```
//!
//! Every iteration but the last reads a value that keeps the thread in the loop and changes
//! nothing but the counter, so the loop reaches the same states (up to the dead counter) as
//! one load alone: the load read at any iteration is the same load scheduled later, and
//! running out is reading the looping value once. The checker explores it as that one load:
//! the runtime sets the counter, at the load, to the value that ends the loop after it
//! (`Site::spin_reg`, `Site::spin_value`). Explored iteration by iteration, each interleaving
//! of another thread's write between two iterations is one more execution (a contended Rust
//! lock cost about ten times the executions).
//!
//! The shape is checked strictly: one loop of straight-line code around one load into a whole
//! register, exits on flags computed from the loaded value only, the back edge a `jne` on flags
//! of the counter only, every other register the loop writes computed from the counter, all
//! exits at one place, and there, every such register and the flags written before read on
//! every path (up to a return or a call that cannot read them). Anything else is left as it
//! is, explored iteration by iteration.

use std::collections::{HashMap, HashSet};

use iced_x86::{
    ConditionCode, FlowControl, Instruction, InstructionInfoFactory, Mnemonic, OpAccess, OpKind,
    Register, RflagsBits,
};

use crate::site::spin_value;

/// Registers as a bit set by number (rax = 0 ... r15 = 15).
type Regs = u16;

const STATUS_FLAGS: u32 = RflagsBits::OF
    | RflagsBits::SF
    | RflagsBits::ZF
    | RflagsBits::AF
    | RflagsBits::CF
    | RflagsBits::PF;

/// How far the loop may reach around its load, and how long a path the liveness check follows.
const MAX_BODY: usize = 16;
const MAX_STEPS: usize = 2000;

/// What a return hands the caller: rax, and rdx too for a two-word value. Which one a
/// function returns the binary does not say; a few library functions are known by name
/// (`CodeSection::one_word_returns`).
pub const RETURNS_TWO_WORDS: Regs = bit(0) | bit(2);
pub const RETURNS_ONE_WORD: Regs = bit(0);

/// Registers the System V ABI passes arguments in (rdi, rsi, rdx, rcx, r8, r9), and those a
/// call may change (also rax, r10, r11). A variadic call is passed the number of vector
/// registers in al as well, which the compiler sets for that call (a constant): al holding
/// a loop's value at a call is no such argument, and calls are taken to read the six alone.
const ARGUMENTS: Regs = bit(7) | bit(6) | bit(2) | bit(1) | bit(8) | bit(9);
const CALL_CLOBBERED: Regs = ARGUMENTS | bit(0) | bit(10) | bit(11);

const fn bit(n: u32) -> Regs {
    1 << n
}

/// What one instruction reads and writes of the general registers and the status flags.
struct Use {
    read: Regs,
    /// Written whole (64 or 32 bits; a 32-bit write clears the upper half).
    written: Regs,
    /// Written in part (8 or 16 bits), or conditionally: the old value survives.
    merged: Regs,
    /// Read through more than their low byte (al, cl ... r15b).
    read_wide: Regs,
    /// Their low byte written.
    low8_written: Regs,
    flags_read: bool,
    flags_written: bool,
    /// Writes every status flag unconditionally (the old flags are dead after it).
    flags_all: bool,
    memory: bool,
}

fn uses(i: &Instruction, info: &mut InstructionInfoFactory) -> Use {
    let used = info.info(i);
    let mut u = Use {
        read: 0,
        written: 0,
        merged: 0,
        read_wide: 0,
        low8_written: 0,
        flags_read: i.rflags_read() & STATUS_FLAGS != 0,
        flags_written: i.rflags_modified() & STATUS_FLAGS != 0,
        flags_all: (i.rflags_written()
            | i.rflags_cleared()
            | i.rflags_set()
            | i.rflags_undefined())
            & STATUS_FLAGS
            == STATUS_FLAGS,
        memory: used
            .used_memory()
            .iter()
            .any(|m| m.access() != OpAccess::NoMemAccess),
    };
    for r in used.used_registers() {
        let reg = r.register();
        if !reg.is_gpr() {
            continue;
        }
        let b = bit(reg.full_register().number() as u32);
        let whole = reg.is_gpr64() || reg.is_gpr32();
        if low_byte(reg) && r.access() == OpAccess::Write {
            u.low8_written |= b;
        }
        if !low_byte(reg)
            && matches!(
                r.access(),
                OpAccess::Read | OpAccess::CondRead | OpAccess::ReadWrite | OpAccess::ReadCondWrite
            )
        {
            u.read_wide |= b;
        }
        match r.access() {
            OpAccess::Write if whole => u.written |= b,
            OpAccess::Write | OpAccess::CondWrite => u.merged |= b,
            OpAccess::ReadWrite | OpAccess::ReadCondWrite if whole => {
                u.read |= b;
                u.written |= b;
            }
            OpAccess::ReadWrite | OpAccess::ReadCondWrite => {
                u.read |= b;
                u.merged |= b;
            }
            OpAccess::Read | OpAccess::CondRead => u.read |= b,
            _ => {}
        }
    }
    u
}

/// al, cl ... r15b: the low byte of a general register (not ah, ch, dh, bh).
fn low_byte(r: Register) -> bool {
    r.is_gpr8() && !matches!(r, Register::AH | Register::CH | Register::DH | Register::BH)
}

/// The instruction at address `ip` of `all` (decoded in one sweep, so in address order).
fn instruction_at(all: &[Instruction], ip: u64) -> Option<usize> {
    all.binary_search_by_key(&ip, Instruction::ip).ok()
}

fn is_nop(i: &Instruction) -> bool {
    matches!(
        i.mnemonic(),
        Mnemonic::Nop | Mnemonic::Pause | Mnemonic::Endbr64
    )
}

/// The register a spin loop's load writes whole (`mov r32/r64, [mem]`), as a bit.
fn spin_load(i: &Instruction) -> Option<Regs> {
    let dest = i.op0_register();
    let shape = i.mnemonic() == Mnemonic::Mov
        && i.op_count() == 2
        && i.op0_kind() == OpKind::Register
        && i.op1_kind() == OpKind::Memory
        && (dest.is_gpr64() || dest.is_gpr32());
    shape.then(|| bit(dest.full_register().number() as u32))
}

/// Could `all[k]` be the load of an await loop with a backoff (a cheap test before
/// [`await_mask`]): a branch back to it or before it soon after.
pub fn await_candidate(all: &[Instruction], k: usize) -> bool {
    let load = &all[k];
    spin_load(load).is_some()
        && all[k + 1..all.len().min(k + 48)].iter().any(|j| {
            matches!(
                j.flow_control(),
                FlowControl::ConditionalBranch | FlowControl::UnconditionalBranch
            ) && j.op0_kind() == OpKind::NearBranch64
                && j.near_branch_target() <= load.ip()
        })
}

/// Could `all[k]` be the load of a bounded spin loop (a cheap test before [`bounded_spin`])?
pub fn candidate(all: &[Instruction], k: usize) -> bool {
    let load = &all[k];
    spin_load(load).is_some()
        && all[k + 1..all.len().min(k + MAX_BODY)].iter().any(|j| {
            j.flow_control() == FlowControl::ConditionalBranch
                && j.condition_code() == ConditionCode::ne
                && j.near_branch_target() <= load.ip()
        })
}

/// The counter to set at the load `all[k]` (`Site::spin_reg`: its number + 1) and the value
/// that ends the loop after it (`spin_value`), when `all[k]` is the load of a bounded spin
/// loop; a return of the function holding it hands the caller the registers `returned`.
pub fn bounded_spin(
    all: &[Instruction],
    k: usize,
    info: &mut InstructionInfoFactory,
    returned: Regs,
) -> Option<(u8, u8)> {
    let load = &all[k];
    let loaded = spin_load(load)?;
    // the back edge: a `jne` after the load, to at or before it. An exit may branch backward
    // too (to code before the loop), so each such branch is tried in turn; what is proved of
    // one holds whichever it is.
    (k + 1..all.len().min(k + MAX_BODY))
        .filter(|&j| {
            all[j].flow_control() == FlowControl::ConditionalBranch
                && all[j].condition_code() == ConditionCode::ne
                && all[j].near_branch_target() <= load.ip()
        })
        .find_map(|b| bounded_spin_to(all, k, loaded, b, info, returned))
}

/// [`bounded_spin`] for the loop whose back edge is `all[b]`.
fn bounded_spin_to(
    all: &[Instruction],
    k: usize,
    loaded: Regs,
    b: usize,
    info: &mut InstructionInfoFactory,
    returned: Regs,
) -> Option<(u8, u8)> {
    let load = &all[k];
    let back = &all[b];
    let start = instruction_at(all, back.near_branch_target())?;
    if start > k || k - start > MAX_BODY {
        return None;
    }
    let (lo, hi) = (all[start].ip(), back.next_ip());
    let load_use = uses(load, info);
    // Registers the body writes: from the loaded value (and what the loop keeps) after the
    // load ("value"; written after an exit, "late": they hold the last iteration's value at
    // that exit, so they must be dead where the loop ends), or else from the counter.
    let mut value: Regs = loaded;
    let mut late: Regs = 0;
    let mut counter: Regs = 0;
    let mut exited = false;
    for (j, i) in all.iter().enumerate().take(b).skip(start) {
        if j == k || is_nop(i) {
            continue;
        }
        if i.flow_control() == FlowControl::ConditionalBranch {
            exited = exited || j > k;
            continue;
        }
        let u = uses(i, info);
        let w = u.written | u.merged;
        if j > k && u.read & value != 0 && u.read & counter == 0 && u.merged == 0 {
            value |= w;
            if exited {
                late |= w;
            }
        } else {
            counter |= w;
        }
    }
    if value & counter != 0 || load_use.read & (counter | value) != 0 {
        return None; // one register both ways, or the address moves with the loop
    }
    let mut exits = Vec::new();
    // the flags as the last instruction that wrote them left them: from the value or the counter
    let mut flags_from_value = None;
    let mut flag_writer = None;
    let mut after_load = false;
    let mut counter_written_since_load: Regs = 0;
    for (j, i) in all.iter().enumerate().take(b).skip(start) {
        if j == k {
            after_load = true;
            continue;
        }
        if is_nop(i) {
            continue;
        }
        match i.flow_control() {
            FlowControl::Next => {}
            FlowControl::ConditionalBranch => {
                let t = i.near_branch_target();
                // an exit, taken on the loaded value, after the load
                if (lo..hi).contains(&t) || flags_from_value != Some(true) || !after_load {
                    return None;
                }
                exits.push(t);
                continue;
            }
            _ => return None,
        }
        let u = uses(i, info);
        if u.memory || u.flags_read || (u.written | u.merged) & loaded != 0 {
            return None;
        }
        if u.read & value != 0 {
            // computed from the loaded value (and what the loop keeps)
            if !after_load || (u.written | u.merged) & !value != 0 || u.read & counter != 0 {
                return None;
            }
            if u.flags_written {
                flags_from_value = Some(true);
            }
            continue;
        }
        // the counter's own arithmetic (what it reads besides the counter, the loop keeps)
        if u.flags_written {
            flags_from_value = Some(false);
            flag_writer = Some((j, counter_written_since_load));
        }
        if after_load {
            counter_written_since_load |= u.written | u.merged;
        }
    }
    // the back edge's flags: the counter's, set after the load
    let (f, written_before) = flag_writer.filter(|_| flags_from_value == Some(false))?;
    if f < k {
        return None;
    }
    let (reg, forced) = ending_value(&all[f])?;
    let reg_bit = bit(reg.full_register().number() as u32);
    if reg_bit & counter == 0 || written_before & reg_bit != 0 {
        return None;
    }
    // both ways out lead to one place
    let mut fall = back.next_ip();
    if let Some(n) = instruction_at(all, fall) {
        if all[n].flow_control() == FlowControl::UnconditionalBranch
            && all[n].op0_kind() == OpKind::NearBranch64
        {
            fall = all[n].near_branch_target();
        }
    }
    if exits.is_empty() || exits.iter().any(|&t| t != fall) {
        return None;
    }
    if !dead_at(all, fall, counter | late, true, returned, info) {
        return None;
    }
    Some((reg.full_register().number() as u8 + 1, forced))
}

/// The register whose value decides `jne` after `f`, and the value (`spin_value`) it must
/// have before `f` for the branch to fall through.
fn ending_value(f: &Instruction) -> Option<(Register, u8)> {
    let reg = f.op0_register();
    if f.op0_kind() != OpKind::Register || !(reg.is_gpr64() || reg.is_gpr32()) {
        return None;
    }
    let all_ones = if reg.is_gpr64() {
        spin_value::ALL_ONES_64
    } else {
        spin_value::ALL_ONES_32
    };
    // the immediate as a signed number of the register's width
    let imm = || {
        let immediate = matches!(
            f.op1_kind(),
            OpKind::Immediate8to32
                | OpKind::Immediate8to64
                | OpKind::Immediate32to64
                | OpKind::Immediate32
                | OpKind::Immediate8
        );
        (f.op_count() == 2 && immediate).then(|| {
            let v = f.immediate(1);
            if reg.is_gpr32() {
                v as u32 as i32 as i64
            } else {
                v as i64
            }
        })
    };
    let v = match f.mnemonic() {
        Mnemonic::Test if f.op1_kind() == OpKind::Register && f.op1_register() == reg => {
            spin_value::ZERO
        }
        Mnemonic::Cmp if imm() == Some(0) => spin_value::ZERO,
        Mnemonic::Dec => spin_value::ONE,
        Mnemonic::Sub if imm() == Some(1) => spin_value::ONE,
        Mnemonic::Add if imm() == Some(-1) => spin_value::ONE,
        Mnemonic::Inc => all_ones,
        Mnemonic::Add if imm() == Some(1) => all_ones,
        Mnemonic::Sub if imm() == Some(-1) => all_ones,
        _ => return None,
    };
    Some((reg, v))
}

/// How many instructions an await loop's body may have.
const MAX_REGION: usize = 96;

/// An await loop that waits with a backoff: the load `all[k]`, a test of its value that leaves
/// the loop, and a body that only computes in registers (a step counter, `pause`, calls such
/// as `yield_now` that are not passed any of it) and always comes back to the load; what the
/// body computes is dead where the loop ends. The registers the loop changes from iteration to
/// iteration are then no part of its state: the await hash leaves them out
/// (`Site::await_mask`), and the loop is an await loop as if it had no counter. Returns the
/// registers to leave out, or 0.
pub fn await_mask(
    all: &[Instruction],
    k: usize,
    info: &mut InstructionInfoFactory,
    returned: Regs,
) -> Regs {
    await_mask_of(all, k, info, returned).unwrap_or(0)
}

fn await_mask_of(
    all: &[Instruction],
    k: usize,
    info: &mut InstructionInfoFactory,
    returned: Regs,
) -> Option<Regs> {
    let load = &all[k];
    let loaded = spin_load(load)?;
    // the value test: straight-line code after the load, up to the first conditional branch
    let cb = (k + 1..all.len().min(k + 9)).find(|&j| all[j].flow_control() != FlowControl::Next)?;
    if all[cb].flow_control() != FlowControl::ConditionalBranch {
        return None;
    }
    // (first as if the loop kept every register: most loads fail here, before the costlier
    // walks of the loop)
    let pre = &all[k + 1..cb];
    if pre.iter().any(|i| !is_nop(i) && uses(i, info).memory) {
        return None;
    }
    value_test(pre, loaded, !0, info)?;
    // One side of the test comes back to the load through a body of register code, the other
    // leaves. Each side is first walked only as far as such code goes (for most loads, a few
    // instructions); whether the other side leaves is asked last, once everything else holds
    // (walking out of a loop is the costly part).
    let (target, fall) = (all[cb].near_branch_target(), all[cb].next_ip());
    let (body, exit) = match closed_region(all, fall, load.ip(), Some(info)) {
        Some(body) => (body, target),
        None => (closed_region(all, target, load.ip(), Some(info))?, fall),
    };
    // what calls leave in the registers they may change is the callee's business, as any
    // state a library keeps: only what the loop computes is followed into calls
    let mut changed: Regs = 0;
    let mut computed: Regs = 0;
    for &j in &body {
        let i = &all[j];
        if matches!(
            i.flow_control(),
            FlowControl::Call | FlowControl::IndirectCall
        ) {
            changed |= CALL_CLOBBERED;
            continue;
        }
        let u = uses(i, info);
        changed |= u.written | u.merged;
        computed |= u.written | u.merged;
    }
    let mut pre_written: Regs = 0;
    for i in pre {
        let u = uses(i, info);
        pre_written |= u.written | u.merged;
    }
    // what the loop computes: left out of the await hash, so it must not get out of the loop;
    // what calls leave behind stays in the hash (and tells iterations apart if it differs)
    let state = computed | pre_written;
    let value = value_test(pre, loaded, !(changed | pre_written | loaded), info)?;
    // no call in the body is passed anything the loop carries
    if !calls_see_no_state(all, &body, &all[cb], state & !value, info) {
        return None;
    }
    // the flags where the loop ends are the value test's, the same whenever it ends
    if !dead_at(all, exit, state & !value, false, returned, info) {
        return None;
    }
    if closed_region(all, exit, load.ip(), None).is_some() {
        return None; // both sides come back: the value does not end the loop
    }
    Some(state)
}

/// The registers holding the loaded value (or computed from it and what the loop `kept`)
/// after the straight-line code `pre` from the load to the value test, when the test's flags
/// come from them.
fn value_test(
    pre: &[Instruction],
    loaded: Regs,
    kept: Regs,
    info: &mut InstructionInfoFactory,
) -> Option<Regs> {
    let mut value = loaded;
    let mut flags_from_value = false;
    for i in pre.iter().filter(|i| !is_nop(i)) {
        let u = uses(i, info);
        let w = u.written | u.merged;
        if u.read & value != 0 && u.read & !(value | kept) == 0 && u.merged == 0 {
            value |= w;
            flags_from_value = flags_from_value || u.flags_written;
        } else {
            value &= !w;
            if u.flags_written {
                flags_from_value = false;
            }
        }
    }
    flags_from_value.then_some(value)
}

/// The instructions reachable from `from` without passing `load`, when every one of them can
/// come back to `load` (nothing leaves the loop that way) and is plain enough to follow; with
/// `info`, also only when each is one an await loop's body may have (`body_instruction`).
fn closed_region(
    all: &[Instruction],
    from: u64,
    load: u64,
    mut info: Option<&mut InstructionInfoFactory>,
) -> Option<Vec<usize>> {
    let mut found: Vec<usize> = Vec::new();
    let mut edges: Vec<(usize, Option<usize>)> = Vec::new(); // (from, to; None = the load)
    let mut work = vec![from];
    let mut seen = HashSet::new();
    while let Some(ip) = work.pop() {
        if ip == load || !seen.insert(ip) {
            continue;
        }
        if found.len() >= MAX_REGION {
            return None;
        }
        let j = instruction_at(all, ip)?;
        let i = &all[j];
        if info.as_mut().is_some_and(|info| !body_instruction(i, info)) {
            return None;
        }
        found.push(j);
        let next: Vec<u64> = match i.flow_control() {
            FlowControl::Next | FlowControl::Call => vec![i.next_ip()],
            FlowControl::IndirectCall if i.is_ip_rel_memory_operand() => vec![i.next_ip()],
            FlowControl::UnconditionalBranch if i.op0_kind() == OpKind::NearBranch64 => {
                vec![i.near_branch_target()]
            }
            FlowControl::ConditionalBranch => vec![i.near_branch_target(), i.next_ip()],
            _ => return None,
        };
        for n in next {
            edges.push((
                j,
                if n == load {
                    None
                } else {
                    instruction_at(all, n)
                },
            ));
            work.push(n);
        }
    }
    // every instruction found comes back to the load
    let mut back: HashSet<usize> = edges
        .iter()
        .filter(|(_, to)| to.is_none())
        .map(|(f, _)| *f)
        .collect();
    loop {
        let before = back.len();
        for (f, to) in &edges {
            if to.is_some_and(|t| back.contains(&t)) {
                back.insert(*f);
            }
        }
        if back.len() == before {
            break;
        }
    }
    (back.len() == found.len()).then_some(found)
}

/// May an await loop's body have `i`: register code, `pause` and other no-ops, calls through
/// a direct or RIP-relative address?
fn body_instruction(i: &Instruction, info: &mut InstructionInfoFactory) -> bool {
    match i.flow_control() {
        FlowControl::Call | FlowControl::IndirectCall => {
            i.op0_kind() == OpKind::NearBranch64
                || i.op0_kind() == OpKind::Memory && i.is_ip_rel_memory_operand()
        }
        _ if is_nop(i) => true,
        _ => !uses(i, info).memory && !i.has_lock_prefix(),
    }
}

/// Do the calls of `body` get none of `carried` (what the loop carries between iterations) in
/// their argument registers? Followed from the value test `cb`, each register marked with
/// whether it holds something computed from `carried`.
fn calls_see_no_state(
    all: &[Instruction],
    body: &[usize],
    cb: &Instruction,
    carried: Regs,
    info: &mut InstructionInfoFactory,
) -> bool {
    let in_body: HashSet<usize> = body.iter().copied().collect();
    let mut taint: HashMap<usize, Regs> = HashMap::new();
    let mut work: Vec<(u64, Regs)> =
        vec![(cb.near_branch_target(), carried), (cb.next_ip(), carried)];
    while let Some((ip, t)) = work.pop() {
        let Some(j) = instruction_at(all, ip).filter(|j| in_body.contains(j)) else {
            continue; // the load, or the way out
        };
        let old = taint.get(&j).copied();
        if old.is_some_and(|o| o | t == o) {
            continue;
        }
        let t = old.unwrap_or(0) | t;
        taint.insert(j, t);
        let i = &all[j];
        let u = uses(i, info);
        let mut out = t;
        if matches!(
            i.flow_control(),
            FlowControl::Call | FlowControl::IndirectCall
        ) {
            if t & ARGUMENTS != 0 {
                return false;
            }
            out &= !CALL_CLOBBERED;
        } else if u.read & t != 0 {
            out |= u.written | u.merged;
        } else {
            out &= !u.written;
        }
        match i.flow_control() {
            FlowControl::ConditionalBranch => {
                work.push((i.near_branch_target(), out));
                work.push((i.next_ip(), out));
            }
            FlowControl::UnconditionalBranch => work.push((i.near_branch_target(), out)),
            _ => work.push((i.next_ip(), out)),
        }
    }
    true
}

/// Are `regs` (and with `flags`, the status flags) written before they are read on every path
/// from `at`? A return hands the caller the registers `returned`.
fn dead_at(
    all: &[Instruction],
    at: u64,
    regs: Regs,
    flags: bool,
    returned: Regs,
    info: &mut InstructionInfoFactory,
) -> bool {
    // (instruction, registers still undecided, of those the ones whose low byte is written,
    // flags still undecided)
    let mut work = vec![(at, regs, 0, flags)];
    let mut seen = HashSet::new();
    let mut steps = 0;
    while let Some((ip, mut live, mut low8, mut flags)) = work.pop() {
        if live == 0 && !flags {
            continue;
        }
        if !seen.insert((ip, live, low8, flags)) {
            continue;
        }
        steps += 1;
        if steps > MAX_STEPS {
            return false;
        }
        let Some(j) = instruction_at(all, ip) else {
            return false;
        };
        let i = &all[j];
        let u = uses(i, info);
        if flags && u.flags_read {
            return false;
        }
        // a read of an undecided register, but for its low byte once that was written
        if live & (u.read_wide | (u.read & !low8)) != 0 {
            return false;
        }
        live &= !u.written;
        low8 = (low8 | u.low8_written) & live;
        if u.flags_all {
            flags = false;
        }
        match i.flow_control() {
            FlowControl::Next => work.push((i.next_ip(), live, low8, flags)),
            FlowControl::UnconditionalBranch if i.op0_kind() == OpKind::NearBranch64 => {
                work.push((i.near_branch_target(), live, low8, flags))
            }
            FlowControl::ConditionalBranch => {
                work.push((i.near_branch_target(), live, low8, flags));
                work.push((i.next_ip(), live, low8, flags));
            }
            // the caller keeps nothing in the scratch registers nor the flags; it reads what
            // the function returns
            FlowControl::Return if live & returned == 0 => {}
            // the callee may read its arguments; it keeps the callee-saved registers, and
            // what it returns in is written
            FlowControl::Call | FlowControl::IndirectCall if live & ARGUMENTS == 0 => {
                work.push((
                    i.next_ip(),
                    live & !CALL_CLOBBERED,
                    low8 & !CALL_CLOBBERED,
                    false,
                ));
            }
            _ => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests;
