//! x86-64: classify the program's memory instructions with iced-x86 and relocate them into
//! out-of-line copies.

mod functions;
pub mod litmus;
mod spin;

use iced_x86::{
    CodeSize, ConditionCode, Decoder as IcedDecoder, DecoderOptions, FlowControl, Formatter,
    Instruction, InstructionInfoFactory, IntelFormatter, Mnemonic, OpAccess, OpKind, Register,
    UsedMemory,
};

use crate::decode::{DecodedSection, DecodedSite, Decoder};
use crate::program::CodeSection;
use crate::site::{site_flags, site_kind, Site, REG_NONE, REG_RIP};
use functions::{frame_pointer_functions, relocatable_jump, Spans};

pub struct X86_64;

/// The length of the jump a hook writes over a site (`jmp rel32`; the runtime's
/// SMC_HOOK_LEN, targets/x86_64/hook.h).
const HOOK_LEN: usize = 5;

/// Does `i` branch relative to its own address (a copy elsewhere would go astray)?
fn relative_branch(i: &Instruction) -> bool {
    (0..i.op_count()).any(|o| {
        matches!(
            i.op_kind(o),
            OpKind::NearBranch16
                | OpKind::NearBranch32
                | OpKind::NearBranch64
                | OpKind::FarBranch16
                | OpKind::FarBranch32
        )
    })
}

/// Is this memory operand private to the thread? Stack-pointer-based operands are the thread's
/// own frame, and so are frame-pointer-based ones where rbp holds the frame pointer
/// (`in_frame`); fs/gs-based ones are thread-local storage.
fn is_thread_local(m: &UsedMemory, in_frame: bool) -> bool {
    matches!(m.segment(), Register::FS | Register::GS)
        || matches!(m.base(), Register::RSP | Register::ESP | Register::SP)
        || (in_frame && m.base() == Register::RBP && m.segment() != Register::GS)
        || m.access() == OpAccess::NoMemAccess
}

fn gpr_number(r: Register) -> Option<(u8, bool)> {
    if r == Register::None {
        return Some((REG_NONE, false));
    }
    if r.is_gpr64() {
        return Some((r.number() as u8, false));
    }
    if r.is_gpr32() {
        return Some((r.number() as u8, true));
    }
    None
}

/// Classify one instruction (`in_frame`: rbp holds its function's frame pointer there); None
/// when it cannot touch shared memory.
pub fn classify(
    i: &Instruction,
    info: &mut InstructionInfoFactory,
    in_frame: bool,
) -> Option<Site> {
    let mut site = Site {
        offset: i.ip(),
        len: i.len() as u8,
        base: REG_NONE,
        index: REG_NONE,
        scale: 1,
        ..Site::default()
    };
    let fence = match i.mnemonic() {
        Mnemonic::Mfence => 1,
        Mnemonic::Sfence => 2,
        Mnemonic::Lfence => 3,
        _ => 0,
    };
    if fence != 0 {
        site.kind = site_kind::FENCE;
        site.size = fence;
        return Some(site);
    }
    if i.is_string_instruction() {
        return classify_string(i, site);
    }
    let used_info = info.info(i);
    let used = used_info.used_memory().to_vec();
    // Registers written whole (64-bit, or 32-bit, which zero-extends) and never read: their old
    // value is dead, so await detection must not tell two states apart by it.
    let mut dead: u16 = 0;
    let mut read: u16 = 0;
    for r in used_info.used_registers() {
        let reg = r.register();
        if !reg.is_gpr64() && !reg.is_gpr32() && !reg.is_gpr16() && !reg.is_gpr8() {
            continue;
        }
        let bit = 1u16 << reg.full_register().number();
        match r.access() {
            OpAccess::Write if reg.is_gpr64() || reg.is_gpr32() => dead |= bit,
            OpAccess::Write | OpAccess::CondWrite => {}
            _ => read |= bit,
        }
    }
    site.dead_regs = dead & !read;
    let shared: Vec<&UsedMemory> = used
        .iter()
        .filter(|m| !is_thread_local(m, in_frame))
        .collect();
    let locked = i.has_lock_prefix() || (i.mnemonic() == Mnemonic::Xchg && !used.is_empty());
    let m = match shared.as_slice() {
        // a locked instruction on the stack is still a full fence (gcc's `lock or [rsp], 0`)
        [] if locked => {
            site.kind = site_kind::FENCE;
            site.size = 1;
            return Some(site);
        }
        [] => {
            // An explicit operand on the thread's own stack or TLS: a private site, patched
            // only once some of that memory is shared (push, pop, call and ret, whose stack
            // operand is implicit, never are).
            let explicit = (0..i.op_count()).any(|o| i.op_kind(o) == OpKind::Memory);
            let private: Vec<&UsedMemory> = used
                .iter()
                .filter(|m| m.access() != OpAccess::NoMemAccess && m.segment() != Register::GS)
                .collect();
            match private.as_slice() {
                [m] if explicit => {
                    site.flags = site_flags::PRIVATE;
                    if m.segment() == Register::FS {
                        site.flags |= site_flags::FS;
                    }
                    *m
                }
                _ => return None,
            }
        }
        [m] => *m,
        [m, ..] => {
            // two shared operands (movs, push [mem] with a non-rsp stack): cannot be one event
            site.kind = site_kind::UNSUPPORTED;
            *m
        }
    };
    let (base, b32) = gpr_number(m.base()).unwrap_or((REG_NONE, false));
    let (index, i32_) = gpr_number(m.index()).unwrap_or((REG_NONE, false));
    let vector_index = m.index() != Register::None && !m.index().is_gpr();
    // iced gives a RIP-relative operand as an absolute link-time address (no base), which the
    // runtime moves by the load bias; a true absolute address (`mov [0], eax`) stays put.
    site.base = if m.base() == Register::None && i.is_ip_rel_memory_operand() {
        REG_RIP
    } else {
        base
    };
    site.index = index;
    site.scale = m.scale() as u8;
    site.disp = m.displacement() as i64;
    site.addr32 = (b32 || i32_ || m.address_size() == CodeSize::Code32) as u8;
    site.size = m.memory_size().size() as u32;
    if site.kind == site_kind::UNSUPPORTED {
        return Some(site);
    }
    let unsupported = vector_index || site.size == 0 || site.size > 64;
    if unsupported && site.flags & site_flags::PRIVATE != 0 {
        return None; // its thread's own memory, as before private sites existed
    }
    site.kind = if unsupported {
        site_kind::UNSUPPORTED
    } else {
        match m.access() {
            OpAccess::Read | OpAccess::CondRead => site_kind::LOAD,
            OpAccess::Write | OpAccess::CondWrite => site_kind::STORE,
            OpAccess::ReadWrite | OpAccess::ReadCondWrite if locked => match i.mnemonic() {
                Mnemonic::Cmpxchg => site_kind::CAS,
                Mnemonic::Cmpxchg8b | Mnemonic::Cmpxchg16b => site_kind::CAS2,
                _ => site_kind::ATOMIC,
            },
            OpAccess::ReadWrite | OpAccess::ReadCondWrite => site_kind::RMW,
            _ => return None,
        }
    };
    Some(site)
}

/// A string instruction, which the runtime carries out itself (runtime/trap.c, string_insn.h);
/// None for `ins` and `outs` (port I/O: no user program runs them). One with a segment
/// override to fs or gs, or with 32-bit addresses, is unsupported.
fn classify_string(i: &Instruction, mut site: Site) -> Option<Site> {
    use crate::site::{rep_prefix, string_op};
    use Mnemonic::*;
    site.string_op = match i.mnemonic() {
        Movsb | Movsw | Movsd | Movsq => string_op::MOVS,
        Stosb | Stosw | Stosd | Stosq => string_op::STOS,
        Lodsb | Lodsw | Lodsd | Lodsq => string_op::LODS,
        Cmpsb | Cmpsw | Cmpsd | Cmpsq => string_op::CMPS,
        Scasb | Scasw | Scasd | Scasq => string_op::SCAS,
        _ => return None,
    };
    site.size = i.memory_size().size() as u32;
    site.rep = if i.has_repne_prefix() {
        rep_prefix::REPNE
    } else if i.has_rep_prefix() {
        rep_prefix::REPE
    } else {
        rep_prefix::NONE
    };
    let narrow = (0..i.op_count()).any(|o| {
        matches!(
            i.op_kind(o),
            OpKind::MemorySegSI | OpKind::MemorySegESI | OpKind::MemoryESDI | OpKind::MemoryESEDI
        )
    });
    let segment = matches!(i.segment_prefix(), Register::FS | Register::GS);
    site.kind = if narrow || segment {
        site.base = 7; // rdi: the address the error names
        site.addr32 = narrow as u8;
        site_kind::UNSUPPORTED
    } else {
        site_kind::STRING
    };
    Some(site)
}

/// Does `i` read or write state beyond the general registers, flags, xmm0-15 and MXCSR: x87
/// or MMX (one register file), the upper halves of the ymm/zmm registers, zmm16-31 or the
/// opmask registers? Every VEX, EVEX, XOP, 3DNow! or MVEX instruction may; of the legacy ones
/// the x87, MMX, 3DNow! and state save/restore instructions, and any with an MMX or x87
/// register operand (SSE conversions from and to MMX registers).
pub fn touches_wide_state(i: &Instruction) -> bool {
    use iced_x86::{CpuidFeature as F, EncodingKind};
    if i.encoding() != EncodingKind::Legacy {
        return true;
    }
    let wide_feature = i.cpuid_features().iter().any(|f| {
        matches!(
            f,
            F::FPU
                | F::FPU287
                | F::FPU287XL_ONLY
                | F::FPU387
                | F::FPU387SL_ONLY
                | F::CYRIX_FPU
                | F::MMX
                | F::D3NOW
                | F::D3NOWEXT
                | F::CYRIX_D3NOW
                | F::FXSR
                | F::XSAVE
                | F::XSAVEC
                | F::XSAVEOPT
                | F::XSAVES
        )
    });
    wide_feature
        || (0..i.op_count()).any(|o| {
            i.op_kind(o) == OpKind::Register && {
                let r = i.op_register(o);
                r.is_mm() || r.is_st() || r.is_ymm() || r.is_zmm() || r.is_k()
            }
        })
}

/// Note the loads of spin loops (spin/) on their sites: bounded ones, and await loops with
/// a backoff.
fn mark_spin_loops(
    section: &CodeSection,
    all: &[Instruction],
    sites: &mut [(usize, Site)],
    info: &mut InstructionInfoFactory,
) {
    for (k, site) in sites.iter_mut() {
        let k = *k;
        if site.kind != site_kind::LOAD || site.flags & site_flags::PRIVATE != 0 {
            continue;
        }
        let bounded = spin::candidate(all, k);
        if !(bounded || spin::await_candidate(all, k)) {
            continue;
        }
        let ip = all[k].ip();
        let returned = if section
            .one_word_returns
            .iter()
            .any(|&(lo, hi)| (lo..hi).contains(&ip))
        {
            spin::RETURNS_ONE_WORD
        } else {
            spin::RETURNS_TWO_WORDS
        };
        match bounded
            .then(|| spin::bounded_spin(all, k, info, returned))
            .flatten()
        {
            Some((reg, value)) => {
                site.spin_reg = reg;
                site.spin_value = value;
            }
            None => site.await_mask = spin::await_mask(all, k, info, returned),
        }
    }
}

impl Decoder for X86_64 {
    fn decode(&self, section: &CodeSection, private: bool) -> DecodedSection {
        let mut decoder =
            IcedDecoder::with_ip(64, &section.bytes, section.addr, DecoderOptions::NONE);
        let mut info = InstructionInfoFactory::new();
        let mut all = Vec::new();
        let mut sites = Vec::new();
        let mut instr = Instruction::default();
        let mut wide_state = false;
        while decoder.can_decode() {
            decoder.decode_out(&mut instr);
            // bytes that do not decode: data, or a sweep out of step, which could hide anything
            wide_state = wide_state || instr.is_invalid() || touches_wide_state(&instr);
            all.push(instr);
        }
        let frames = frame_pointer_functions(section, &all, &mut info);
        for (k, instr) in all.iter().enumerate().filter(|(_, i)| !i.is_invalid()) {
            let ip = instr.ip();
            let f = frames.partition_point(|f| f.0 <= ip);
            let in_frame = f.checked_sub(1).is_some_and(|f| ip < frames[f].1);
            if let Some(site) = classify(instr, &mut info, in_frame) {
                if private || site.flags & site_flags::PRIVATE == 0 {
                    sites.push((k, site));
                }
            }
        }
        mark_spin_loops(section, &all, &mut sites, &mut info);
        let spans = Spans::new(section, &all, &sites);
        let sites = sites
            .into_iter()
            .map(|(k, site)| {
                // (the decoder's ip wraps at the end of the address space)
                let start = all[k].ip().wrapping_sub(section.addr) as usize;
                let (len, runs) = spans.of(k).unwrap_or((all[k].len(), all[k].len()));
                let chained = runs < len;
                let bytes = section.bytes[start..start + runs].to_vec();
                let flags = site.flags | if chained { site_flags::CHAINED } else { 0 };
                DecodedSite {
                    site: Site {
                        orig: bytes[0],
                        len: len as u8,
                        flags,
                        ..site
                    },
                    bytes,
                }
            })
            .collect();
        DecodedSection { sites, wide_state }
    }

    fn exits_in(&self, section: &CodeSection, lo: u64, hi: u64) -> Option<Vec<u64>> {
        let start = lo.checked_sub(section.addr)? as usize;
        let bytes = section
            .bytes
            .get(start..hi.checked_sub(section.addr)? as usize)?;
        let mut exits = Vec::new();
        for i in IcedDecoder::with_ip(64, bytes, lo, DecoderOptions::NONE) {
            match i.flow_control() {
                _ if i.is_invalid() => return None,
                FlowControl::Return | FlowControl::IndirectBranch => exits.push(i.ip()),
                FlowControl::UnconditionalBranch | FlowControl::ConditionalBranch
                    if !(lo..hi).contains(&i.near_branch_target()) =>
                {
                    return None
                }
                _ => {}
            }
        }
        Some(exits)
    }

    fn returns_in(&self, section: &CodeSection, lo: u64, hi: u64) -> Vec<u64> {
        let (Some(start), Some(end)) = (lo.checked_sub(section.addr), hi.checked_sub(section.addr))
        else {
            return Vec::new();
        };
        let Some(bytes) = section.bytes.get(start as usize..end as usize) else {
            return Vec::new();
        };
        IcedDecoder::with_ip(64, bytes, lo, DecoderOptions::NONE)
            .into_iter()
            .filter(|i| i.flow_control() == FlowControl::Return)
            .map(|i| i.ip())
            .collect()
    }

    fn site_at(&self, section: &CodeSection, addr: u64, kind: u8) -> Option<DecodedSite> {
        let start = addr.checked_sub(section.addr)? as usize;
        let bytes = section.bytes.get(start..)?;
        let i = IcedDecoder::with_ip(64, bytes, addr, DecoderOptions::NONE).decode();
        if i.is_invalid() {
            return None;
        }
        let bytes = bytes[..i.len()].to_vec();
        Some(DecodedSite {
            site: Site {
                offset: addr,
                len: i.len() as u8,
                kind,
                base: REG_NONE,
                index: REG_NONE,
                scale: 1,
                orig: bytes[0],
                ..Site::default()
            },
            bytes,
        })
    }

    /// The instruction's own bytes, its RIP-relative displacement (if any) pointed again at the
    /// same address from the copy, then `jmp rel32` back. Done by hand rather than with iced's
    /// BlockEncoder: a memory instruction needs nothing more, and the encoder's tables cost
    /// ~0.4 ms of every start.
    fn relocate(
        &self,
        site: &DecodedSite,
        bias: u64,
        at: u64,
        then: Option<u64>,
    ) -> Result<Vec<u8>, String> {
        let ip = site.site.offset.wrapping_add(bias);
        let mut d = IcedDecoder::with_ip(64, &site.bytes, ip, DecoderOptions::NONE);
        let fail = |why: &str| {
            format!(
                "cannot relocate `{}` at {ip:#x}: {why}",
                self.disassemble(site)
            )
        };
        let rel32 = |to: u64, from_end: u64| {
            i32::try_from(to.wrapping_sub(from_end) as i64).map_err(|_| fail("out of reach"))
        };
        // the site's instruction, and the ones after it its patch covers (see Spans); each
        // keeps its length, so an offset in the copy is the same offset in the original
        if site.site.kind == site_kind::MODELLED {
            // the runtime has carried out the whole function: back to its caller
            return Ok(vec![0xc3]);
        }
        let mut code = Vec::with_capacity(site.bytes.len() + 5);
        while code.len() < site.bytes.len() {
            let instr = d.decode();
            let len = instr.len();
            let from = code.len();
            if instr.is_invalid() || from + len > site.bytes.len() {
                return Err(fail("not an instruction"));
            }
            if relative_branch(&instr) {
                // a jump ending a span: the copy's jumps to the same target (a 32-bit
                // displacement, whatever the original's)
                if !relocatable_jump(&instr) || from + len != site.bytes.len() || from == 0 {
                    return Err(fail("a relative branch"));
                }
                match instr.condition_code() {
                    ConditionCode::None => code.push(0xe9),
                    cc => code.extend([0x0f, 0x80 + cc as u8 - 1]),
                }
                let end = at + (code.len() + 4) as u64;
                let disp = rel32(instr.near_branch_target(), end)?;
                code.extend_from_slice(&disp.to_le_bytes());
                break;
            }
            if from == 0 && site.site.kind == site_kind::STRING {
                // the runtime has carried it out: nops of its length in the copy
                code.resize(len, 0x90);
                continue;
            }
            code.extend_from_slice(&site.bytes[from..from + len]);
            if instr.is_ip_rel_memory_operand() {
                let offsets = d.get_constant_offsets(&instr);
                if offsets.displacement_size() != 4 {
                    return Err(fail("an unexpected displacement"));
                }
                let o = from + offsets.displacement_offset();
                let disp = rel32(instr.ip_rel_memory_address(), at + (from + len) as u64)?;
                code[o..o + 4].copy_from_slice(&disp.to_le_bytes());
            }
        }
        code.push(0xe9); // jmp rel32
        let back = rel32(
            then.unwrap_or(ip.wrapping_add(site.bytes.len() as u64)),
            at + code.len() as u64 + 4,
        )?;
        code.extend_from_slice(&back.to_le_bytes());
        if code.len() > self.copy_stride() {
            return Err(fail("does not fit its slot"));
        }
        Ok(code)
    }

    fn copy_stride(&self) -> usize {
        32
    }

    fn stub_len(&self) -> usize {
        32
    }

    fn disassemble(&self, site: &DecodedSite) -> String {
        let mut d = IcedDecoder::with_ip(64, &site.bytes, site.site.offset, DecoderOptions::NONE);
        let mut text = String::new();
        IntelFormatter::new().format(&d.decode(), &mut text);
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decode one instruction (bytes at 0x1000) and classify it.
    fn check(bytes: &[u8]) -> Option<Site> {
        let mut d = IcedDecoder::with_ip(64, bytes, 0x1000, DecoderOptions::NONE);
        let i = d.decode();
        assert!(!i.is_invalid(), "bytes {bytes:x?} do not decode");
        classify(&i, &mut InstructionInfoFactory::new(), false)
    }

    fn wide(bytes: &[u8]) -> bool {
        let mut d = IcedDecoder::with_ip(64, bytes, 0x1000, DecoderOptions::NONE);
        let i = d.decode();
        assert!(!i.is_invalid(), "bytes {bytes:x?} do not decode");
        touches_wide_state(&i)
    }

    #[test]
    fn wide_register_state_is_found() {
        // general registers, SSE on xmm0-15, MXCSR: narrow
        assert!(!wide(&[0x8b, 0x05, 0x10, 0, 0, 0])); // mov eax, [rip+0x10]
        assert!(!wide(&[0xf3, 0x0f, 0x6f, 0x08])); // movdqu xmm1, [rax]
        assert!(!wide(&[0xf2, 0x0f, 0x58, 0xc1])); // addsd xmm0, xmm1
        assert!(!wide(&[0x0f, 0xae, 0x18])); // stmxcsr [rax]
        assert!(!wide(&[0x66, 0x0f, 0xef, 0xc0])); // pxor xmm0, xmm0

        // x87, MMX, their state's save and restore
        assert!(wide(&[0xd9, 0xe8])); // fld1
        assert!(wide(&[0xd9, 0x38])); // fnstcw [rax]
        assert!(wide(&[0xdb, 0xe3])); // fninit
        assert!(wide(&[0x0f, 0x77])); // emms
        assert!(wide(&[0x48, 0x0f, 0x6e, 0xc0])); // movq mm0, rax
        assert!(wide(&[0x66, 0x0f, 0x2a, 0xc0])); // cvtpi2pd xmm0, mm0
        assert!(wide(&[0x0f, 0xae, 0x00])); // fxsave [rax]
        assert!(wide(&[0x0f, 0xae, 0x20])); // xsave [rax]

        // VEX and EVEX: ymm, zmm, xmm16-31, opmasks
        assert!(wide(&[0xc5, 0xf8, 0x77])); // vzeroupper
        assert!(wide(&[0xc5, 0xfe, 0x6f, 0x08])); // vmovdqu ymm1, [rax]
        assert!(wide(&[0xc5, 0xf9, 0xef, 0xc0])); // vpxor xmm0, xmm0, xmm0 (clears ymm0's top)
        assert!(wide(&[0x62, 0xe1, 0xfd, 0x08, 0xef, 0xc0])); // vpxorq xmm16, xmm0, xmm0
        assert!(wide(&[0xc5, 0xfc, 0x47, 0xc1])); // kxorw k0, k0, k1
    }

    #[test]
    fn a_section_with_wide_state_says_so() {
        let section = |code: &[u8]| CodeSection {
            name: ".text".into(),
            addr: 0x1000,
            bytes: code.to_vec(),
            landing_pads: vec![],
            functions: vec![],
            symbols: vec![],
            one_word_returns: vec![],
        };
        assert!(!X86_64.decode(&section(&SHORT_LOAD), false).wide_state);
        let mut with_avx = SHORT_LOAD.to_vec();
        with_avx.extend([0xc5, 0xf8, 0x77]);
        assert!(X86_64.decode(&section(&with_avx), false).wide_state);
        // bytes that do not decode may hide anything
        let mut with_junk = SHORT_LOAD.to_vec();
        with_junk.extend([0x06]);
        assert!(X86_64.decode(&section(&with_junk), false).wide_state);
    }

    fn kind(bytes: &[u8]) -> Option<u8> {
        check(bytes).map(|s| s.kind)
    }

    #[test]
    fn loads_and_stores() {
        // mov eax, [rip+0x10]: a load of a global, rip-relative -> absolute address
        let s = check(&[0x8b, 0x05, 0x10, 0, 0, 0]).unwrap();
        assert_eq!(
            (s.kind, s.size, s.base, s.disp),
            (site_kind::LOAD, 4, REG_RIP, 0x1016)
        );
        // mov dword [rdx], eax
        let s = check(&[0x89, 0x02]).unwrap();
        assert_eq!(
            (s.kind, s.size, s.base, s.index),
            (site_kind::STORE, 4, 2, REG_NONE)
        );
        // mov qword [rax+rbx*8+0x20], rcx
        let s = check(&[0x48, 0x89, 0x4c, 0xd8, 0x20]).unwrap();
        assert_eq!(
            (s.base, s.index, s.scale, s.disp, s.size),
            (0, 3, 8, 0x20, 8)
        );
        // movzx eax, byte [rdi]
        assert_eq!(
            check(&[0x0f, 0xb6, 0x07]).map(|s| (s.kind, s.size)),
            Some((site_kind::LOAD, 1))
        );
        // movdqu xmm0, [rsi] (SSE 16 bytes)
        assert_eq!(
            check(&[0xf3, 0x0f, 0x6f, 0x06]).map(|s| (s.kind, s.size)),
            Some((site_kind::LOAD, 16))
        );
        // cmp dword [rip+0], 0: a load
        assert_eq!(kind(&[0x83, 0x3d, 0, 0, 0, 0, 0]), Some(site_kind::LOAD));
    }

    #[test]
    fn overwritten_registers_are_dead_for_await_detection() {
        assert_eq!(check(&[0x8b, 0x05, 0, 0, 0, 0]).unwrap().dead_regs, 1); // mov eax, [rip]: rax
        assert_eq!(check(&[0x03, 0x07]).unwrap().dead_regs, 0); // add eax, [rdi]: rax is read
        assert_eq!(check(&[0x8a, 0x07]).unwrap().dead_regs, 0); // mov al, [rdi]: upper bytes live
        assert_eq!(check(&[0x4c, 0x8b, 0x07]).unwrap().dead_regs, 1 << 8); // mov r8, [rdi]
    }

    #[test]
    fn thread_local_operands_are_private_sites() {
        let flags = |b: &[u8]| check(b).map(|s| (s.kind, s.flags, s.base, s.disp, s.size));
        use site_flags::{FS, PRIVATE};
        // mov [rsp+8], eax
        assert_eq!(
            flags(&[0x89, 0x44, 0x24, 0x08]),
            Some((site_kind::STORE, PRIVATE, 4, 8, 4))
        );
        // mov rax, fs:[0x28] (the stack protector's canary)
        assert_eq!(
            flags(&[0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0]),
            Some((site_kind::LOAD, PRIVATE | FS, REG_NONE, 0x28, 8))
        );
        // add dword [rsp+4], 1
        assert_eq!(
            flags(&[0x83, 0x44, 0x24, 0x04, 0x01]),
            Some((site_kind::RMW, PRIVATE, 4, 4, 4))
        );
        // a global's operand stays shared: mov eax, [rip]
        assert_eq!(check(&[0x8b, 0x05, 0, 0, 0, 0]).unwrap().flags, 0);
        // implicit stack operands are not sites
        assert_eq!(kind(&[0x50]), None); // push rax
        assert_eq!(kind(&[0x58]), None); // pop rax
        assert_eq!(kind(&[0xff, 0x74, 0x24, 0x08]), None); // push qword [rsp+8]: two stack operands
        assert_eq!(kind(&[0xe8, 0, 0, 0, 0]), None); // call
        assert_eq!(kind(&[0xc3]), None); // ret
        assert_eq!(kind(&[0x48, 0x8d, 0x05, 0, 0, 0, 0]), None); // lea rax, [rip]
        assert_eq!(kind(&[0x0f, 0x1f, 0x44, 0, 0]), None); // nop dword [rax+rax]
        assert_eq!(kind(&[0x01, 0xc8]), None); // add eax, ecx
    }

    #[test]
    fn read_modify_writes() {
        assert_eq!(kind(&[0x83, 0x05, 0, 0, 0, 0, 0x01]), Some(site_kind::RMW)); // add dword [rip], 1
        assert_eq!(
            kind(&[0xf0, 0x83, 0x05, 0, 0, 0, 0, 0x01]),
            Some(site_kind::ATOMIC)
        ); // lock add
        assert_eq!(kind(&[0x87, 0x07]), Some(site_kind::ATOMIC)); // xchg [rdi], eax (implicitly locked)
        assert_eq!(kind(&[0xf0, 0x0f, 0xb1, 0x17]), Some(site_kind::CAS)); // lock cmpxchg [rdi], edx
        assert_eq!(kind(&[0xf0, 0x48, 0x0f, 0xc7, 0x0f]), Some(site_kind::CAS2)); // lock cmpxchg16b [rdi]
        assert_eq!(kind(&[0xf0, 0x0f, 0xc1, 0x07]), Some(site_kind::ATOMIC)); // lock xadd [rdi], eax
        assert_eq!(kind(&[0x0f, 0xae, 0xf0]), Some(site_kind::FENCE)); // mfence
                                                                       // lock or qword [rsp], 0: gcc's seq_cst fence
        assert_eq!(
            check(&[0xf0, 0x48, 0x83, 0x0c, 0x24, 0x00]).map(|s| (s.kind, s.size)),
            Some((site_kind::FENCE, 1))
        );
        assert_eq!(
            check(&[0x0f, 0xae, 0xf8]).map(|s| (s.kind, s.size)),
            Some((site_kind::FENCE, 2))
        ); // sfence
    }

    #[test]
    fn string_and_gather_forms_are_classified() {
        assert_eq!(kind(&[0xf3, 0x48, 0xab]), Some(site_kind::STRING)); // rep stosq
        assert_eq!(kind(&[0x64, 0xf3, 0xa4]), Some(site_kind::UNSUPPORTED)); // rep movsb fs:
        assert_eq!(kind(&[0x67, 0xf3, 0xaa]), Some(site_kind::UNSUPPORTED)); // rep stosb [edi]
        assert_eq!(kind(&[0x6c]), None); // insb
        let fields = |b: &[u8]| check(b).map(|s| (s.kind, s.string_op, s.rep, s.size));
        use crate::site::{rep_prefix, string_op};
        assert_eq!(
            fields(&[0xa4]), // movsb
            Some((site_kind::STRING, string_op::MOVS, rep_prefix::NONE, 1))
        );
        assert_eq!(
            fields(&[0xf2, 0xae]), // repne scasb
            Some((site_kind::STRING, string_op::SCAS, rep_prefix::REPNE, 1))
        );
        assert_eq!(
            fields(&[0xf3, 0xa7]), // repe cmpsd
            Some((site_kind::STRING, string_op::CMPS, rep_prefix::REPE, 4))
        );
        assert_eq!(
            fields(&[0x66, 0xad]), // lodsw
            Some((site_kind::STRING, string_op::LODS, rep_prefix::NONE, 2))
        );
        // a gather: its index is a vector register
        assert_eq!(
            kind(&[0xc4, 0xe2, 0x71, 0x90, 0x04, 0x90]), // vpgatherdd xmm0, [rax+xmm2*4], xmm1
            Some(site_kind::UNSUPPORTED)
        );
    }

    /// A string site's copy: nops where the instruction was (the runtime carried it out).
    #[test]
    fn a_string_site_copy_holds_nops() {
        let bytes = vec![0xf3, 0xa4]; // rep movsb
        let ds = DecodedSite {
            site: check(&bytes).unwrap(),
            bytes,
        };
        let code = X86_64.relocate(&ds, 0, 0x1000, None).unwrap();
        assert_eq!(&code[..3], &[0x90, 0x90, 0xe9]);
    }

    #[test]
    fn a_site_disassembles_at_its_address() {
        let bytes = vec![0x8b, 0x05, 0x10, 0, 0, 0]; // mov eax, [rip+0x10] at 0x1000
        let ds = DecodedSite {
            site: check(&bytes).unwrap(),
            bytes,
        };
        assert_eq!(X86_64.disassemble(&ds), "mov eax,[1016h]");
    }

    #[test]
    fn relocated_copy_reaches_rip_relative_operand_and_returns() {
        let bytes = vec![0x8b, 0x05, 0x10, 0, 0, 0]; // mov eax, [rip+0x10] at 0x1000
        let ds = DecodedSite {
            site: check(&bytes).unwrap(),
            bytes,
        };
        // loaded at bias 0x5000_0000: the copy addresses the global as loaded
        let code = X86_64
            .relocate(&ds, 0x5000_0000, 0x5100_0000, None)
            .unwrap();
        let mut d = IcedDecoder::with_ip(64, &code, 0x5100_0000, DecoderOptions::NONE);
        let a = d.decode();
        assert_eq!(a.mnemonic(), Mnemonic::Mov);
        assert_eq!(
            a.memory_displacement64(),
            0x5000_1016,
            "still addresses the same global"
        );
        let b = d.decode();
        assert_eq!(b.mnemonic(), Mnemonic::Jmp);
        assert_eq!(
            b.near_branch_target(),
            0x5000_1006,
            "jumps back after the original"
        );
    }

    #[test]
    fn relocation_keeps_immediates_and_plain_operands_and_refuses_what_it_cannot_reach() {
        // mov dword [rip+0x10], 7 at 0x1000: the displacement counts from the end, immediate
        // included
        let store = vec![0xc7, 0x05, 0x10, 0, 0, 0, 7, 0, 0, 0];
        let ds = DecodedSite {
            site: check(&store).unwrap(),
            bytes: store,
        };
        let code = X86_64.relocate(&ds, 0, 0x7000_0000, None).unwrap();
        let mut d = IcedDecoder::with_ip(64, &code, 0x7000_0000, DecoderOptions::NONE);
        let a = d.decode();
        assert_eq!((a.memory_displacement64(), a.immediate32()), (0x101a, 7));
        assert_eq!(d.decode().near_branch_target(), 0x100a);
        // lock xadd [rdi], eax: copied as it is
        let xadd = vec![0xf0, 0x0f, 0xc1, 0x07];
        let ds = DecodedSite {
            site: check(&xadd).unwrap(),
            bytes: xadd.clone(),
        };
        let code = X86_64.relocate(&ds, 0x40_0000, 0x50_0000, None).unwrap();
        assert_eq!(&code[..4], &xadd[..]);
        assert_eq!(code.len(), 9);
        // a copy more than 2 GiB away cannot address the global
        let err = X86_64
            .relocate(&ds_of_rip_load(), 0, 0x1_0000_0000, None)
            .unwrap_err();
        assert!(err.contains("out of reach"), "{err}");
    }

    /// The sites of `code` at 0x1000, in one function covering it all (or none).
    fn sites_of(code: &[u8], in_function: bool) -> Vec<DecodedSite> {
        sites_with_pads(code, in_function, &[])
    }

    /// [`sites_of`], the exception tables giving `landing_pads`.
    fn sites_with_pads(code: &[u8], in_function: bool, landing_pads: &[u64]) -> Vec<DecodedSite> {
        let end = 0x1000 + code.len() as u64;
        X86_64
            .decode(
                &CodeSection {
                    name: ".text".into(),
                    addr: 0x1000,
                    bytes: code.to_vec(),
                    landing_pads: landing_pads.to_vec(),
                    functions: if in_function {
                        vec![(0x1000, end)]
                    } else {
                        vec![]
                    },
                    symbols: vec![],
                    one_word_returns: vec![],
                },
                false,
            )
            .sites
    }

    // mov edi, [rbp]; test edi, edi; mov eax, [rip+0x10]; ret (indexer's short load, a
    // RIP-relative load after it)
    const SHORT_LOAD: [u8; 14] = [
        0x8b, 0x7d, 0x00, 0x85, 0xff, 0x8b, 0x05, 0x10, 0, 0, 0, 0xc3, 0x90, 0x90,
    ];

    #[test]
    fn a_short_site_is_patched_with_the_instructions_after_it() {
        let sites = sites_of(&SHORT_LOAD, true);
        assert_eq!(sites.len(), 2, "{sites:?}");
        // the 3-byte load takes the 2-byte test with it: a jump fits
        assert_eq!(
            (sites[0].site.len, &sites[0].bytes[..]),
            (5, &SHORT_LOAD[..5])
        );
        // the copy runs both, then jumps back after them
        let code = X86_64.relocate(&sites[0], 0, 0x7000_0000, None).unwrap();
        assert_eq!(&code[..5], &SHORT_LOAD[..5]);
        let mut d = IcedDecoder::with_ip(64, &code, 0x7000_0000, DecoderOptions::NONE);
        let mnemonics: Vec<Mnemonic> = (0..3).map(|_| d.decode().mnemonic()).collect();
        assert_eq!(mnemonics, [Mnemonic::Mov, Mnemonic::Test, Mnemonic::Jmp]);
        let mut d = IcedDecoder::with_ip(64, &code[5..], 0x7000_0005, DecoderOptions::NONE);
        assert_eq!(d.decode().near_branch_target(), 0x1005);
        // a site long enough keeps its own length
        assert_eq!(sites[1].site.len, 6);
    }

    #[test]
    fn a_short_site_is_patched_with_the_jump_after_it() {
        // cmp byte [rsi+rdi], 0; je +0x10 / jne -6 (a loop back to the compare) / jmp +0x20:
        // each copy compares, then jumps where the original would, on the same condition
        for (jump, target, cc) in [
            (&[0x74, 0x10][..], 0x1016, ConditionCode::e),
            (&[0x75, 0xfa], 0x1000, ConditionCode::ne),
            (&[0x0f, 0x8c, 0x10, 0, 0, 0], 0x101a, ConditionCode::l),
            (&[0xeb, 0x20], 0x1026, ConditionCode::None),
        ] {
            let code = [&[0x80, 0x3c, 0x3e, 0x00][..], jump, &[0xc3]].concat();
            let sites = sites_of(&code, true);
            assert_eq!(sites[0].site.len as usize, 4 + jump.len(), "{code:x?}");
            let copy = X86_64
                .relocate(&sites[0], 0x5000_0000, 0x5100_0000, None)
                .unwrap();
            let mut d = IcedDecoder::with_ip(64, &copy, 0x5100_0000, DecoderOptions::NONE);
            assert_eq!(d.decode().mnemonic(), Mnemonic::Cmp);
            let j = d.decode();
            assert_eq!(j.condition_code(), cc, "{code:x?}");
            assert_eq!(j.near_branch_target(), 0x5000_0000 + target, "{code:x?}");
            // not taken: on after the original jump
            if cc != ConditionCode::None {
                let back = d.decode();
                assert_eq!(back.mnemonic(), Mnemonic::Jmp);
                assert_eq!(
                    back.near_branch_target(),
                    0x5000_1000 + 4 + jump.len() as u64
                );
            }
        }
        // a `loop` (no 32-bit form), a call, or a jump that is the site's patch's first
        // instruction past what a jump needs: no span
        for (after, len) in [(&[0xe2, 0x10][..], 4), (&[0xe8, 0, 0, 0, 0], 4)] {
            let code = [&[0x80, 0x3c, 0x3e, 0x00][..], after, &[0xc3]].concat();
            assert_eq!(sites_of(&code, true)[0].site.len, len, "{code:x?}");
        }
        let code = [0x8b, 0x3b, 0x90, 0x90, 0x90, 0x74, 0x10, 0xc3]; // mov edi, [rbx]; nops; je
        assert_eq!(sites_of(&code, true)[0].site.len, 5);
    }

    #[test]
    fn short_sites_one_after_another_are_chained() {
        // mov [rcx+0x30], rsi; mov [rcx+0x38], r9; mov [rcx+0x40], r12; ret
        const STORES: [u8; 13] = [
            0x48, 0x89, 0x71, 0x30, 0x4c, 0x89, 0x49, 0x38, 0x4c, 0x89, 0x61, 0x40, 0xc3,
        ];
        let sites = sites_of(&STORES, true);
        let chain: Vec<(u8, usize, bool)> = (sites.iter())
            .map(|s| {
                (
                    s.site.len,
                    s.bytes.len(),
                    s.site.flags & site_flags::CHAINED != 0,
                )
            })
            .collect();
        // each of the first two covers the next store's start, its copy running its own
        // store; the last has nothing to cover (a `ret` next)
        assert_eq!(chain, [(8, 4, true), (8, 4, true), (4, 4, false)]);
        // the copy goes on where it is told (the next site's stub), else back to the next
        let copy = X86_64
            .relocate(&sites[0], 0x5000_0000, 0x5100_0000, Some(0x5100_1000))
            .unwrap();
        let mut d = IcedDecoder::with_ip(64, &copy, 0x5100_0000, DecoderOptions::NONE);
        assert_eq!(d.decode().mnemonic(), Mnemonic::Mov);
        assert_eq!(d.decode().near_branch_target(), 0x5100_1000);
        let copy = X86_64
            .relocate(&sites[0], 0x5000_0000, 0x5100_0000, None)
            .unwrap();
        let mut d = IcedDecoder::with_ip(64, &copy, 0x5100_0000, DecoderOptions::NONE);
        assert_eq!(d.decode().mnemonic(), Mnemonic::Mov);
        assert_eq!(d.decode().near_branch_target(), 0x5000_1004);
        // no chain into a branch target, or into a locked instruction (lock xadd [rcx], eax)
        let mut code = STORES.to_vec();
        code.extend_from_slice(&[0x75, 0xf5]); // jne 0x1004, after the ret
        assert_eq!(sites_of(&code, true)[0].site.flags & site_flags::CHAINED, 0);
        let atomic = [0x48, 0x89, 0x71, 0x30, 0xf0, 0x0f, 0xc1, 0x01, 0xc3];
        let sites = sites_of(&atomic, true);
        assert_eq!(
            (sites[0].site.len, sites[0].site.flags & site_flags::CHAINED),
            (4, 0)
        );
    }

    #[test]
    fn a_short_site_stays_alone_where_something_may_jump_inside_its_patch() {
        // outside any known function (a stripped program)
        assert_eq!(sites_of(&SHORT_LOAD, false)[0].site.len, 3);
        // a branch lands on the test: jne 0x1003 after the code
        let mut code = SHORT_LOAD.to_vec();
        code.truncate(12);
        code.extend_from_slice(&[0x75, 0xf5]); // jne -11: 0x100e - 11 = 0x1003
        assert_eq!(sites_of(&code, true)[0].site.len, 3);
        // the unwinder lands on the test (a landing pad of the exception tables)
        assert_eq!(sites_with_pads(&SHORT_LOAD, true, &[0x1003])[0].site.len, 3);
        assert_eq!(sites_with_pads(&SHORT_LOAD, true, &[0x1005])[0].site.len, 5);
        // an indirect jump in the function (a switch's table may point anywhere)
        let mut code = SHORT_LOAD.to_vec();
        code.truncate(12);
        code.extend_from_slice(&[0xff, 0xe0]); // jmp rax
        assert_eq!(sites_of(&code, true)[0].site.len, 3);
        // the instruction after it is a site itself, the two shorter than a jump: mov edi,
        // [rbx] twice (each then has its own: the second's the nops after it)
        let two = [0x8b, 0x3b, 0x8b, 0x3b, 0x90, 0x90, 0x90, 0xc3];
        let sites = sites_of(&two, true);
        assert_eq!((sites[0].site.len, sites[1].site.len), (2, 5));
        assert_eq!(sites[0].site.flags & site_flags::CHAINED, 0);
    }

    fn ds_of_rip_load() -> DecodedSite {
        let bytes = vec![0x8b, 0x05, 0x10, 0, 0, 0];
        DecodedSite {
            site: check(&bytes).unwrap(),
            bytes,
        }
    }
}
