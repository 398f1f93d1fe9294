//! The algorithms of Table 1 of Abdulla et al., "Stateless Model Checking for TSO and PSO"
//! (TACAS 2015), written afresh in examples/, each without fences and with the fences it needs:
//! the verdict per model must be the one the paper reports (an error where its table has a
//! star). Built once, with gcc -O2, to keep the suite fast.

mod common;

use common::{check, compile, example, Scratch};

const OK: &str = "ok";
const ERR: &str = "error";

/// (example, -D defines, verdicts under [sc, tso, pso])
const TABLE: &[(&str, &[&str], [&str; 3])] = &[
    ("dekker.c", &[], [OK, ERR, ERR]),
    ("dekker.c", &["-DFENCES"], [OK, OK, OK]),
    ("peterson.c", &[], [OK, ERR, ERR]),
    ("peterson.c", &["-DTSO_FENCES"], [OK, OK, ERR]),
    ("peterson.c", &["-DFENCES"], [OK, OK, OK]),
    ("lamport.c", &[], [OK, ERR, ERR]),
    ("lamport.c", &["-DFENCES"], [OK, OK, OK]),
    ("szymanski.c", &[], [OK, ERR, ERR]),
    ("szymanski.c", &["-DFENCES"], [OK, OK, OK]),
    ("dcl_singleton.c", &[], [OK, OK, ERR]),
    ("dcl_singleton.c", &["-DFENCES"], [OK, OK, OK]),
    ("parker.c", &[], [OK, ERR, ERR]),
    ("parker.c", &["-DFENCES"], [OK, OK, OK]),
    ("pgsql_latch.c", &[], [OK, OK, ERR]),
    ("pgsql_latch.c", &["-DFENCES"], [OK, OK, OK]),
    ("stack_safe.c", &[], [OK, OK, OK]),
    ("stack_unsafe.c", &[], [ERR, ERR, ERR]),
    ("indexer.c", &[], [OK, OK, OK]),
];

fn check_row(i: usize) {
    let (name, defines, verdicts) = TABLE[i];
    let scratch = Scratch::new(&format!("tacas{i}"));
    let mut flags = vec!["-O2"];
    flags.extend_from_slice(defines);
    let bin = compile(&scratch, &example(name), "gcc", &flags);
    for (model, verdict) in ["sc", "tso", "pso"].iter().zip(verdicts) {
        let r = check(&bin, model, &[]);
        assert_eq!(
            r.verdict(),
            verdict,
            "{name} {defines:?} under {model}; reproduce: {}\n{}{}",
            r.command,
            r.stdout,
            r.stderr
        );
    }
}

macro_rules! rows {
    ($($test:ident => $i:expr;)*) => {$(
        #[test]
        fn $test() {
            check_row($i);
        }
    )*};
}

rows! {
    dekker => 0;
    dekker_fenced => 1;
    peterson => 2;
    peterson_tso_fences => 3;
    peterson_fenced => 4;
    lamport => 5;
    lamport_fenced => 6;
    szymanski => 7;
    szymanski_fenced => 8;
    dcl_singleton => 9;
    dcl_singleton_fenced => 10;
    parker => 11;
    parker_fenced => 12;
    pgsql_latch => 13;
    pgsql_latch_fenced => 14;
    stack_safe => 15;
    stack_unsafe => 16;
    indexer => 17;
}

/// The mutual exclusion algorithms cross-compiled for ppc64le and checked under POWER's model
/// (RSMC, CAV 2016, Table 1): an error without fences; none with the fences POWER needs (the
/// examples' -DFENCES there: `sync` where x86-64 has `mfence`, Peterson's between its two entry
/// stores too, and an `lwsync` before the exit's stores, which x86-64 keeps in order).
#[test]
fn mutual_exclusion_on_power() {
    let scratch = Scratch::new("tacas-power");
    for name in ["dekker.c", "peterson.c", "lamport.c", "szymanski.c"] {
        for (defines, verdict) in [(&[][..], ERR), (&["-DFENCES"][..], OK)] {
            let mut flags = vec!["-O2"];
            flags.extend_from_slice(defines);
            let bin = compile(
                &scratch,
                &example(name),
                "powerpc64le-linux-gnu-gcc",
                &flags,
            );
            let r = check(&bin, "power", &[]);
            assert_eq!(
                r.verdict(),
                verdict,
                "{name} {defines:?} under power; reproduce: {}\n{}{}",
                r.command,
                r.stdout,
                r.stderr
            );
        }
    }
}
