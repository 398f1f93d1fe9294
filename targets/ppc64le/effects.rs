//! What a POWER instruction word does to the registers the dependency analyses follow: the
//! general registers and condition-register fields it writes, and from which (`effect`),
//! where a branch goes (`branch`), and which loads and stores move a general register.

/// How an instruction moves dependencies between registers.
pub(super) enum Effect {
    /// Writes `dst` from the sources (a subset of its true sources is enough).
    Gpr { dst: u32, srcs: Vec<u32> },
    /// Sets CR field `field` from the sources.
    Compare { field: u32, srcs: Vec<u32> },
    /// Writes `dst` and sets CR0 from the sources (a record form).
    GprAndCr0 { dst: u32, srcs: Vec<u32> },
    /// Writes no general register and no CR field (stores, fences, traps, floating point).
    Nothing,
    /// Sets CR field `field` from floating-point registers (which carry no dependency):
    /// `fcmpu`, `fcmpo`, a floating-point record form (CR1).
    FloatCompare { field: u32 },
    /// Anything else: what it writes is not known.
    Unknown,
}

pub(super) fn field(w: u32, shift: u32) -> u32 {
    (w >> shift) & 31
}

/// The register effect of a word that is not a memory access or a branch.
pub(super) fn effect(w: u32) -> Effect {
    let po = w >> 26;
    let (rt, ra) = (field(w, 21), field(w, 16));
    let base = |r: u32| if r == 0 { vec![] } else { vec![r] };
    match po {
        14 | 15 => Effect::Gpr {
            dst: rt,
            srcs: base(ra),
        }, // addi (li), addis (lis)
        7 | 8 => Effect::Gpr {
            dst: rt,
            srcs: vec![ra],
        }, // mulli, subfic
        12 => Effect::Gpr {
            dst: rt,
            srcs: vec![ra],
        }, // addic
        13 => Effect::GprAndCr0 {
            dst: rt,
            srcs: vec![ra],
        }, // addic.
        24..=27 => Effect::Gpr {
            dst: ra,
            srcs: vec![rt],
        }, // ori, oris, xori, xoris
        28 | 29 => Effect::GprAndCr0 {
            dst: ra,
            srcs: vec![rt],
        }, // andi., andis.
        20 | 21 | 23 | 30 => {
            // rlwimi, rlwinm, rlwnm, the rld* family: RA from RS (and more)
            if w & 1 == 1 {
                Effect::GprAndCr0 {
                    dst: ra,
                    srcs: vec![rt],
                }
            } else {
                Effect::Gpr {
                    dst: ra,
                    srcs: vec![rt],
                }
            }
        }
        10 | 11 => Effect::Compare {
            field: rt >> 2,
            srcs: vec![ra],
        }, // cmpli, cmpi
        // fcmpu, fcmpo: crfD
        63 if matches!((w >> 1) & 0x3ff, 0 | 32) => Effect::FloatCompare { field: rt >> 2 },
        // a record form (Rc) of a floating-point operation sets CR1
        59 | 63 if w & 1 == 1 => Effect::FloatCompare { field: 1 },
        2 | 3 | 59 | 63 | 60 => Effect::Nothing, // tdi, twi, floating point, VSX
        31 => x_effect(w),
        _ => Effect::Unknown,
    }
}

/// The register effect of an X/XO-form word of primary opcode 31.
fn x_effect(w: u32) -> Effect {
    let (rt, ra, rb) = (field(w, 21), field(w, 16), field(w, 11));
    let xo = (w >> 1) & 0x3ff;
    let record = w & 1 == 1;
    let with_cr0 = |dst: u32, srcs: Vec<u32>| {
        if record {
            Effect::GprAndCr0 { dst, srcs }
        } else {
            Effect::Gpr { dst, srcs }
        }
    };
    // XO forms: RT from RA and RB; the overflow bit (OE, above the 9-bit opcode) only on
    // those that have one (not mulhw, mulhwu, mulhd, mulhdu)
    let oe = if xo >= 512 { xo - 512 } else { xo };
    match oe {
        266 | 10 | 138 | 40 | 8 | 136 | 235 | 233 | 491 | 459 | 489 | 457 => {
            return with_cr0(rt, vec![ra, rb]);
        }
        202 | 234 | 200 | 232 | 104 => return with_cr0(rt, vec![ra]), // addze, addme, subfze, subfme, neg
        _ => {}
    }
    match xo {
        75 | 11 | 73 | 9 => with_cr0(rt, vec![ra, rb]), // mulhw, mulhwu, mulhd, mulhdu
        0 | 32 => Effect::Compare {
            field: rt >> 2,
            srcs: vec![ra, rb],
        }, // cmp, cmpl
        // logical and shifts: RA from RS and RB
        28 | 60 | 444 | 412 | 316 | 476 | 124 | 284 | 24 | 536 | 792 | 27 | 539 | 794 => {
            with_cr0(ra, vec![rt, rb])
        }
        // RA from RS: srawi, sradi (two encodings), extsw, extsh, extsb, cntlzw, cntlzd,
        // popcntd, popcntw
        824 | 826 | 827 | 986 | 922 | 954 | 26 | 58 | 506 | 378 => with_cr0(ra, vec![rt]),
        // sync, eieio, dcbt, dcbtst, dcbf, dcbst, icbi: nothing written
        598 | 854 | 278 | 246 | 86 | 54 | 982 => Effect::Nothing,
        // mtspr (LR, CTR, XER), mtcrf/mtocrf: the condition register
        467 => Effect::Nothing,
        144 => Effect::Unknown,
        // mfspr, mfcr/mfocrf: RT from nothing tracked
        339 | 19 => Effect::Gpr {
            dst: rt,
            srcs: vec![],
        },
        _ => Effect::Unknown,
    }
}

/// What a branch word does: its targets (`None`: not a branch).
pub(super) struct Branch {
    /// The address it may go to (a relative or absolute target), if known.
    pub(super) target: Option<u64>,
    /// It may also go on to the next word.
    pub(super) falls_through: bool,
    /// It may not branch at all but stay (a conditional or counter branch): the CR field it
    /// tests, if it tests one.
    pub(super) tests: Option<u32>,
    /// Where one CR bit alone decides it (a conditional branch that leaves the counter as it
    /// is): that bit, and the value with which it goes to `target`.
    pub(super) decided_by: Option<(u32, bool)>,
    /// It saves the return address (a call).
    pub(super) links: bool,
}

pub(super) fn branch(w: u32, addr: u64) -> Option<Branch> {
    let po = w >> 26;
    let links = w & 1 == 1;
    let absolute = w & 2 == 2;
    match po {
        18 => {
            let li = ((w & 0x03ff_fffc) as i32) << 6 >> 6;
            let t = if absolute {
                li as i64 as u64
            } else {
                addr.wrapping_add(li as i64 as u64)
            };
            Some(Branch {
                target: Some(t),
                falls_through: links,
                tests: None,
                decided_by: None,
                links,
            })
        }
        16 | 19 => {
            if po == 19 && !matches!((w >> 1) & 0x3ff, 16 | 528 | 560) {
                return None; // not bclr, bcctr, bctar
            }
            let bo = field(w, 21);
            let bi = field(w, 16);
            let always = bo & 0x14 == 0x14;
            let tests = (bo & 0x10 == 0).then_some(bi >> 2);
            let decided_by = (bo & 0x14 == 0x04).then_some((bi, bo & 0x08 != 0));
            let target = (po == 16).then(|| {
                let bd = ((w & 0xfffc) as i16) as i64;
                if absolute {
                    bd as u64
                } else {
                    addr.wrapping_add(bd as u64)
                }
            });
            Some(Branch {
                target,
                falls_through: !always || links,
                tests,
                decided_by,
                links,
            })
        }
        _ => None,
    }
}

/// Whether word `w` jumps to an address in a register without linking (`bctr`, `bctar`: a
/// switch's jump table), whose targets are not known.
pub(super) fn jumps_indirectly(w: u32) -> bool {
    w >> 26 == 19 && matches!((w >> 1) & 0x3ff, 528 | 560) && w & 1 == 0
}

/// Whether the store word `w` stores a general register (its RS): stw, stb, sth, std, their X
/// and update forms, stmw (its first register), stwcx. and friends.
pub(super) fn stores_gpr(w: u32) -> bool {
    let po = w >> 26;
    let xo = (w >> 1) & 0x3ff;
    matches!(po, 36..=39 | 44 | 45 | 47 | 62)
        || (po == 31
            && matches!(
                xo,
                151 | 183
                    | 215
                    | 247
                    | 407
                    | 439
                    | 149
                    | 181
                    | 918
                    | 662
                    | 660
                    | 694
                    | 726
                    | 150
                    | 214
            ))
}

/// Whether the load word `w` loads a general register (its RT).
pub(super) fn loads_gpr(w: u32) -> bool {
    let po = w >> 26;
    let xo = (w >> 1) & 0x3ff;
    matches!(po, 32..=35 | 40..=43 | 58)
        || (po == 31
            && matches!(
                xo,
                23 | 55
                    | 341
                    | 373
                    | 87
                    | 119
                    | 279
                    | 311
                    | 343
                    | 375
                    | 21
                    | 53
                    | 790
                    | 534
                    | 532
                    | 52
                    | 116
                    | 20
                    | 84
            ))
}
