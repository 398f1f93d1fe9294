//! x86-64: classify the program's memory instructions with iced-x86 and relocate them into
//! out-of-line copies.

pub mod litmus;

use iced_x86::{
    CodeSize, Decoder as IcedDecoder, DecoderOptions, Formatter, Instruction,
    InstructionInfoFactory, IntelFormatter, Mnemonic, OpAccess, OpKind, Register, UsedMemory,
};

use crate::channel::{site_kind, Site, REG_NONE, REG_RIP};
use crate::decode::{DecodedSite, Decoder};
use crate::program::CodeSection;

pub struct X86_64;

/// Is this memory operand private to the thread? Stack-pointer-based operands are the thread's
/// own frame; fs/gs-based ones are thread-local storage.
fn is_thread_local(m: &UsedMemory) -> bool {
    matches!(m.segment(), Register::FS | Register::GS)
        || matches!(m.base(), Register::RSP | Register::ESP | Register::SP)
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

/// Classify one instruction; None when it cannot touch shared memory.
pub fn classify(i: &Instruction, info: &mut InstructionInfoFactory) -> Option<Site> {
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
    let shared: Vec<&UsedMemory> = used.iter().filter(|m| !is_thread_local(m)).collect();
    let locked = i.has_lock_prefix() || (i.mnemonic() == Mnemonic::Xchg && !used.is_empty());
    let m = match shared.as_slice() {
        // a locked instruction on the stack is still a full fence (gcc's `lock or [rsp], 0`)
        [] if locked => {
            site.kind = site_kind::FENCE;
            site.size = 1;
            return Some(site);
        }
        [] => return None,
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
    site.kind = if vector_index || site.size == 0 || site.size > 64 || i.is_string_instruction() {
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

impl Decoder for X86_64 {
    fn decode(&self, section: &CodeSection) -> Vec<DecodedSite> {
        let mut decoder =
            IcedDecoder::with_ip(64, &section.bytes, section.addr, DecoderOptions::NONE);
        let mut info = InstructionInfoFactory::new();
        let mut out = Vec::new();
        let mut instr = Instruction::default();
        while decoder.can_decode() {
            decoder.decode_out(&mut instr);
            if instr.is_invalid() {
                continue;
            }
            let Some(site) = classify(&instr, &mut info) else {
                continue;
            };
            let start = (instr.ip() - section.addr) as usize;
            let bytes = section.bytes[start..start + instr.len()].to_vec();
            out.push(DecodedSite {
                site: Site {
                    orig: bytes[0],
                    ..site
                },
                bytes,
            });
        }
        out
    }

    /// The instruction's own bytes, its RIP-relative displacement (if any) pointed again at the
    /// same address from the copy, then `jmp rel32` back. Done by hand rather than with iced's
    /// BlockEncoder: a memory instruction needs nothing more, and the encoder's tables cost
    /// ~0.4 ms of every start.
    fn relocate(&self, site: &DecodedSite, bias: u64, at: u64) -> Result<Vec<u8>, String> {
        let ip = site.site.offset.wrapping_add(bias);
        let mut d = IcedDecoder::with_ip(64, &site.bytes, ip, DecoderOptions::NONE);
        let instr = d.decode();
        let len = instr.len();
        let fail = |why: &str| {
            format!(
                "cannot relocate `{}` at {ip:#x}: {why}",
                self.disassemble(site)
            )
        };
        let rel32 = |to: u64, from_end: u64| {
            i32::try_from(to.wrapping_sub(from_end) as i64).map_err(|_| fail("out of reach"))
        };
        if instr.is_invalid() || len > site.bytes.len() {
            return Err(fail("not an instruction"));
        }
        let branch = (0..instr.op_count()).any(|i| {
            matches!(
                instr.op_kind(i),
                OpKind::NearBranch16
                    | OpKind::NearBranch32
                    | OpKind::NearBranch64
                    | OpKind::FarBranch16
                    | OpKind::FarBranch32
            )
        });
        if branch {
            return Err(fail("a relative branch"));
        }
        let mut code = site.bytes[..len].to_vec();
        if instr.is_ip_rel_memory_operand() {
            let offsets = d.get_constant_offsets(&instr);
            if offsets.displacement_size() != 4 {
                return Err(fail("an unexpected displacement"));
            }
            let o = offsets.displacement_offset();
            let disp = rel32(instr.ip_rel_memory_address(), at + len as u64)?;
            code[o..o + 4].copy_from_slice(&disp.to_le_bytes());
        }
        code.push(0xe9); // jmp rel32
        let back = rel32(ip + len as u64, at + code.len() as u64 + 4)?;
        code.extend_from_slice(&back.to_le_bytes());
        if code.len() > self.copy_stride() {
            return Err(fail("does not fit its slot"));
        }
        Ok(code)
    }

    fn copy_stride(&self) -> usize {
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
        classify(&i, &mut InstructionInfoFactory::new())
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
    fn thread_local_operands_are_not_sites() {
        assert_eq!(kind(&[0x89, 0x44, 0x24, 0x08]), None); // mov [rsp+8], eax
        assert_eq!(kind(&[0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0]), None); // mov rax, fs:[0x28]
        assert_eq!(kind(&[0x50]), None); // push rax
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
    fn string_and_gather_forms_are_flagged() {
        assert_eq!(kind(&[0xf3, 0x48, 0xab]), Some(site_kind::UNSUPPORTED)); // rep stosq
        assert_eq!(kind(&[0xa4]), Some(site_kind::UNSUPPORTED)); // movsb: two operands
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
        let code = X86_64.relocate(&ds, 0x5000_0000, 0x5100_0000).unwrap();
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
        let code = X86_64.relocate(&ds, 0, 0x7000_0000).unwrap();
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
        let code = X86_64.relocate(&ds, 0x40_0000, 0x50_0000).unwrap();
        assert_eq!(&code[..4], &xadd[..]);
        assert_eq!(code.len(), 9);
        // a copy more than 2 GiB away cannot address the global
        let err = X86_64
            .relocate(&ds_of_rip_load(), 0, 0x1_0000_0000)
            .unwrap_err();
        assert!(err.contains("out of reach"), "{err}");
    }

    fn ds_of_rip_load() -> DecodedSite {
        let bytes = vec![0x8b, 0x05, 0x10, 0, 0, 0];
        DecodedSite {
            site: check(&bytes).unwrap(),
            bytes,
        }
    }
}
