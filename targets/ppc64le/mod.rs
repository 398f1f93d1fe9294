//! ppc64le: classify the program's memory instructions by their opcode fields (every POWER
//! instruction is one 32-bit word whose form fixes where its registers and displacement are),
//! disassemble them with capstone for messages, and relocate each into an out-of-line copy
//! followed by a branch back.
//!
//! What the classification knows: every load and store form the compilers emit for POWER9
//! (D, DS, DQ and X forms, with update, byte-reversed, floating-point, VSX), the
//! load-reserve/store-conditional pairs (`lwarx`/`stwcx.` and their byte, half, double and quad
//! forms) and the fences (`sync`, `lwsync`, `eieio`, `isync`). What it cannot run faithfully as
//! one access (load/store string, `dcbz`, Altivec's aligned and element forms, the
//! length-in-register VSX forms, the atomic memory operations) is a site of kind
//! `UNSUPPORTED`, an error if it touches shared memory, never a silent miss.

pub mod deps;
mod effects;
pub mod litmus;
mod may_deps;

use capstone::arch::ppc::ArchMode;
use capstone::arch::{BuildsCapstone, BuildsCapstoneEndian};
use capstone::{Capstone, Endian};

use crate::decode::{DecodedSection, DecodedSite, Decoder};
use crate::program::CodeSection;
use crate::site::{site_flags, site_kind, Site, REG_NONE};

pub struct Ppc64le;

/// Registers with a fixed role in the ELFv2 ABI: the stack pointer, the TOC pointer and the
/// thread pointer.
const SP: u8 = 1;
const TOC: u8 = 2;
const TP: u8 = 13;
/// gcc's frame pointer in code built without optimisation (`mr r31,r1` in the prologue)
const FP: u8 = 31;

/// A relocated copy: the instruction, then `b` back.
const COPY_LEN: usize = 8;

/// How an access forms its address.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Form {
    /// (RA|0) + 16-bit displacement
    D,
    /// (RA|0) + displacement with its low two bits cleared (they extend the opcode)
    Ds,
    /// (RA|0) + displacement with its low four bits cleared
    Dq,
    /// (RA|0) + RB
    X,
}

/// What the access does.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Access {
    Load,
    Store,
    /// A load that takes a reservation (`lwarx`): the runtime remembers what it read.
    LoadReserve,
    /// A store-conditional (`stwcx.`): it writes only if its thread's reservation holds.
    StoreConditional,
    /// Not one access the runtime can carry out as it is (see the module's comment).
    Unsupported,
}

/// One word's memory access: form, access, size in bytes, and whether it loads a general
/// register (whose old value is then dead).
#[derive(Clone, Copy, Debug)]
struct MemOp {
    form: Form,
    access: Access,
    size: u32,
    gpr: bool,
}

const fn op(form: Form, access: Access, size: u32, gpr: bool) -> Option<MemOp> {
    Some(MemOp {
        form,
        access,
        size,
        gpr,
    })
}

/// The memory access of a D, DS or DQ form word with primary opcode `po`.
fn d_form(po: u32, w: u32) -> Option<MemOp> {
    use Access::*;
    use Form::*;
    let rt = (w >> 21) & 31;
    match po {
        32 | 33 => op(D, Load, 4, true),          // lwz, lwzu
        34 | 35 => op(D, Load, 1, true),          // lbz, lbzu
        36 | 37 => op(D, Store, 4, false),        // stw, stwu
        38 | 39 => op(D, Store, 1, false),        // stb, stbu
        40..=43 => op(D, Load, 2, true),          // lhz, lhzu, lha, lhau
        44 | 45 => op(D, Store, 2, false),        // sth, sthu
        46 => op(D, Load, 4 * (32 - rt), false),  // lmw
        47 => op(D, Store, 4 * (32 - rt), false), // stmw
        48 | 49 => op(D, Load, 4, false),         // lfs, lfsu
        50 | 51 => op(D, Load, 8, false),         // lfd, lfdu
        52 | 53 => op(D, Store, 4, false),        // stfs, stfsu
        54 | 55 => op(D, Store, 8, false),        // stfd, stfdu
        56 => op(Dq, Load, 16, false),            // lq
        57 => match w & 3 {
            0 => op(Ds, Load, 16, false), // lfdp
            2 => op(Ds, Load, 8, false),  // lxsd
            3 => op(Ds, Load, 4, false),  // lxssp
            _ => None,
        },
        58 => match w & 3 {
            0 | 1 => op(Ds, Load, 8, true), // ld, ldu
            2 => op(Ds, Load, 4, true),     // lwa
            _ => None,
        },
        61 => match w & 3 {
            0 => op(Ds, Store, 16, false), // stfdp
            2 => op(Ds, Store, 8, false),  // stxsd
            3 => op(Ds, Store, 4, false),  // stxssp
            _ => match w & 7 {
                1 => op(Dq, Load, 16, false),  // lxv
                5 => op(Dq, Store, 16, false), // stxv
                _ => None,
            },
        },
        62 => match w & 3 {
            0 | 1 => op(Ds, Store, 8, false), // std, stdu
            2 => op(Ds, Store, 16, false),    // stq
            _ => None,
        },
        _ => None,
    }
}

/// The memory access of an X-form word of primary opcode 31 with extended opcode `xo`.
fn x_form(xo: u32) -> Option<MemOp> {
    use Access::*;
    use Form::X;
    match xo {
        23 | 55 | 341 | 373 => op(X, Load, 4, true), // lwzx, lwzux, lwax, lwaux
        87 | 119 => op(X, Load, 1, true),            // lbzx, lbzux
        279 | 311 | 343 | 375 => op(X, Load, 2, true), // lhzx, lhzux, lhax, lhaux
        21 | 53 => op(X, Load, 8, true),             // ldx, ldux
        151 | 183 => op(X, Store, 4, false),         // stwx, stwux
        215 | 247 => op(X, Store, 1, false),         // stbx, stbux
        407 | 439 => op(X, Store, 2, false),         // sthx, sthux
        149 | 181 => op(X, Store, 8, false),         // stdx, stdux
        790 => op(X, Load, 2, true),                 // lhbrx
        534 => op(X, Load, 4, true),                 // lwbrx
        532 => op(X, Load, 8, true),                 // ldbrx
        918 => op(X, Store, 2, false),               // sthbrx
        662 => op(X, Store, 4, false),               // stwbrx
        660 => op(X, Store, 8, false),               // stdbrx
        535 | 567 | 855 | 887 => op(X, Load, 4, false), // lfsx, lfsux, lfiwax, lfiwzx
        599 | 631 => op(X, Load, 8, false),          // lfdx, lfdux
        791 => op(X, Load, 16, false),               // lfdpx
        663 | 695 | 983 => op(X, Store, 4, false),   // stfsx, stfsux, stfiwx
        727 | 759 => op(X, Store, 8, false),         // stfdx, stfdux
        919 => op(X, Store, 16, false),              // stfdpx
        52 => op(X, LoadReserve, 1, true),           // lbarx
        116 => op(X, LoadReserve, 2, true),          // lharx
        20 => op(X, LoadReserve, 4, true),           // lwarx
        84 => op(X, LoadReserve, 8, true),           // ldarx
        276 => op(X, Unsupported, 16, false),        // lqarx (a register pair)
        694 => op(X, StoreConditional, 1, false),    // stbcx.
        726 => op(X, StoreConditional, 2, false),    // sthcx.
        150 => op(X, StoreConditional, 4, false),    // stwcx.
        214 => op(X, StoreConditional, 8, false),    // stdcx.
        182 => op(X, Unsupported, 16, false),        // stqcx.
        // VSX (XX1 form: the same fields, the target's high bit in bit 0)
        844 | 780 | 268 | 876 | 812 => op(X, Load, 16, false), // lxvd2x, lxvw4x, lxvx, lxvb16x, lxvh8x
        588 | 332 => op(X, Load, 8, false),                    // lxsdx, lxvdsx
        12 | 76 | 524 | 364 => op(X, Load, 4, false),          // lxsiwzx, lxsiwax, lxsspx, lxvwsx
        781 => op(X, Load, 1, false),                          // lxsibzx
        813 => op(X, Load, 2, false),                          // lxsihzx
        972 | 908 | 396 | 1004 | 940 => op(X, Store, 16, false), // stxvd2x, stxvw4x, stxvx, stxvb16x, stxvh8x
        716 => op(X, Store, 8, false),                           // stxsdx
        140 | 652 => op(X, Store, 4, false),                     // stxsiwx, stxsspx
        909 => op(X, Store, 1, false),                           // stxsibx
        941 => op(X, Store, 2, false),                           // stxsihx
        // Altivec (the address is rounded down to the element's alignment), the
        // length-in-register VSX forms, load/store string, dcbz (a whole cache block) and the
        // atomic memory operations
        103 | 359 | 7 | 39 | 71 | 231 | 487 | 135 | 167 | 199 | 269 | 301 | 397 | 429 | 597
        | 533 | 725 | 661 | 1014 | 582 | 614 | 710 | 742 => op(X, Unsupported, 0, false),
        _ => None,
    }
}

/// `Site::size` of a fence site (`event::FenceKind::from_code`): 1 `sync` (and `ptesync`),
/// 4 `lwsync`, 5 `eieio`, 6 `isync`.
fn fence(w: u32) -> Option<u32> {
    let po = w >> 26;
    let xo = (w >> 1) & 0x3ff;
    match (po, xo) {
        (31, 598) => Some(if (w >> 21) & 3 == 1 { 4 } else { 1 }),
        (31, 854) => Some(5),
        (19, 150) => Some(6),
        _ => None,
    }
}

/// The site of the instruction word `w` at `addr`, before its kind and operand are known.
fn word_site(addr: u64, w: u32) -> Site {
    Site {
        offset: addr,
        len: 4,
        base: REG_NONE,
        index: REG_NONE,
        scale: 1,
        orig: w as u8,
        ..Site::default()
    }
}

/// Whether a function's words `code` keep r31 as a frame pointer, as gcc does without
/// optimisation: `mr r31,r1` once the stack frame is made, and r31 written by nothing else
/// but `ld r31,d(r1)` (the caller's value, restored on the way out). Its accesses based on
/// r31 (with a displacement) are then its thread's own stack, as r1's are: not events but
/// where the runtime finds the stack shared, and no load a dependency can come from (a
/// dependency through memory is none, as in herd).
pub(super) fn keeps_frame_pointer(code: &[u32]) -> bool {
    const MR_R31_R1: u32 = 0x7c3f_0b78;
    let fp = FP as u32;
    let restores =
        |w: u32| w >> 26 == 58 && w & 3 == 0 && (w >> 21) & 31 == fp && (w >> 16) & 31 == 1;
    let writes_r31 = |w: u32| {
        let (po, rt, ra) = (w >> 26, (w >> 21) & 31, (w >> 16) & 31);
        let xo = (w >> 1) & 0x3ff;
        // update forms write their base
        let update = matches!(po, 33 | 35 | 37 | 39 | 41 | 43 | 45 | 49 | 51 | 53 | 55)
            || (matches!(po, 58 | 62) && w & 3 == 1)
            || (po == 31
                && matches!(
                    xo,
                    53 | 55 | 119 | 181 | 183 | 247 | 311 | 375 | 439 | 567 | 631 | 695 | 759
                ));
        if effects::branch(w, 0).is_some() {
            return false; // (a call's callee keeps r31)
        }
        if classify(w, 0, false).is_some_and(|s| s.kind != site_kind::FENCE) {
            // a memory access writes its target if it loads one, its base if an update form
            return po == 46 || (update && ra == fp) || (effects::loads_gpr(w) && rt == fp);
        }
        match effects::effect(w) {
            effects::Effect::Gpr { dst, .. } | effects::Effect::GprAndCr0 { dst, .. } => dst == fp,
            effects::Effect::Compare { .. }
            | effects::Effect::FloatCompare { .. }
            | effects::Effect::Nothing => false,
            // (what it writes is not known: a register field that names r31 may be it)
            effects::Effect::Unknown => rt == fp || ra == fp,
        }
    };
    code.contains(&MR_R31_R1)
        && code
            .iter()
            .all(|&w| w == MR_R31_R1 || restores(w) || !writes_r31(w))
}

/// Per word of a section's `words` (at `addr`), whether it lies in a function that keeps r31
/// as its frame pointer ([`keeps_frame_pointer`]).
fn frame_pointer_words(words: &[u32], addr: u64, functions: &[(u64, u64)]) -> Vec<bool> {
    let mut out = vec![false; words.len()];
    for &(lo, hi) in functions {
        let (Some(a), Some(b)) = (lo.checked_sub(addr), hi.checked_sub(addr)) else {
            continue;
        };
        let (a, b) = ((a / 4) as usize, ((b / 4) as usize).min(words.len()));
        if a < b && keeps_frame_pointer(&words[a..b]) {
            out[a..b].iter_mut().for_each(|x| *x = true);
        }
    }
    out
}

/// Classify the instruction word `w` at `addr` (in a function that keeps r31 as its frame
/// pointer: `frame_pointer`); None when it cannot touch memory.
fn classify(w: u32, addr: u64, frame_pointer: bool) -> Option<Site> {
    let mut site = word_site(addr, w);
    if let Some(kind) = fence(w) {
        site.kind = site_kind::FENCE;
        site.size = kind;
        return Some(site);
    }
    let po = w >> 26;
    let m = if po == 31 {
        x_form((w >> 1) & 0x3ff)?
    } else {
        d_form(po, w)?
    };
    let rt = ((w >> 21) & 31) as u8;
    let ra = ((w >> 16) & 31) as u8;
    let rb = ((w >> 11) & 31) as u8;
    // RA = 0 means the value 0, not r0
    site.base = if ra == 0 { REG_NONE } else { ra };
    match m.form {
        Form::D => site.disp = (w & 0xffff) as u16 as i16 as i64,
        Form::Ds => site.disp = (w & 0xfffc) as u16 as i16 as i64,
        Form::Dq => site.disp = (w & 0xfff0) as u16 as i16 as i64,
        Form::X => site.index = rb,
    }
    site.size = m.size;
    let reserve = matches!(m.access, Access::LoadReserve | Access::StoreConditional);
    let own_frame = frame_pointer && ra == FP && m.form != Form::X;
    if (matches!(ra, SP | TP) || own_frame) && !reserve {
        // the thread's own stack or TLS (a reservation's pair is always patched: the runtime
        // carries out the store-conditional the trap would break)
        site.flags = site_flags::PRIVATE;
    }
    site.kind = match m.access {
        Access::Load => site_kind::LOAD,
        Access::Store => site_kind::STORE,
        Access::LoadReserve => {
            site.flags |= site_flags::RESERVE;
            site_kind::LOAD
        }
        Access::StoreConditional => {
            site.flags |= site_flags::RESERVE;
            site_kind::CAS
        }
        Access::Unsupported => site_kind::UNSUPPORTED,
    };
    if site.size > 64 {
        site.kind = site_kind::UNSUPPORTED;
    }
    if site.kind == site_kind::UNSUPPORTED && site.flags & site_flags::PRIVATE != 0 {
        return None; // its thread's own memory
    }
    // a general register loaded whole (not also the base or the index): its old value is
    // dead, so await detection must not tell two states apart by it
    let index_reg = (m.form == Form::X).then_some(rb);
    if m.gpr && rt < 16 && rt != ra && Some(rt) != index_reg && m.access != Access::Unsupported {
        site.dead_regs = 1 << rt;
    }
    Some(site)
}

/// `ld r12,d(r2); mtctr r12; bctr`: a linker stub's load of a function's address from the
/// procedure linkage table (read-only once the loader bound it), not the program's access.
fn plt_stub_load(words: &[u32], i: usize) -> bool {
    const MTCTR_R12: u32 = 0x7d89_03a6;
    const BCTR: u32 = 0x4e80_0420;
    let w = words[i];
    let ld_r12_toc =
        w >> 26 == 58 && w & 3 == 0 && (w >> 21) & 31 == 12 && (w >> 16) & 31 == TOC as u32;
    ld_r12_toc && words.get(i + 1) == Some(&MTCTR_R12) && words.get(i + 2) == Some(&BCTR)
}

fn words_of(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn capstone() -> Option<Capstone> {
    Capstone::new()
        .ppc()
        .mode(ArchMode::Mode64)
        .endian(Endian::Little)
        .build()
        .ok()
}

impl Decoder for Ppc64le {
    fn decode(&self, section: &CodeSection, private: bool) -> DecodedSection {
        let words = words_of(&section.bytes);
        let frame_pointer = frame_pointer_words(&words, section.addr, &section.functions);
        let mut sites = Vec::new();
        for (i, &w) in words.iter().enumerate() {
            let addr = section.addr + 4 * i as u64;
            let Some(site) = classify(w, addr, frame_pointer[i]) else {
                continue;
            };
            if (!private && site.flags & site_flags::PRIVATE != 0) || plt_stub_load(&words, i) {
                continue;
            }
            sites.push(DecodedSite {
                site,
                bytes: w.to_le_bytes().to_vec(),
            });
        }
        // (x86-64's hook shortcut for programs without wide vector state does not apply)
        DecodedSection {
            sites,
            wide_state: true,
        }
    }

    fn site_at(&self, section: &CodeSection, addr: u64, kind: u8) -> Option<DecodedSite> {
        let start = addr.checked_sub(section.addr)? as usize;
        let words = words_of(section.bytes.get(start..)?);
        // An ELFv2 function that sets up its TOC pointer (`addis r2,r12,..; addi r2,r2,..`) is
        // entered past those two instructions by calls from its own module: hook the local
        // entry, which every call reaches.
        let addis_r2_r12 = |w: u32| w >> 26 == 15 && (w >> 21) & 31 == 2 && (w >> 16) & 31 == 12;
        let addi_r2_r2 = |w: u32| w >> 26 == 14 && (w >> 21) & 31 == 2 && (w >> 16) & 31 == 2;
        let skip = match words.as_slice() {
            [a, b, ..] if addis_r2_r12(*a) && addi_r2_r2(*b) => 2,
            _ => 0,
        };
        let w = *words.get(skip)?;
        Some(DecodedSite {
            site: Site {
                kind,
                ..word_site(addr + 4 * skip as u64, w)
            },
            bytes: w.to_le_bytes().to_vec(),
        })
    }

    fn returns_in(&self, section: &CodeSection, lo: u64, hi: u64) -> Vec<u64> {
        const BLR: u32 = 0x4e80_0020;
        let (Some(start), Some(end)) = (lo.checked_sub(section.addr), hi.checked_sub(section.addr))
        else {
            return Vec::new();
        };
        let Some(bytes) = section.bytes.get(start as usize..end as usize) else {
            return Vec::new();
        };
        words_of(bytes)
            .iter()
            .enumerate()
            .filter(|(_, &w)| w == BLR)
            .map(|(i, _)| lo + 4 * i as u64)
            .collect()
    }

    /// The instruction as it is (no load or store is relative to its own address), then
    /// `b` back to the one after the original.
    fn relocate(
        &self,
        site: &DecodedSite,
        bias: u64,
        at: u64,
        then: Option<u64>,
    ) -> Result<Vec<u8>, String> {
        let back = then.unwrap_or(site.site.offset.wrapping_add(bias).wrapping_add(4));
        let from = at.wrapping_add(4);
        let disp = back.wrapping_sub(from) as i64;
        if !(-(1 << 25)..(1 << 25)).contains(&disp) {
            return Err(format!(
                "cannot relocate `{}` at {:#x}: the copy is out of a branch's reach",
                self.disassemble(site),
                site.site.offset.wrapping_add(bias)
            ));
        }
        let branch = 0x4800_0000u32 | (disp as u32 & 0x03ff_fffc);
        let mut code = Vec::with_capacity(COPY_LEN);
        code.extend_from_slice(&site.bytes[..4]);
        code.extend_from_slice(&branch.to_le_bytes());
        Ok(code)
    }

    fn dependencies(
        &self,
        section: &CodeSection,
    ) -> std::collections::BTreeMap<u64, crate::decode::SiteDependencies> {
        deps::dependencies(section)
    }

    fn copy_stride(&self) -> usize {
        COPY_LEN
    }

    fn stub_len(&self) -> usize {
        96
    }

    fn disassemble(&self, site: &DecodedSite) -> String {
        let text = capstone().and_then(|cs| {
            let insns = cs.disasm_count(&site.bytes, site.site.offset, 1).ok()?;
            let i = insns.iter().next()?;
            Some(format!(
                "{} {}",
                i.mnemonic().unwrap_or(""),
                i.op_str().unwrap_or("")
            ))
        });
        match text {
            Some(t) => t.trim().to_string(),
            None => format!(
                ".long {:#010x}",
                u32::from_le_bytes(site.bytes[..4].try_into().unwrap_or_default())
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(w: u32) -> Site {
        classify(w, 0x1000, false).expect("a memory instruction")
    }

    #[test]
    fn load_and_store_forms() {
        // lwz r9,8(r10)
        let s = site(0x812a_0008);
        assert_eq!(
            (s.kind, s.size, s.base, s.index, s.disp),
            (site_kind::LOAD, 4, 10, REG_NONE, 8)
        );
        assert_eq!(s.dead_regs, 1 << 9);
        // stw r9,-4(r31)
        let s = site(0x913f_fffc);
        assert_eq!(
            (s.kind, s.size, s.base, s.disp),
            (site_kind::STORE, 4, 31, -4)
        );
        // ld r9,16(r3) (DS form)
        let s = site(0xe923_0010);
        assert_eq!(
            (s.kind, s.size, s.base, s.disp),
            (site_kind::LOAD, 8, 3, 16)
        );
        // stdu r1,-48(r1): the stack
        assert_eq!(
            site(0xf821_ffd1).flags & site_flags::PRIVATE,
            site_flags::PRIVATE
        );
        // lwzx r9,0,r4: RA = 0 is no base
        let s = site(0x7d20_202e);
        assert_eq!(
            (s.kind, s.size, s.base, s.index),
            (site_kind::LOAD, 4, REG_NONE, 4)
        );
        // stxvd2x vs0,0,r9
        let s = site(0x7c00_4f98);
        assert_eq!((s.kind, s.size), (site_kind::STORE, 16));
    }

    #[test]
    fn reservations_and_fences() {
        // lwarx r9,0,r3 and stwcx. r10,0,r3
        let l = site(0x7d20_1828);
        assert_eq!(
            (l.kind, l.size, l.flags),
            (site_kind::LOAD, 4, site_flags::RESERVE)
        );
        let s = site(0x7d40_192d);
        assert_eq!(
            (s.kind, s.size, s.flags),
            (site_kind::CAS, 4, site_flags::RESERVE)
        );
        // sync, lwsync, isync
        assert_eq!(
            (site(0x7c00_04ac).kind, site(0x7c00_04ac).size),
            (site_kind::FENCE, 1)
        );
        assert_eq!(site(0x7c20_04ac).size, 4);
        assert_eq!(site(0x4c00_012c).size, 6);
        // dcbz r0,r9 on shared memory cannot be one access
        assert_eq!(site(0x7c00_4fec).kind, site_kind::UNSUPPORTED);
        // add r3,r3,r4 is no memory instruction
        assert!(classify(0x7c63_2214, 0, false).is_none());
    }

    #[test]
    fn branch_back_reaches_the_next_instruction() {
        let s = DecodedSite {
            site: site(0x812a_0008),
            bytes: 0x812a_0008u32.to_le_bytes().to_vec(),
        };
        let code = Ppc64le.relocate(&s, 0x10000, 0x20000, None).unwrap();
        let b = u32::from_le_bytes(code[4..8].try_into().unwrap());
        // from 0x20004 back to 0x11004
        assert_eq!(
            b,
            0x4800_0000 | ((0x11004i64 - 0x20004) as u32 & 0x03ff_fffc)
        );
        assert_eq!(Ppc64le.disassemble(&s), "lwz r9, 8(r10)");
    }
}
