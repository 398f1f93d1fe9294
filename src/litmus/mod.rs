//! Litmus tests in herd's format: parsing ([`parse`]), a real program generated from a test
//! ([`generate`]), and the final-state verdict computed from the observations of the explored
//! executions ([`Verdict`]). The architecture's instruction syntax is behind [`Isa`] (one
//! implementation per architecture, under `targets/`).
//!
//! The generated program runs each thread's instructions as one inline-assembly block, with
//! the test's registers as compiler-allocated operands; each thread records its final
//! registers, and `main` records the final memory values after joining every thread, with
//! `__smc_observe` (a runtime call that is not an event, so it adds nothing to explore).

pub mod expect;
mod parse;
pub mod run;

use std::collections::BTreeMap;
use std::fmt;

pub use parse::parse;

/// A register of a thread or a memory location.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Loc {
    Reg(usize, String),
    Mem(String),
}

impl fmt::Display for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Loc::Reg(t, r) => write!(f, "{t}:{r}"),
            Loc::Mem(m) => write!(f, "[{m}]"),
        }
    }
}

/// A proposition over the final state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Prop {
    True,
    False,
    Eq(Loc, i64),
    Not(Box<Prop>),
    And(Vec<Prop>),
    Or(Vec<Prop>),
}

impl Prop {
    pub fn eval(&self, value: &dyn Fn(&Loc) -> i64) -> bool {
        match self {
            Prop::True => true,
            Prop::False => false,
            Prop::Eq(l, v) => value(l) == *v,
            Prop::Not(p) => !p.eval(value),
            Prop::And(ps) => ps.iter().all(|p| p.eval(value)),
            Prop::Or(ps) => ps.iter().any(|p| p.eval(value)),
        }
    }

    fn locs<'a>(&'a self, out: &mut Vec<&'a Loc>) {
        match self {
            Prop::True | Prop::False => {}
            Prop::Eq(l, _) => out.push(l),
            Prop::Not(p) => p.locs(out),
            Prop::And(ps) | Prop::Or(ps) => ps.iter().for_each(|p| p.locs(out)),
        }
    }
}

impl fmt::Display for Prop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |f: &mut fmt::Formatter<'_>, ps: &[Prop], op: &str| {
            write!(f, "(")?;
            for (i, p) in ps.iter().enumerate() {
                if i > 0 {
                    write!(f, " {op} ")?;
                }
                write!(f, "{p}")?;
            }
            write!(f, ")")
        };
        match self {
            Prop::True => write!(f, "true"),
            Prop::False => write!(f, "false"),
            Prop::Eq(l, v) => write!(f, "{l}={v}"),
            Prop::Not(p) => write!(f, "~{p}"),
            Prop::And(ps) => list(f, ps, "/\\"),
            Prop::Or(ps) => list(f, ps, "\\/"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantifier {
    Exists,
    NotExists,
    Forall,
}

impl Quantifier {
    pub fn keyword(self) -> &'static str {
        match self {
            Quantifier::Exists => "exists",
            Quantifier::NotExists => "~exists",
            Quantifier::Forall => "forall",
        }
    }

    /// herd's name for what the test expects of the proposition.
    pub fn expectation(self) -> &'static str {
        match self {
            Quantifier::Exists => "Allowed",
            Quantifier::NotExists => "Forbidden",
            Quantifier::Forall => "Required",
        }
    }
}

/// A parsed litmus test.
#[derive(Clone, Debug)]
pub struct Test {
    pub arch: String,
    pub name: String,
    /// Initial values (locations and registers not listed start at 0).
    pub init: Vec<(Loc, i64)>,
    /// Registers and locations that start with the address of a location (`0:r2=x`, `p=a`:
    /// POWER's tests).
    pub addresses: Vec<(Loc, String)>,
    /// Each thread's instructions, as written.
    pub threads: Vec<Vec<String>>,
    /// Extra locations to show in the final states (`locations [...]`).
    pub locations: Vec<Loc>,
    pub quantifier: Quantifier,
    pub prop: Prop,
}

impl Test {
    /// What the final states show: the `locations` line and every location of the condition,
    /// registers first (by thread), then memory, each once.
    pub fn observed(&self) -> Vec<Loc> {
        let mut locs: Vec<&Loc> = self.locations.iter().collect();
        self.prop.locs(&mut locs);
        let mut out: Vec<Loc> = locs.into_iter().cloned().collect();
        out.sort();
        out.dedup();
        out
    }

    pub fn initial(&self, loc: &Loc) -> i64 {
        self.init
            .iter()
            .find(|(l, _)| l == loc)
            .map(|(_, v)| *v)
            .unwrap_or(0)
    }
}

/// An error in a litmus test: outside the supported subset, or malformed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LitmusError(pub String);

impl fmt::Display for LitmusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One instruction of a test in the architecture's inline-assembly syntax.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lowered {
    /// GNU assembler text; `%[R]` stands for the operand of register `R`, `LOC(x)` for the
    /// address of location `x` (replaced by the generator).
    pub asm: String,
    pub regs: Vec<String>,
    pub locs: Vec<String>,
    /// It accesses 8 bytes of memory (a doubleword load or store).
    pub wide: bool,
    /// The registers it forms a memory address from (none: no memory access), for
    /// architectures that address memory through registers.
    pub address_regs: Vec<String>,
    /// The registers it writes.
    pub writes: Vec<String>,
    /// `(d, s)`: it copies register `s` into `d`.
    pub copy: Option<(String, String)>,
}

/// Which locations a test accesses as doublewords, on an architecture that addresses memory
/// through registers: a register holds a location's address from the init on, until it is
/// written (a copy carries it). A doubleword access through a register whose location is not
/// known makes every location a doubleword.
#[derive(Default)]
struct Widths {
    wide: std::collections::BTreeSet<String>,
    all_wide: bool,
}

impl Widths {
    fn thread(&mut self, test: &Test, t: usize, code: &[Lowered]) {
        let mut holds: std::collections::HashMap<&str, &str> = test
            .addresses
            .iter()
            .filter_map(|(l, m)| match l {
                Loc::Reg(rt, r) if *rt == t => Some((r.as_str(), m.as_str())),
                _ => None,
            })
            .collect();
        for low in code {
            if !low.address_regs.is_empty() && low.wide {
                let mut known = low
                    .address_regs
                    .iter()
                    .filter_map(|r| holds.get(r.as_str()))
                    .peekable();
                if known.peek().is_none() {
                    self.all_wide = true;
                }
                self.wide.extend(known.map(|m| m.to_string()));
            }
            for w in &low.writes {
                holds.remove(w.as_str());
            }
            if let Some((d, s)) = &low.copy {
                match holds.get(s.as_str()).copied() {
                    Some(m) => holds.insert(d, m),
                    None => holds.remove(d.as_str()),
                };
            }
        }
    }

    /// The C type of location `m`.
    fn loc_type(&self, test: &Test, m: &str) -> &'static str {
        let holds_address = test
            .addresses
            .iter()
            .any(|(l, _)| matches!(l, Loc::Mem(h) if h == m));
        if self.all_wide || holds_address || self.wide.contains(m) {
            "int64_t"
        } else {
            "int32_t"
        }
    }
}

/// An architecture's litmus instruction syntax.
pub trait Isa: Sync {
    /// The architecture name on a test's first line (`X86`).
    fn arch(&self) -> &'static str;
    /// Whether `name` is a register of a test (as in conditions and init).
    fn is_register(&self, name: &str) -> bool;
    /// One instruction, or an error naming the unsupported construct.
    fn lower(&self, instr: &str) -> Result<Lowered, String>;
    /// Operand template of a register variable in the asm (e.g. `%k[EAX]`).
    fn reg_operand(&self, reg: &str) -> String;
    /// Address of a global in the asm (e.g. `sym(%rip)`).
    fn mem_operand(&self, symbol: &str) -> String;
    /// The asm constraint of a register variable.
    fn reg_constraint(&self) -> &'static str {
        "+r"
    }
    /// Whether a register may start with a location's address (`0:r2=x`): the architecture
    /// addresses memory through registers (so registers and locations are 64-bit).
    fn addresses_in_registers(&self) -> bool {
        false
    }
    /// The C compiler the generated program is built with when none is named.
    fn compiler(&self) -> &'static str {
        "cc"
    }
}

/// The value that stands for the address of location `name` in final states and conditions
/// (`P2:r5=y`): a register holding that address is observed as this code, which no small
/// integer of a test collides with.
pub fn address_code(name: &str) -> i64 {
    let h = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    0x4000_0000 | (h & 0x0fff_ffff) as i64
}

/// The C symbol of location `name` in the generated program.
pub fn symbol(name: &str) -> String {
    format!("litmus_{name}")
}

/// The C program of a test: threads as functions made of one asm block each, `main` starting
/// and joining them and recording the final memory values.
pub fn generate(test: &Test, isa: &dyn Isa) -> Result<String, LitmusError> {
    let observed = test.observed();
    if observed.len() > crate::channel::MAX_OBSERVED {
        return Err(LitmusError(format!(
            "the condition names {} locations; at most {} are supported",
            observed.len(),
            crate::channel::MAX_OBSERVED
        )));
    }
    let index = |l: &Loc| observed.iter().position(|o| o == l);
    let mut mems: Vec<String> = Vec::new();
    let mut add_mem = |m: &str| {
        if !mems.iter().any(|x| x == m) {
            mems.push(m.to_string());
        }
    };
    for l in test.init.iter().map(|(l, _)| l).chain(&observed) {
        if let Loc::Mem(m) = l {
            add_mem(m);
        }
    }
    for (l, m) in &test.addresses {
        if let Loc::Mem(holder) = l {
            add_mem(holder);
        }
        add_mem(m);
    }
    let reg_type = if isa.addresses_in_registers() {
        "uint64_t"
    } else {
        "uint32_t"
    };
    // a location is a word unless it holds an address or is accessed as a doubleword: every
    // access to it then has its size (the graph engine wants one size per location)
    let mut widths = Widths::default();
    let reg_constraint = isa.reg_constraint();
    let mut bodies = Vec::new();
    for (t, code) in test.threads.iter().enumerate() {
        let mut regs: Vec<String> = Vec::new();
        let mut asm = String::new();
        let lowered = code
            .iter()
            .map(|instr| isa.lower(instr))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| LitmusError(format!("P{t}: {e}")))?;
        widths.thread(test, t, &lowered);
        for low in &lowered {
            let mut text = low.asm.clone();
            for r in &low.regs {
                if !regs.contains(r) {
                    regs.push(r.clone());
                }
                text = text.replace(&format!("%[{r}]"), &isa.reg_operand(r));
            }
            for m in &low.locs {
                add_mem(m);
                text = text.replace(&format!("LOC({m})"), &isa.mem_operand(&symbol(m)));
            }
            asm.push_str(&format!("        \"{text}\\n\\t\"\n"));
        }
        let inits = test.init.iter().map(|(l, _)| l);
        let addressed = test.addresses.iter().map(|(l, _)| l);
        for l in inits.chain(addressed).chain(&observed) {
            if let Loc::Reg(rt, r) = l {
                if *rt == t && !regs.contains(r) {
                    regs.push(r.clone());
                }
            }
        }
        let mut body = format!("static void *P{t}(void *arg) {{\n");
        for r in &regs {
            let reg = Loc::Reg(t, r.clone());
            match test.addresses.iter().find(|(l, _)| *l == reg) {
                Some((_, m)) => body.push_str(&format!(
                    "    {reg_type} {r} = ({reg_type})(uintptr_t)&{};\n",
                    symbol(m)
                )),
                None => {
                    let init = test.initial(&reg);
                    body.push_str(&format!("    {reg_type} {r} = ({reg_type}){init}LL;\n"));
                }
            }
        }
        if !asm.is_empty() {
            let outs: Vec<String> = regs
                .iter()
                .map(|r| format!("[{r}] \"{reg_constraint}\"({r})"))
                .collect();
            body.push_str(&format!(
                "    __asm__ volatile(\n{asm}        : {}\n        :\n        : \"memory\", \"cc\");\n",
                outs.join(", ")
            ));
        }
        for r in &regs {
            match index(&Loc::Reg(t, r.clone())) {
                Some(i) => body.push_str(&format!("    observe({i}, {r});\n")),
                None => body.push_str(&format!("    (void){r};\n")),
            }
        }
        body.push_str("    return arg;\n}\n");
        bodies.push(body);
    }
    for l in &observed {
        if let Loc::Reg(t, r) = l {
            if *t >= test.threads.len() {
                return Err(LitmusError(format!(
                    "the condition names {t}:{r} but the test has {} threads",
                    test.threads.len()
                )));
            }
        }
    }
    let loc_type = |m: &str| {
        if isa.addresses_in_registers() {
            widths.loc_type(test, m)
        } else {
            "int32_t"
        }
    };
    let n = test.threads.len();
    let mut c = format!(
        "/* Generated by smc-run from litmus test {} ({}). */\n\
         #include <pthread.h>\n#include <stdint.h>\n#include <stdio.h>\n\n\
         /* Provided by the smc-run runtime; without it the program prints its final state. */\n\
         extern void __smc_observe(unsigned, unsigned long long) __attribute__((weak));\n\
         static uint32_t coded(uint64_t value);\n\
         static void observe(unsigned index, uint64_t value) {{\n\
         \x20   value = coded(value);\n\
         \x20   if (__smc_observe) __smc_observe(index, value);\n\
         \x20   else printf(\"%u=%d\\n\", index, (int32_t)value);\n}}\n\n",
        test.name, test.arch
    );
    let address_of = |l: &Loc| test.addresses.iter().find(|(a, _)| a == l).map(|(_, m)| m);
    for m in &mems {
        let init = test.initial(&Loc::Mem(m.clone()));
        let sym = symbol(m);
        let loc_type = loc_type(m);
        match address_of(&Loc::Mem(m.clone())) {
            // a tentative definition: every location is declared before any address is taken
            Some(_) => c.push_str(&format!("{loc_type} {sym} __attribute__((aligned(64)));\n")),
            None => c.push_str(&format!(
                "{loc_type} {sym} __attribute__((aligned(64))) = ({loc_type}){init}LL;\n"
            )),
        }
    }
    for m in &mems {
        if let Some(target) = address_of(&Loc::Mem(m.clone())) {
            let loc_type = loc_type(m);
            c.push_str(&format!(
                "{loc_type} {} __attribute__((aligned(64))) = ({loc_type})(uintptr_t)&{};\n",
                symbol(m),
                symbol(target)
            ));
        }
    }
    // a location's address, observed, is its code (address_code)
    c.push_str("static uint32_t coded(uint64_t value) {\n");
    let addresses = if isa.addresses_in_registers() {
        &mems[..]
    } else {
        &[]
    };
    for m in addresses {
        c.push_str(&format!(
            "    if (value == (uint64_t)(uintptr_t)&{}) return {}u;\n",
            symbol(m),
            address_code(m)
        ));
    }
    c.push_str("    return (uint32_t)value;\n}\n\n");
    for b in &bodies {
        c.push_str(b);
        c.push('\n');
    }
    c.push_str(&format!(
        "int main(void) {{\n    static void *(*const threads[{n}])(void *) = {{{}}};\n\
         \x20   pthread_t tid[{n}];\n\
         \x20   for (int i = 0; i < {n}; i++)\n\
         \x20       if (pthread_create(&tid[i], 0, threads[i], 0)) return 2;\n\
         \x20   for (int i = 0; i < {n}; i++) pthread_join(tid[i], 0);\n",
        (0..n)
            .map(|t| format!("P{t}"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    for (i, l) in observed.iter().enumerate() {
        if let Loc::Mem(m) = l {
            c.push_str(&format!(
                "    observe({i}, *(volatile {} *)&{});\n",
                loc_type(m),
                symbol(m)
            ));
        }
    }
    c.push_str("    return 0;\n}\n");
    Ok(c)
}

/// herd's verdict on a test from the final states of the explored executions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Each distinct final state (values of [`Test::observed`]), with how many executions
    /// reached it and whether it satisfies the proposition.
    pub states: Vec<(Vec<i64>, u64, bool)>,
    pub positive: u64,
    pub negative: u64,
}

impl Verdict {
    /// Evaluate the proposition on every observed final state. Observations are (index, value)
    /// with the index into `test.observed()`.
    pub fn new(
        test: &Test,
        observations: &BTreeMap<Vec<(u32, u64)>, u64>,
    ) -> Result<Verdict, LitmusError> {
        let locs = test.observed();
        let mut states: BTreeMap<Vec<i64>, u64> = BTreeMap::new();
        for (obs, count) in observations {
            let mut values = vec![None; locs.len()];
            for &(i, v) in obs {
                if let Some(slot) = values.get_mut(i as usize) {
                    *slot = Some(v as u32 as i32 as i64);
                }
            }
            let values: Option<Vec<i64>> = values.into_iter().collect();
            let values = values.ok_or_else(|| {
                LitmusError("an execution ended without recording its final state".into())
            })?;
            *states.entry(values).or_insert(0) += count;
        }
        let (mut positive, mut negative) = (0, 0);
        let states = states
            .into_iter()
            .map(|(values, count)| {
                let value = |l: &Loc| values[locs.iter().position(|o| o == l).unwrap()];
                let sat = test.prop.eval(&value);
                if sat {
                    positive += count;
                } else {
                    negative += count;
                }
                (values, count, sat)
            })
            .collect();
        Ok(Verdict {
            states,
            positive,
            negative,
        })
    }

    /// herd's observation: the proposition holds in no execution, some, or all.
    pub fn observation(&self) -> &'static str {
        match (self.positive, self.negative) {
            (0, _) => "Never",
            (_, 0) => "Always",
            _ => "Sometimes",
        }
    }

    /// Whether the test's condition is validated (herd's Ok / No).
    pub fn ok(&self, q: Quantifier) -> bool {
        match q {
            Quantifier::Exists => self.positive > 0,
            Quantifier::NotExists => self.positive == 0,
            Quantifier::Forall => self.negative == 0,
        }
    }
}
