//! Memory the program reaches through the C library's memory and string functions, and through
//! the string instructions of its own code: done in pieces of at most an aligned 8-byte word,
//! each a visible event on shared memory, so a copy can be seen half done.

mod common;

use std::path::Path;

use common::{builds, check, compile, run_env, source, Scratch};
use smc_run::decode::Decoder;
use smc_run::site::site_flags;
use smc_run::targets::x86_64::X86_64;

/// The pieces give what the instructions and functions give natively: every element size,
/// alignment, direction, overlap and count, the registers and flags they leave, on shared
/// memory while a second thread exists (each piece an event). The programs assert it
/// themselves.
#[test]
fn string_instructions_and_memory_functions_give_native_results() {
    let scratch = Scratch::new("memory-access-results");
    let mut failures = Vec::new();
    for program in ["string_insns.c", "memory_functions.c"] {
        for (cc, opt) in builds() {
            let mut flags = vec![opt];
            if opt != "-O0" {
                flags.push("-D_FORTIFY_SOURCE=2"); // the checked forms (__memcpy_chk ...)
            }
            let bin = compile(&scratch, &source(program), cc, &flags);
            let native = std::process::Command::new(&bin).status().unwrap();
            assert!(native.success(), "{program} {cc} {opt} fails natively");
            // (pso is left out: its store buffers grow with every store of a long execution
            // without a fence, and these run tens of thousands)
            for model in ["sc", "tso"] {
                let r = check(&bin, model, &[]);
                if (r.verdict(), r.executions()) != ("ok", 1) {
                    failures.push(format!(
                        "{program} {cc} {opt} {model}: {} {}\n{}{}",
                        r.verdict(),
                        r.executions(),
                        r.stdout,
                        r.stderr
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// A record copied with `memcpy` while main copies it out: two words, each read before or
/// after its write, 4 executions under every model, 2 of them torn; the same as the program
/// whose copies are loops of words.
#[test]
fn a_torn_memcpy_is_found_and_explored_as_word_copies() {
    let scratch = Scratch::new("torn-memcpy");
    let mut failures = Vec::new();
    for (cc, opt) in builds() {
        let bin = compile(&scratch, &source("torn_memcpy.c"), cc, &[opt]);
        let twin = compile(
            &scratch,
            &source("torn_memcpy.c"),
            cc,
            &[opt, "-DWORD_LOOP"],
        );
        for model in ["sc", "tso", "pso"] {
            let r = check(&bin, model, &["--keep-going"]);
            let w = check(&twin, model, &["--keep-going"]);
            let got = (r.verdict(), r.executions(), r.error_kind());
            if got != ("error", 4, Some("assertion")) || w.executions() != 4 {
                failures.push(format!(
                    "{cc} {opt} {model}: {got:?}, word loops {}\n{}{}",
                    w.executions(),
                    r.stdout,
                    r.stderr
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// `rep stosb` fills a buffer of two words while main copies it out with `rep movsb`.
#[test]
fn rep_stos_and_rep_movs_on_shared_memory_are_seen_in_pieces() {
    let scratch = Scratch::new("rep-shared");
    for (cc, opt) in builds() {
        let bin = compile(&scratch, &source("rep_shared.c"), cc, &[opt]);
        for model in ["sc", "tso", "pso"] {
            let r = check(&bin, model, &["--keep-going"]);
            assert_eq!(
                (r.verdict(), r.executions(), r.error_kind()),
                ("error", 4, Some("assertion")),
                "{cc} {opt} {model}\n{}{}",
                r.stdout,
                r.stderr
            );
        }
    }
}

/// Accesses right after one another, each shorter than a jump: the first's patch ends in the
/// second, its copy going on through the second's stub (chained sites); with the runtime's
/// jump hooks off (`SMC_NO_JUMP_HOOKS`), through a trap in that stub. Either way the checker
/// finds what it finds with every access a trap of its own: the same verdicts, the same
/// executions.
#[test]
fn chained_short_accesses_are_each_an_event() {
    let scratch = Scratch::new("memory-access-chained");
    for cc in ["gcc", "clang"] {
        let bin = compile(&scratch, &source("field_stores.c"), cc, &["-O2"]);
        let program =
            smc_run::program::Program::parse(&bin, &std::fs::read(&bin).unwrap()).unwrap();
        let chained = program
            .code
            .iter()
            .flat_map(|section| X86_64.decode(section, false).sites)
            .filter(|s| s.site.flags & site_flags::CHAINED != 0)
            .count();
        // the writer's first two stores, the reader's first two loads
        assert!(chained >= 4, "{cc}: {chained} chained sites");
        for (model, verdict, executions) in [("sc", "ok", 4), ("tso", "ok", 4), ("pso", "error", 0)]
        {
            let args = ["--json", "--model", model, bin.to_str().unwrap()];
            for env in [&[][..], &[("SMC_NO_JUMP_HOOKS", Path::new("1"))]] {
                let r = run_env(&scratch.0, &args, env);
                let got = (
                    r.verdict(),
                    if verdict == "ok" { r.executions() } else { 0 },
                    r.error_kind().unwrap_or(""),
                );
                let want = (
                    verdict,
                    executions,
                    if verdict == "ok" { "" } else { "assertion" },
                );
                assert_eq!(got, want, "{cc} {model} {env:?}: {}{}", r.stdout, r.stderr);
            }
        }
    }
}
