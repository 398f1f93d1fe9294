//! The herd litmus format: `ARCH NAME`, optional doc string and `key=value` lines, the initial
//! state `{ ... }`, the thread table (`P0 | P1 ;` then one row of instructions per line), an
//! optional `locations [...]` line and the final condition (`exists`, `~exists` or `forall`).

use super::{Isa, LitmusError, Loc, Prop, Quantifier, Test};

fn err<T>(msg: impl Into<String>) -> Result<T, LitmusError> {
    Err(LitmusError(msg.into()))
}

/// Remove `(* ... *)` comments (not nested).
fn strip_comments(text: &str) -> Result<String, LitmusError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("(*") {
        out.push_str(&rest[..i]);
        match rest[i + 2..].find("*)") {
            Some(j) => rest = &rest[i + 2 + j + 2..],
            None => return err("unterminated comment `(*`"),
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// Parse a test of any architecture with an [`Isa`] (which says what is a register).
pub fn parse(text: &str) -> Result<Test, LitmusError> {
    let text = strip_comments(text)?;
    let mut lines = text.lines().enumerate().peekable();
    let (arch, name) = loop {
        match lines.next() {
            Some((_, l)) if l.trim().is_empty() => continue,
            Some((_, l)) => {
                let mut words = l.split_whitespace();
                let arch = words.next().unwrap_or_default().to_string();
                let Some(name) = words.next() else {
                    return err("line 1: expected `ARCH NAME`");
                };
                break (arch, name.to_string());
            }
            None => return err("empty file"),
        }
    };
    let Some(isa) = crate::targets::litmus_isa(&arch) else {
        return err(format!(
            "architecture `{arch}` is not supported (supported: {})",
            crate::targets::LITMUS_ARCHS.join(", ")
        ));
    };
    // Doc string and key=value lines, up to the initial state.
    let mut init_text = String::new();
    loop {
        let Some((n, l)) = lines.next() else {
            return err("no initial state `{ ... }`");
        };
        if let Some(i) = l.find('{') {
            let mut chunk = l[i + 1..].to_string();
            loop {
                if let Some(j) = chunk.find('}') {
                    init_text.push_str(&chunk[..j]);
                    // (`};` as some tests close it)
                    let after = chunk[j + 1..].trim();
                    if !after.is_empty() && after != ";" {
                        return err(format!("line {}: text after `}}`", n + 1));
                    }
                    break;
                }
                init_text.push_str(&chunk);
                init_text.push(' ');
                match lines.next() {
                    Some((_, l)) => chunk = l.to_string(),
                    None => return err("unterminated initial state `{`"),
                }
            }
            break;
        }
    }
    // herd's symbolic registers (`%t0=t`, a register of whichever thread names it) apart
    let mut symbolic = Vec::new();
    let mut plain = String::new();
    for item in init_text.split(';') {
        match item
            .trim()
            .strip_prefix('%')
            .and_then(|i| i.split_once('='))
        {
            Some((name, value))
                if is_ident(name.trim()) && isa.is_register(&symbolic_register(name.trim())) =>
            {
                symbolic.push((name.trim().to_string(), value.trim().to_string()));
            }
            _ => {
                plain.push_str(item);
                plain.push(';');
            }
        }
    }
    let (mut init, mut addresses) = parse_init(&plain, isa)?;
    // The thread table.
    let (n, header) = loop {
        match lines.next() {
            Some((_, l)) if l.trim().is_empty() => continue,
            Some(x) => break x,
            None => return err("no thread table"),
        }
    };
    let cells = table_row(header).ok_or_else(|| {
        LitmusError(format!(
            "line {}: expected the thread header `P0 | P1 ... ;`",
            n + 1
        ))
    })?;
    for (i, c) in cells.iter().enumerate() {
        if *c != format!("P{i}") {
            return err(format!(
                "line {}: expected thread `P{i}`, found `{c}`",
                n + 1
            ));
        }
    }
    let mut threads = vec![Vec::new(); cells.len()];
    while let Some(&(n, l)) = lines.peek() {
        if l.trim().is_empty() {
            lines.next();
            continue;
        }
        // (the condition may end with `;` too)
        let keyword = ["exists", "~", "forall", "locations", "final", "filter"]
            .iter()
            .any(|k| l.trim_start().starts_with(k));
        let Some(row) = table_row(l).filter(|_| !keyword) else {
            break;
        };
        if row.len() != threads.len() {
            return err(format!(
                "line {}: {} columns, the table has {}",
                n + 1,
                row.len(),
                threads.len()
            ));
        }
        for (t, cell) in row.into_iter().enumerate() {
            if !cell.is_empty() {
                threads[t].push(cell.to_string());
            }
        }
        lines.next();
    }
    // each thread's symbolic registers: renamed, and started as the initial state says
    symbolic.sort_by_key(|(name, _)| std::cmp::Reverse(name.len()));
    for (t, code) in threads.iter_mut().enumerate() {
        for (name, value) in &symbolic {
            let used = code.iter().any(|i| i.contains(&format!("%{name}")));
            if !used {
                continue;
            }
            let reg = symbolic_register(name);
            for i in code.iter_mut() {
                *i = i.replace(&format!("%{name}"), &reg);
            }
            let loc = Loc::Reg(t, reg);
            if is_ident(value) {
                addresses.push((loc, value.clone()));
            } else {
                init.push((loc, parse_value(value)?));
            }
        }
    }
    // locations and the condition (herd's `<< ... >>` display directives after it ignored).
    let rest: Vec<&str> = lines.map(|(_, l)| l.trim()).collect();
    let mut rest = rest.join(" ");
    while let Some(i) = rest.find("<<") {
        let end = rest[i..].find(">>").map_or(rest.len(), |j| i + j + 2);
        rest.replace_range(i..end, " ");
    }
    let mut rest = rest.trim().to_string();
    let mut locations = Vec::new();
    if let Some(r) = rest.strip_prefix("locations") {
        let r = r.trim_start();
        let Some(r) = r.strip_prefix('[') else {
            return err("expected `[` after `locations`");
        };
        let Some(end) = r.find(']') else {
            return err("unterminated `locations [`");
        };
        for item in r[..end].split(';').map(str::trim).filter(|s| !s.is_empty()) {
            locations.push(parse_loc(item, isa)?);
        }
        rest = r[end + 1..].trim().to_string();
    }
    // herd's older `final P; with NAME: QUANTIFIER;` is `QUANTIFIER P`
    if let Some(f) = rest.strip_prefix("final") {
        let (prop, with) = f.split_once(';').unwrap_or((f, ""));
        let quantifier = with
            .trim()
            .strip_prefix("with")
            .and_then(|w| w.split_once(':'))
            .map_or("exists", |(_, q)| q.trim().trim_end_matches(';').trim());
        rest = format!("{quantifier} {}", prop.trim());
    }
    let (quantifier, body) = if let Some(b) = rest.strip_prefix("exists") {
        (Quantifier::Exists, b)
    } else if let Some(b) = rest.strip_prefix("forall") {
        (Quantifier::Forall, b)
    } else if let Some(b) = rest.strip_prefix('~').map(str::trim_start) {
        match b.strip_prefix("exists") {
            Some(b) => (Quantifier::NotExists, b),
            None => return err(format!("unsupported final condition `{rest}`")),
        }
    } else if rest.is_empty() {
        return err("no final condition (`exists`, `~exists` or `forall`)");
    } else {
        let word = rest.split_whitespace().next().unwrap_or_default();
        return err(format!(
            "unsupported construct `{word}` before the final condition"
        ));
    };
    let body = body.trim_end().strip_suffix(';').unwrap_or(body);
    let tokens = tokenize(body)?;
    let mut p = PropParser {
        tokens: &tokens,
        pos: 0,
        isa,
    };
    let prop = p.disjunction()?;
    if p.pos != tokens.len() {
        return err(format!(
            "unexpected `{}` after the final condition",
            tokens[p.pos..].join(" ")
        ));
    }
    Ok(Test {
        arch,
        name,
        init,
        addresses,
        threads,
        locations,
        quantifier,
        prop,
    })
}

/// Cells of a `a | b | c ;` row, trimmed; None if the line is not a row.
fn table_row(line: &str) -> Option<Vec<&str>> {
    let body = line.trim().strip_suffix(';')?;
    Some(body.split('|').map(str::trim).collect())
}

fn parse_value(s: &str) -> Result<i64, LitmusError> {
    let s = s.trim();
    let (neg, digits) = match s.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, s),
    };
    let v = if let Some(h) = digits.strip_prefix("0x") {
        i64::from_str_radix(h, 16)
    } else {
        digits.parse::<i64>()
    };
    match v {
        Ok(v) => Ok(if neg { -v } else { v }),
        Err(_) => err(format!(
            "unsupported value `{s}` (only integer constants are supported)"
        )),
    }
}

/// The name a symbolic register `%name` goes by in the generated program.
fn symbolic_register(name: &str) -> String {
    format!("sym_{name}")
}

fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `N:REG`, `[x]` or `x`.
fn parse_loc(s: &str, isa: &dyn Isa) -> Result<Loc, LitmusError> {
    let s = s.trim();
    if let Some((t, r)) = s.split_once(':') {
        // `0:r1`, or `P0:r1`
        let t = t.trim();
        let t: usize = t
            .strip_prefix('P')
            .unwrap_or(t)
            .parse()
            .map_err(|_| LitmusError(format!("bad thread number in `{s}`")))?;
        // (`0:r5*`: a register that holds an address, in herd's older tests)
        let r = r.trim();
        let r = r
            .strip_suffix('*')
            .filter(|_| isa.addresses_in_registers())
            .unwrap_or(r);
        if !isa.is_register(r) {
            return err(format!("unsupported register `{r}` in `{s}`"));
        }
        return Ok(Loc::Reg(t, r.to_string()));
    }
    let m = s
        .strip_prefix('[')
        .and_then(|m| m.strip_suffix(']'))
        .unwrap_or(s)
        .trim();
    if !is_ident(m) || isa.is_register(m) {
        return err(format!("unsupported location `{s}`"));
    }
    Ok(Loc::Mem(m.to_string()))
}

/// Initial values, and the registers that start with a location's address.
type Init = (Vec<(Loc, i64)>, Vec<(Loc, String)>);

fn parse_init(text: &str, isa: &dyn Isa) -> Result<Init, LitmusError> {
    let mut init = Vec::new();
    let mut addresses = Vec::new();
    for item in text.split(';').map(str::trim).filter(|s| !s.is_empty()) {
        let Some((lhs, rhs)) = item.split_once('=') else {
            return err(format!("unsupported initial state entry `{item}`"));
        };
        // An optional C type before the location (`int x = 1`).
        let lhs = lhs.trim();
        let lhs = match lhs.rsplit_once(char::is_whitespace) {
            Some((ty, l)) if matches!(ty.trim(), "int" | "int32_t" | "uint32_t") => l,
            Some(_) => return err(format!("unsupported initial state entry `{item}`")),
            None => lhs,
        };
        let loc = parse_loc(lhs, isa)?;
        if is_ident(rhs.trim()) && isa.addresses_in_registers() {
            addresses.push((loc, rhs.trim().to_string()));
            continue;
        }
        let value = parse_value(rhs).map_err(|_| {
            LitmusError(format!(
                "unsupported initial value in `{item}` (only integer constants are supported)"
            ))
        })?;
        init.push((loc, value));
    }
    Ok((init, addresses))
}

fn tokenize(s: &str) -> Result<Vec<String>, LitmusError> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        if c.is_whitespace() {
            i += 1;
        } else if s[i..].starts_with("/\\") || s[i..].starts_with("\\/") {
            out.push(s[i..i + 2].to_string());
            i += 2;
        } else if "()~=:[]".contains(c) {
            out.push(c.to_string());
            i += 1;
        } else if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            let start = i;
            while i < b.len()
                && ((b[i] as char).is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'-')
            {
                i += 1;
            }
            out.push(s[start..i].to_string());
        } else {
            return err(format!("unexpected `{c}` in the final condition"));
        }
    }
    Ok(out)
}

struct PropParser<'a> {
    tokens: &'a [String],
    pos: usize,
    isa: &'a dyn Isa,
}

impl PropParser<'_> {
    fn peek(&self) -> Option<&str> {
        self.tokens.get(self.pos).map(String::as_str)
    }

    fn expect(&mut self, t: &str) -> Result<(), LitmusError> {
        match self.peek() {
            Some(x) if x == t => {
                self.pos += 1;
                Ok(())
            }
            Some(x) => err(format!(
                "expected `{t}` in the final condition, found `{x}`"
            )),
            None => err(format!("expected `{t}` at the end of the final condition")),
        }
    }

    fn disjunction(&mut self) -> Result<Prop, LitmusError> {
        let mut v = vec![self.conjunction()?];
        while self.peek() == Some("\\/") {
            self.pos += 1;
            v.push(self.conjunction()?);
        }
        Ok(if v.len() == 1 {
            v.pop().unwrap()
        } else {
            Prop::Or(v)
        })
    }

    fn conjunction(&mut self) -> Result<Prop, LitmusError> {
        let mut v = vec![self.unary()?];
        while self.peek() == Some("/\\") {
            self.pos += 1;
            v.push(self.unary()?);
        }
        Ok(if v.len() == 1 {
            v.pop().unwrap()
        } else {
            Prop::And(v)
        })
    }

    fn unary(&mut self) -> Result<Prop, LitmusError> {
        match self.peek() {
            Some("~") | Some("not") => {
                self.pos += 1;
                Ok(Prop::Not(Box::new(self.unary()?)))
            }
            Some("(") => {
                self.pos += 1;
                let p = self.disjunction()?;
                self.expect(")")?;
                Ok(p)
            }
            Some("true") => {
                self.pos += 1;
                Ok(Prop::True)
            }
            Some("false") => {
                self.pos += 1;
                Ok(Prop::False)
            }
            Some(_) => self.atom(),
            None => err("the final condition ends too early"),
        }
    }

    fn atom(&mut self) -> Result<Prop, LitmusError> {
        let mut text = String::new();
        while let Some(t) = self.peek() {
            if t == "=" {
                break;
            }
            if ["(", ")", "/\\", "\\/", "~"].contains(&t) {
                return match text.is_empty() {
                    true => err(format!("unexpected `{t}` in the final condition")),
                    false => err(format!(
                        "expected `=` after `{text}` in the final condition"
                    )),
                };
            }
            text.push_str(t);
            self.pos += 1;
        }
        let loc = parse_loc(&text, self.isa)?;
        self.expect("=")?;
        let Some(v) = self.peek() else {
            return err(format!("no value after `{text}=`"));
        };
        // a location's name: its address (POWER's tests compare registers with them)
        let v = if is_ident(v) && self.isa.addresses_in_registers() {
            super::address_code(v)
        } else {
            parse_value(v)?
        };
        self.pos += 1;
        Ok(Prop::Eq(loc, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SB: &str = "X86 SB\n\"PodWR Fre PodWR Fre\"\nCycle=Fre PodWR Fre PodWR\n{\n}\n \
        P0          | P1          ;\n MOV [x],$1  | MOV [y],$1  ;\n MOV EAX,[y] | MOV EAX,[x] ;\n\
        exists\n(0:EAX=0 /\\ 1:EAX=0)\n";

    #[test]
    fn parses_store_buffering() {
        let t = parse(SB).unwrap();
        assert_eq!(t.name, "SB");
        let code = |a: &str, b: &str| vec![a.to_string(), b.to_string()];
        assert_eq!(
            t.threads,
            vec![
                code("MOV [x],$1", "MOV EAX,[y]"),
                code("MOV [y],$1", "MOV EAX,[x]")
            ]
        );
        assert_eq!(t.quantifier, Quantifier::Exists);
        assert_eq!(
            t.prop,
            Prop::And(vec![
                Prop::Eq(Loc::Reg(0, "EAX".into()), 0),
                Prop::Eq(Loc::Reg(1, "EAX".into()), 0)
            ])
        );
        assert_eq!(
            t.observed(),
            vec![Loc::Reg(0, "EAX".into()), Loc::Reg(1, "EAX".into())]
        );
    }

    #[test]
    fn parses_power_tests() {
        // herd's older forms: `P0:r4=x`, `[x] = 0`, `};`, `d,rA` operands, a condition ending
        // with `;`, display directives after it
        let text = "PPC T\n{\n P0:r4=x; P1:r4=x; [x] = 0; 0:r1=1; p=x;\n};\n P0 | P1 ;\n             stw r1,0,r4 | lwz r3,0,r4 ;\n L0: sync | ;\nexists (1:r3=1 /\\ x=1);\n<<\nshow 0\n>>";
        let t = parse(text).unwrap();
        assert_eq!(
            t.addresses,
            vec![
                (Loc::Reg(0, "r4".into()), "x".to_string()),
                (Loc::Reg(1, "r4".into()), "x".to_string()),
                (Loc::Mem("p".into()), "x".to_string())
            ]
        );
        assert_eq!(
            t.init,
            vec![(Loc::Mem("x".into()), 0), (Loc::Reg(0, "r1".into()), 1)]
        );
        assert_eq!(t.threads[0], vec!["stw r1,0,r4", "L0: sync"]);
        assert_eq!(t.prop.to_string(), "(1:r3=1 /\\ [x]=1)");
        let c = super::super::generate(&t, &crate::targets::ppc64le::litmus::Ppc).unwrap();
        assert!(
            c.contains("uint64_t r4 = (uint64_t)(uintptr_t)&litmus_x;"),
            "{c}"
        );
        assert!(
            c.contains(
                "int64_t litmus_p __attribute__((aligned(64))) = (int64_t)(uintptr_t)&litmus_x;"
            ),
            "{c}"
        );
        assert!(c.contains("\"L0%=: sync\\n\\t\""), "{c}");
    }

    #[test]
    fn parses_symbolic_registers_and_final() {
        let text = "PPC S\n{\n x=0; %t0=t; %x1=x; 1:r9=5;\n}\n P0 | P1 ;\n std %t0,0(%t0) |             ld r1,0(%x1) ;\nlocations [1:r1;]\nfinal (t=1 /\\ 1:r1=0);\nwith default: forall;";
        let t = parse(text).unwrap();
        assert_eq!(t.threads[0], vec!["std sym_t0,0(sym_t0)"]);
        assert_eq!(t.threads[1], vec!["ld r1,0(sym_x1)"]);
        assert_eq!(
            t.addresses,
            vec![
                (Loc::Reg(0, "sym_t0".into()), "t".to_string()),
                (Loc::Reg(1, "sym_x1".into()), "x".to_string())
            ]
        );
        assert_eq!(t.quantifier, Quantifier::Forall);
    }

    #[test]
    fn parses_init_locations_and_forall() {
        let text = "X86 T\n{ x=1; 0:EAX=2; int y = -3; }\n P0 ;\n MOV [x],$1 ;\n\
            locations [y;]\nforall (x=1 \\/ ~([y]=2) /\\ 0:EAX=2)";
        let t = parse(text).unwrap();
        assert_eq!(
            t.init,
            vec![
                (Loc::Mem("x".into()), 1),
                (Loc::Reg(0, "EAX".into()), 2),
                (Loc::Mem("y".into()), -3)
            ]
        );
        assert_eq!(t.locations, vec![Loc::Mem("y".into())]);
        assert_eq!(t.quantifier, Quantifier::Forall);
        assert_eq!(t.prop.to_string(), "([x]=1 \\/ (~[y]=2 /\\ 0:EAX=2))");
        assert_eq!(
            t.observed(),
            vec![
                Loc::Reg(0, "EAX".into()),
                Loc::Mem("x".into()),
                Loc::Mem("y".into())
            ]
        );
    }

    #[test]
    fn rejects_what_it_does_not_support() {
        let bad = |text: &str| parse(text).unwrap_err().0;
        assert!(bad("ARM T\n{}\n P0 ;\n MOV R0,#1 ;\nexists (0:R0=1)").contains("`ARM`"));
        assert!(bad("X86 T\n{ x=y; }\n P0 ;\n MOV [x],$1 ;\nexists ([x]=1)").contains("`x=y`"));
        assert!(
            bad("X86 T\n{}\n P0 ;\n MOV [x],$1 ;\nexists ([x]=1 /\\ )").contains("unexpected `)`")
        );
        assert!(
            bad("X86 T\n{}\n P0 ;\n MOV [x],$1 ;\nfilter (0:EAX=1)\nexists ([x]=1)")
                .contains("`filter`")
        );
        assert!(bad("X86 T\n{}\n P0 | P1 ;\n MOV [x],$1 ;\nexists ([x]=1)").contains("columns"));
        assert!(bad("X86 T\n{}\n P0 ;\n MOV [x],$1 ;\n").contains("no final condition"));
    }
}
