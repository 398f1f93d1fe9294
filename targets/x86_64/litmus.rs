//! herd's X86 litmus syntax (Intel operand order, 32-bit values) lowered to GNU assembler.
//!
//! Supported: `MOV` between registers, memory and immediates, `XCHG` of a register with
//! memory, `MFENCE`, and `LOCK` with `ADD`, `SUB`, `INC`, `DEC`, `XCHG`, `XADD` on memory.

use crate::litmus::{Isa, Lowered};

pub struct X86;

const REGISTERS: [&str; 7] = ["EAX", "EBX", "ECX", "EDX", "ESI", "EDI", "EBP"];

enum Operand {
    Reg(String),
    Mem(String),
    Imm(i64),
}

fn operand(s: &str) -> Result<Operand, String> {
    let s = s.trim();
    if let Some(m) = s.strip_prefix('[').and_then(|m| m.strip_suffix(']')) {
        let m = m.trim();
        let ident = m.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && m.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ident || REGISTERS.contains(&m) {
            return Err(format!(
                "unsupported memory operand `{s}` (only named locations such as `[x]`)"
            ));
        }
        return Ok(Operand::Mem(m.to_string()));
    }
    if let Some(v) = s.strip_prefix('$') {
        return v
            .parse::<i64>()
            .map(Operand::Imm)
            .map_err(|_| format!("unsupported immediate `{s}`"));
    }
    if REGISTERS.contains(&s) {
        return Ok(Operand::Reg(s.to_string()));
    }
    Err(format!("unsupported operand `{s}`"))
}

impl Isa for X86 {
    fn arch(&self) -> &'static str {
        "X86"
    }

    fn is_register(&self, name: &str) -> bool {
        REGISTERS.contains(&name)
    }

    fn reg_operand(&self, reg: &str) -> String {
        format!("%k[{reg}]")
    }

    fn mem_operand(&self, symbol: &str) -> String {
        format!("{symbol}(%%rip)")
    }

    fn lower(&self, instr: &str) -> Result<Lowered, String> {
        let unsupported = |why: &str| format!("unsupported instruction `{instr}`{why}");
        let text = instr.trim();
        let (lock, text) = match text.split_once(char::is_whitespace) {
            Some((p, rest)) if p.eq_ignore_ascii_case("LOCK") => (true, rest.trim()),
            _ => (false, text),
        };
        let (mnemonic, ops) = match text.split_once(char::is_whitespace) {
            Some((m, rest)) => (m.to_ascii_uppercase(), rest.trim()),
            None => (text.to_ascii_uppercase(), ""),
        };
        let ops: Vec<Operand> = if ops.is_empty() {
            Vec::new()
        } else {
            ops.split(',')
                .map(operand)
                .collect::<Result<_, _>>()
                .map_err(|e| unsupported(&format!(": {e}")))?
        };
        let mut low = Lowered::default();
        let mut render = |o: &Operand| match o {
            Operand::Reg(r) => {
                low.regs.push(r.clone());
                format!("%[{r}]")
            }
            Operand::Mem(m) => {
                low.locs.push(m.clone());
                format!("LOC({m})")
            }
            Operand::Imm(v) => format!("${v}"),
        };
        use Operand::{Imm, Mem, Reg};
        let asm = match (mnemonic.as_str(), ops.as_slice(), lock) {
            ("MFENCE", [], false) => "mfence".to_string(),
            ("MOV", [d @ (Reg(_) | Mem(_)), s @ (Reg(_) | Imm(_))], false)
            | ("MOV", [d @ Reg(_), s @ Mem(_)], false) => {
                let (d, s) = (render(d), render(s));
                format!("movl {s}, {d}")
            }
            ("XCHG", [m @ Mem(_), r @ Reg(_)] | [r @ Reg(_), m @ Mem(_)], _) => {
                let (m, r) = (render(m), render(r));
                format!("{}xchgl {r}, {m}", if lock { "lock " } else { "" })
            }
            ("ADD" | "SUB" | "XADD", [m @ Mem(_), s @ (Reg(_) | Imm(_))], true)
                if mnemonic != "XADD" || matches!(s, Reg(_)) =>
            {
                let (m, s) = (render(m), render(s));
                format!("lock {}l {s}, {m}", mnemonic.to_ascii_lowercase())
            }
            ("INC" | "DEC", [m @ Mem(_)], true) => {
                let m = render(m);
                format!("lock {}l {m}", mnemonic.to_ascii_lowercase())
            }
            (_, _, false) if ["ADD", "SUB", "INC", "DEC", "XADD"].contains(&mnemonic.as_str()) => {
                return Err(unsupported(
                    " (read-modify-write instructions are supported with LOCK only)",
                ))
            }
            _ => {
                return Err(unsupported(
                    " (supported: MOV, XCHG, MFENCE, LOCK ADD/SUB/INC/DEC/XCHG/XADD)",
                ))
            }
        };
        low.asm = asm;
        Ok(low)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asm(i: &str) -> String {
        X86.lower(i).unwrap().asm
    }

    #[test]
    fn lowers_the_litmus_subset() {
        assert_eq!(asm("MOV [x],$1"), "movl $1, LOC(x)");
        assert_eq!(asm("MOV EAX,[y]"), "movl LOC(y), %[EAX]");
        assert_eq!(asm("MOV EBX,$-2"), "movl $-2, %[EBX]");
        assert_eq!(asm("MOV [x],EAX"), "movl %[EAX], LOC(x)");
        assert_eq!(asm("XCHG [x],EAX"), "xchgl %[EAX], LOC(x)");
        assert_eq!(asm("LOCK XCHG [x],EBX"), "lock xchgl %[EBX], LOC(x)");
        assert_eq!(asm("LOCK ADD [s0],$0"), "lock addl $0, LOC(s0)");
        assert_eq!(asm("LOCK INC [x]"), "lock incl LOC(x)");
        assert_eq!(asm("MFENCE"), "mfence");
        let l = X86.lower("XCHG [x],EAX").unwrap();
        assert_eq!((l.regs, l.locs), (vec!["EAX".into()], vec!["x".into()]));
    }

    #[test]
    fn names_what_it_does_not_support() {
        let e = |i: &str| X86.lower(i).unwrap_err();
        assert!(e("ADD [x],$1").contains("`ADD [x],$1`"));
        assert!(e("MOV EAX,[EBX]").contains("`[EBX]`"));
        assert!(e("JMP L0").contains("`JMP L0`"));
        assert!(e("MOV [x],[y]").contains("unsupported instruction"));
        assert!(e("LOCK MOV [x],$1").contains("unsupported instruction"));
    }
}
