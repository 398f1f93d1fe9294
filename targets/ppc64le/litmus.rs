//! herd's PPC litmus syntax lowered to GNU assembler for ppc64le.
//!
//! Registers `r0`-`r31` are C variables (64-bit, so that a register can hold a location's
//! address, as `0:r2=x` starts it), bound to any general register but r0 (constraint `b`: a
//! base register that means itself). Supported: `li`, `mr`, `xor`, `addi`, `cmpw`, branches
//! `b`/`beq`/`bne` to labels of the same thread, loads and stores `lwz`, `ld`, `stw`, `std`
//! (`d(rA)` or herd's `d,rA`) and their indexed forms `lwzx`, `ldx`, `stwx`, `stdx`,
//! `lwarx`/`stwcx.`, and the fences `sync`, `lwsync`, `isync`, `eieio`. An indexed form's `r0`
//! as its first address register is 0, as on the processor.

use crate::litmus::{Isa, Lowered};

pub struct Ppc;

/// `r0`-`r31` (their number), or a symbolic register of herd's (`%t0`, renamed `sym_t0` by the
/// parser: 32, a register of the compiler's choosing like the others).
fn register(s: &str) -> Option<u8> {
    if s.strip_prefix("sym_")
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
    {
        return Some(32);
    }
    let n = s.strip_prefix('r')?;
    if n.is_empty() || (n.len() > 1 && n.starts_with('0')) {
        return None;
    }
    n.parse::<u8>().ok().filter(|&n| n < 32)
}

fn immediate(s: &str) -> Option<i64> {
    let s = s.trim();
    match s.strip_prefix("0x") {
        Some(h) => i64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

fn label(s: &str) -> Option<&str> {
    let ident = s
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    (ident && register(s).is_none()).then_some(s)
}

impl Isa for Ppc {
    fn arch(&self) -> &'static str {
        "PPC"
    }

    fn is_register(&self, name: &str) -> bool {
        register(name).is_some()
    }

    fn reg_operand(&self, reg: &str) -> String {
        format!("%[{reg}]")
    }

    fn mem_operand(&self, symbol: &str) -> String {
        symbol.to_string()
    }

    fn reg_constraint(&self) -> &'static str {
        "+b"
    }

    fn addresses_in_registers(&self) -> bool {
        true
    }

    fn compiler(&self) -> &'static str {
        "powerpc64le-linux-gnu-gcc"
    }

    fn lower(&self, instr: &str) -> Result<Lowered, String> {
        let text = instr.trim();
        let unsupported = |why: &str| format!("unsupported instruction `{text}`{why}");
        // a label of the thread (unique in the program with %=, since a thread's asm is one
        // block)
        if let Some(l) = text.strip_suffix(':').and_then(label) {
            return Ok(Lowered {
                asm: format!("{l}%=:"),
                ..Lowered::default()
            });
        }
        // `L0: isync`: a label, then the instruction
        if let Some((l, rest)) = text.split_once(':') {
            if let (Some(l), false) = (label(l.trim()), rest.trim().is_empty()) {
                let mut low = self.lower(rest)?;
                low.asm = format!("{l}%=: {}", low.asm);
                return Ok(low);
            }
        }
        let (mnemonic, ops) = match text.split_once(char::is_whitespace) {
            Some((m, rest)) => (m.to_ascii_lowercase(), rest.trim()),
            None => (text.to_ascii_lowercase(), ""),
        };
        let mut ops: Vec<&str> = if ops.is_empty() {
            Vec::new()
        } else {
            ops.split(',').map(str::trim).collect()
        };
        // `lwz r1,0(r2)` as herd's `lwz r1,0,r2`
        if let [_, d, base] = ops.as_slice() {
            if matches!(mnemonic.as_str(), "lwz" | "ld" | "stw" | "std") && immediate(d).is_some() {
                let (d, base) = (*d, *base);
                ops.truncate(1);
                return self.lower(&format!("{mnemonic} {},{d}({base})", ops[0]));
            }
        }
        let mut low = Lowered::default();
        let mut reg = |s: &str| -> Result<String, String> {
            if register(s).is_none() {
                return Err(unsupported(&format!(": `{s}` is not a register r0-r31")));
            }
            if !low.regs.iter().any(|r| r == s) {
                low.regs.push(s.to_string());
            }
            Ok(format!("%[{s}]"))
        };
        let imm = |s: &str| immediate(s).ok_or_else(|| unsupported(&format!(": `{s}`")));
        let mut address_regs = Vec::new();
        let mut copy = None;
        let asm = match (mnemonic.as_str(), ops.as_slice()) {
            ("sync" | "lwsync" | "isync" | "eieio", []) => mnemonic.clone(),
            ("li", [d, v]) => format!("li {},{}", reg(d)?, imm(v)?),
            ("mr", [d, s]) => {
                copy = Some((d.to_string(), s.to_string()));
                format!("mr {},{}", reg(d)?, reg(s)?)
            }
            ("xor", [d, a, b]) => format!("xor {},{},{}", reg(d)?, reg(a)?, reg(b)?),
            ("addi", [d, a, v]) => format!("addi {},{},{}", reg(d)?, reg(a)?, imm(v)?),
            ("cmpw", [a, b]) | ("cmpw", ["cr0", a, b]) => {
                format!("cmpw {},{}", reg(a)?, reg(b)?)
            }
            ("b" | "beq" | "bne", [l]) => match label(l) {
                Some(l) => format!("{mnemonic} {l}%="),
                None => return Err(unsupported(": a branch to a label of the thread")),
            },
            ("lwz" | "ld" | "stw" | "std", [r, m]) => {
                let Some((d, base)) = m.strip_suffix(')').and_then(|m| m.split_once('(')) else {
                    return Err(unsupported(": expected `d(rA)`"));
                };
                address_regs.push(base.trim().to_string());
                format!("{mnemonic} {},{}({})", reg(r)?, imm(d)?, reg(base.trim())?)
            }
            ("lwzx" | "ldx" | "stwx" | "stdx" | "lwarx" | "stwcx.", [r, a, b]) => {
                // RA = r0 is the value 0
                if *a != "r0" {
                    address_regs.push(a.to_string());
                }
                address_regs.push(b.to_string());
                let a = if *a == "r0" { "0".to_string() } else { reg(a)? };
                format!("{mnemonic} {},{a},{}", reg(r)?, reg(b)?)
            }
            _ => {
                return Err(unsupported(
                    " (supported: li, mr, xor, addi, cmpw, b, beq, bne, lwz, ld, stw, std, \
                     lwzx, ldx, stwx, stdx, lwarx, stwcx., sync, lwsync, isync, eieio)",
                ))
            }
        };
        // what it writes: the target of a load, li, mr, xor, addi (cmpw, stores, branches and
        // fences write no general register; stwcx. writes CR0)
        if matches!(
            mnemonic.as_str(),
            "li" | "mr" | "xor" | "addi" | "lwz" | "ld" | "lwzx" | "ldx" | "lwarx"
        ) {
            low.writes.push(ops[0].to_string());
        }
        low.asm = asm;
        low.wide = matches!(mnemonic.as_str(), "ld" | "std" | "ldx" | "stdx");
        low.address_regs = address_regs;
        low.copy = copy;
        Ok(low)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asm(i: &str) -> String {
        Ppc.lower(i).unwrap().asm
    }

    #[test]
    fn lowers_the_litmus_subset() {
        assert_eq!(asm("li r1,1"), "li %[r1],1");
        assert_eq!(asm("stw r1,0(r2)"), "stw %[r1],0(%[r2])");
        assert_eq!(asm("lwz r1,0,r4"), "lwz %[r1],0(%[r4])");
        assert_eq!(asm("lwzx r4,r3,r2"), "lwzx %[r4],%[r3],%[r2]");
        assert_eq!(asm("lwarx r3,r0,r2"), "lwarx %[r3],0,%[r2]");
        assert_eq!(asm("stwcx. r1,r0,r2"), "stwcx. %[r1],0,%[r2]");
        assert_eq!(asm("xor r4,r3,r3"), "xor %[r4],%[r3],%[r3]");
        assert_eq!(asm("cmpw r3,r3"), "cmpw %[r3],%[r3]");
        assert_eq!(asm("beq  LC00"), "beq LC00%=");
        assert_eq!(asm("LC00:"), "LC00%=:");
        assert_eq!(asm("lwsync"), "lwsync");
        assert!(Ppc.lower("ldx r1,r2,r3").unwrap().wide);
        assert!(!Ppc.lower("lwzx r1,r2,r3").unwrap().wide);
        let l = Ppc.lower("xor r4,r3,r5").unwrap();
        assert_eq!(l.regs, vec!["r4".to_string(), "r3".into(), "r5".into()]);
    }

    #[test]
    fn names_what_it_does_not_support() {
        let e = |i: &str| Ppc.lower(i).unwrap_err();
        assert!(e("std %t0,0(%x0)").contains("`%t0`"));
        assert!(e("dcbf r0,r2").contains("unsupported instruction `dcbf r0,r2`"));
        assert!(e("beq r3").contains("label"));
    }
}
