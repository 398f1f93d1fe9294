//! What a function of the symbol table lets the x86-64 decoder assume beyond one instruction:
//! that nothing jumps into the instructions after a short site, so its patch may cover them
//! ([`Spans`]), and that rbp holds the function's frame pointer, so rbp-based operands are the
//! thread's own stack ([`frame_pointer_functions`]).

use std::collections::HashSet;

use iced_x86::{FlowControl, Instruction, InstructionInfoFactory, Mnemonic, OpAccess, Register};

use super::{relative_branch, HOOK_LEN};
use crate::program::CodeSection;
use crate::site::{site_kind, Site};

/// A jump whose copy elsewhere reaches the same target: `jmp` or `jcc` with an 8- or 32-bit
/// displacement (not `loop` or `jrcxz`, which have no 32-bit form).
pub(super) fn relocatable_jump(i: &Instruction) -> bool {
    relative_branch(i) && (i.is_jcc_short_or_near() || i.is_jmp_short_or_near())
}

/// Patches over more than one instruction. A site shorter than a jump would be a trap (a signal
/// per event, ~4.5 µs); its patch may also cover the instructions after it, which its copy
/// then runs, when nothing can jump into the bytes it covers: they are in a function of the
/// symbol table (none in a program whose exception tables could not be read) that has no
/// indirect jump (a switch's table may point anywhere in it), no direct branch of the section
/// and no landing pad of its exception tables lands on them, and they are not sites
/// themselves, nor branches but for a direct jump (conditional or not) that ends the patch.
///
/// A patch may also end inside the next site, when that site is plain (a load, store or
/// read-modify-write, as this one) and reaches past a jump's length: the patch's copy then
/// goes on to the next site's stub instead of its bytes ([`crate::site::site_flags::CHAINED`]).
pub(super) struct Spans {
    /// Instruction index of each site -> the length its patch covers, and the length of what
    /// its copy runs (less, up to the next site, where it ends in that site).
    len: std::collections::HashMap<usize, (usize, usize)>,
}

impl Spans {
    pub(super) fn new(
        section: &CodeSection,
        all: &[Instruction],
        sites: &[(usize, Site)],
    ) -> Spans {
        let mut len = std::collections::HashMap::new();
        if section.functions.is_empty() || sites.iter().all(|(k, _)| all[*k].len() >= HOOK_LEN) {
            return Spans { len };
        }
        // (far branches do not decode in 64-bit code)
        let targets: HashSet<u64> = all
            .iter()
            .filter(|i| relative_branch(i))
            .map(|i| i.near_branch_target())
            .chain(section.landing_pads.iter().copied())
            .collect();
        let indirect: Vec<u64> = all
            .iter()
            .filter(|i| i.flow_control() == FlowControl::IndirectBranch)
            .map(|i| i.ip())
            .collect();
        let kinds: std::collections::HashMap<usize, u8> =
            sites.iter().map(|(k, site)| (*k, site.kind)).collect();
        let plain = |k: usize| {
            kinds
                .get(&k)
                .is_some_and(|&kind| site_kind::chainable(kind))
        };
        let funcs = &section.functions;
        for &(k, _) in sites.iter().filter(|(k, _)| all[*k].len() < HOOK_LEN) {
            let ip = all[k].ip();
            let f = funcs.partition_point(|f| f.0 <= ip);
            let Some(&(lo, hi)) = f.checked_sub(1).map(|f| &funcs[f]) else {
                continue;
            };
            if ip >= hi || indirect.iter().any(|&a| a >= lo && a < hi) {
                continue;
            }
            let mut span = all[k].len();
            let mut runs = None;
            for (j, next) in all.iter().enumerate().skip(k + 1) {
                let ok = !next.is_invalid()
                    && next
                        .ip()
                        .checked_add(next.len() as u64)
                        .is_some_and(|e| e <= hi)
                    && !targets.contains(&next.ip());
                if span >= HOOK_LEN || !ok {
                    break;
                }
                if kinds.contains_key(&j) {
                    // the next site: the patch ends in it, past a jump's length
                    if plain(k) && plain(j) && span + next.len() >= HOOK_LEN {
                        runs = Some(span);
                        span += next.len();
                    }
                    break;
                }
                if next.flow_control() == FlowControl::Next {
                    span += next.len();
                } else {
                    // a direct jump ends the span: its copy jumps to the same target
                    if relocatable_jump(next) {
                        span += next.len();
                    }
                    break;
                }
            }
            if span >= HOOK_LEN {
                len.insert(k, (span, runs.unwrap_or(span)));
            }
        }
        Spans { len }
    }

    /// The length the patch of the site at instruction `k` covers, if more than its own, and
    /// the length of what its copy runs (less where the patch ends in the next site).
    pub(super) fn of(&self, k: usize) -> Option<(usize, usize)> {
        self.len.get(&k).copied()
    }
}

/// The functions of `section` (from the symbol table) in which rbp holds the frame pointer
/// from their prologue on, as `-O0` and `-fno-omit-frame-pointer` code keeps it: each begins
/// `push rbp; mov rbp, rsp` (after an `endbr64`), nothing else in it writes rbp but a
/// `pop rbp` or `leave` that the function's exit follows at once (`ret`, a jump out of it, or
/// a tail call through a pointer),
/// no other function begins inside it, and no branch from outside lands in it. Then, past the
/// prologue, an rbp-based operand addresses the thread's own stack. `all`: the section's
/// instructions in order.
pub(super) fn frame_pointer_functions(
    section: &CodeSection,
    all: &[Instruction],
    info: &mut InstructionInfoFactory,
) -> Vec<(u64, u64)> {
    let writes_rbp = |i: &Instruction, info: &mut InstructionInfoFactory| {
        info.info(i).used_registers().iter().any(|r| {
            r.register().full_register() == Register::RBP
                && !matches!(r.access(), OpAccess::Read | OpAccess::CondRead)
        })
    };
    // (sorted, as the symbols are)
    let starts: Vec<u64> = section.symbols.iter().map(|f| f.0).collect();
    // direct branches by target: (target, source)
    let mut branches: Vec<(u64, u64)> = all
        .iter()
        .filter(|i| relative_branch(i))
        .map(|i| (i.near_branch_target(), i.ip()))
        .collect();
    branches.sort_unstable();
    // (what lies strictly inside lo..hi of a sorted list of pairs)
    let inside = |v: &[(u64, u64)], lo: u64, hi: u64| {
        let from = v.partition_point(|x| x.0 <= lo);
        let to = v.partition_point(|x| x.0 < hi);
        from.min(to)..to
    };
    let mut out = Vec::new();
    for &(lo, hi) in &section.symbols {
        let first = all.partition_point(|i| i.ip() < lo);
        let last = all.partition_point(|i| i.ip() < hi);
        let body = &all[first..last];
        let another_begins = starts[starts.partition_point(|&s| s <= lo)..]
            .first()
            .is_some_and(|&s| s < hi);
        let entered = branches[inside(&branches, lo, hi)]
            .iter()
            .any(|&(_, from)| from < lo || from >= hi);
        if body.first().is_none_or(|i| i.ip() != lo)
            || body.iter().any(|i| i.is_invalid())
            || another_begins
            || entered
        {
            continue;
        }
        let skip = usize::from(body[0].mnemonic() == Mnemonic::Endbr64);
        let prologue = body.get(skip..skip + 2).is_some_and(|p| {
            p[0].mnemonic() == Mnemonic::Push
                && p[0].op0_register() == Register::RBP
                && p[1].mnemonic() == Mnemonic::Mov
                && p[1].op0_register() == Register::RBP
                && p[1].op1_register() == Register::RSP
        });
        if !prologue {
            continue;
        }
        let leaves = |k: usize| {
            body.get(k + 1)
                .is_some_and(|next| match next.flow_control() {
                    // (a tail call through a pointer: a jump table is not jumped through after the
                    // frame is gone)
                    FlowControl::Return | FlowControl::IndirectBranch => true,
                    FlowControl::UnconditionalBranch if relative_branch(next) => {
                        let to = next.near_branch_target();
                        to < lo || to >= hi
                    }
                    _ => false,
                })
        };
        let kept = body.iter().enumerate().skip(skip + 2).all(|(k, i)| {
            !writes_rbp(i, info)
                || (matches!(i.mnemonic(), Mnemonic::Pop | Mnemonic::Leave)
                    && (i.mnemonic() == Mnemonic::Leave || i.op0_register() == Register::RBP)
                    && leaves(k))
        });
        if kept {
            // (the frame pointer holds after the prologue)
            out.push((body[skip + 1].ip() + body[skip + 1].len() as u64, hi));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::decode::Decoder;
    use crate::program::CodeSection;
    use crate::site::site_flags;

    use super::super::X86_64;

    /// The offsets and flags of the sites of one function, `code` at 0x1000, found in the
    /// symbol table (`private`: with the thread's own accesses).
    fn function_sites(code: &[u8], private: bool) -> Vec<(u64, u8)> {
        let section = CodeSection {
            name: ".text".into(),
            addr: 0x1000,
            bytes: code.to_vec(),
            landing_pads: vec![],
            functions: vec![],
            symbols: vec![(0x1000, 0x1000 + code.len() as u64)],
            one_word_returns: vec![],
        };
        (X86_64.decode(&section, private).sites.iter())
            .map(|s| (s.site.offset - 0x1000, s.site.flags))
            .collect()
    }

    #[test]
    fn frame_pointer_operands_are_private_where_rbp_keeps_the_frame() {
        const PROLOGUE: [u8; 4] = [0x55, 0x48, 0x89, 0xe5]; // push rbp; mov rbp, rsp
        const STORE: [u8; 3] = [0x89, 0x45, 0xfc]; // mov [rbp-4], eax
        let function = |parts: &[&[u8]]| parts.concat();
        // the frame kept to `pop rbp; ret`, `leave; ret` or a tail call: the thread's own
        for exit in [&[0x5d, 0xc3][..], &[0xc9, 0xc3], &[0x5d, 0xff, 0xe0]] {
            let code = function(&[&PROLOGUE, &STORE, exit]);
            assert_eq!(function_sites(&code, false), vec![], "{code:x?}");
            assert_eq!(
                function_sites(&code, true),
                vec![(4, site_flags::PRIVATE)],
                "{code:x?}"
            );
            // (after endbr64 too)
            let code = function(&[&[0xf3, 0x0f, 0x1e, 0xfa], &PROLOGUE, &STORE, exit]);
            assert_eq!(function_sites(&code, false), vec![], "{code:x?}");
        }
        // rbp a general register: a site (mov rbp, rdi; or no prologue; or a frame given up
        // before the function ends)
        for code in [
            function(&[&PROLOGUE, &[0x48, 0x89, 0xfd], &STORE, &[0x5d, 0xc3]]),
            function(&[&STORE, &[0xc3]]),
            function(&[&[0x55], &STORE, &[0x5d, 0xc3]]),
            function(&[&PROLOGUE, &[0x5d], &STORE, &[0xc3]]),
            function(&[&PROLOGUE, &[0x5d, 0x90], &STORE, &[0xc3]]),
        ] {
            let sites = function_sites(&code, false);
            assert_eq!(sites.len(), 1, "{code:x?}: {sites:?}");
            assert_eq!(sites[0].1 & site_flags::PRIVATE, 0, "{code:x?}");
        }
        // a branch from outside into the function: its frame pointer is not known there
        let mut code = function(&[&PROLOGUE, &STORE, &[0x5d, 0xc3]]);
        code.extend([0xeb, 0xf9]); // jmp back to the store, from past the function's end
        let section = CodeSection {
            name: ".text".into(),
            addr: 0x1000,
            bytes: code.clone(),
            landing_pads: vec![],
            functions: vec![],
            symbols: vec![(0x1000, 0x1009)],
            one_word_returns: vec![],
        };
        let sites = X86_64.decode(&section, false).sites;
        assert_eq!(sites.len(), 1, "{sites:?}");
    }
}
