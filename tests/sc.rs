//! Real C programs, compiled at test time with every available compiler at -O0 and -O2, checked
//! under sequential consistency: verdicts, error kinds and exact execution counts.

mod common;

use common::{builds, check, check_every_model, compile, source, Scratch};

/// (program, verdict, error kind, executions when the theory fixes them)
const CASES: &[(&str, &str, Option<&str>, Option<u64>)] = &[
    // three Mazurkiewicz traces: the two conflicting pairs ordered every way but the cyclic one
    ("sb.c", "ok", None, Some(3)),
    // the reader's two loads before, between or after the writer's two stores
    ("mp.c", "ok", None, Some(3)),
    ("racy_counter.c", "error", Some("assertion"), None),
    // the two critical sections in either order
    ("mutex_counter.c", "ok", None, Some(2)),
    // one thread entirely first (2), or both load first and one CAS fails once (2)
    ("cas_counter.c", "ok", None, Some(4)),
    ("lock_order_deadlock.c", "error", Some("deadlock"), None),
    ("null_publication.c", "error", Some("crash"), None),
    // spin loops terminate through await detection: no execution is cut
    ("examples/peterson.c", "ok", None, None),
    // the consumer's and the producer's critical sections in either order
    ("condvar.c", "ok", None, Some(2)),
    // the signal before the wait is lost: the waiter blocks forever
    ("condvar_lost_signal.c", "error", Some("deadlock"), None),
    ("sync_objects.c", "ok", None, None),
    ("yield_spin.c", "ok", None, None),
    // glibc's "single-threaded" flag is cleared by the first pthread_create (and is set again
    // in the next execution): the two atomic additions in either order
    ("single_threaded.c", "ok", None, Some(2)),
    // both threads read the count as zero before either frees: the second free aborts (the
    // library writes the freed block, so a free races with the other thread's reads of it)
    ("refcount_double_free.c", "error", Some("crash"), None),
    // the decrements in either order; the one that reaches zero frees, after the other's
    ("refcount_release.c", "ok", None, Some(2)),
];

fn check_case(name: &str, verdict: &str, kind: Option<&str>, executions: Option<u64>) {
    let scratch = Scratch::new(name.trim_end_matches(".c"));
    for (cc, opt) in builds() {
        let bin = compile(&scratch, &source(name), cc, &[opt]);
        let r = check(&bin, "sc", &[]);
        let ctx = format!(
            "{name} built with {cc} {opt}; reproduce: {}\nstdout:\n{}\nstderr:\n{}",
            r.command, r.stdout, r.stderr
        );
        assert_eq!(r.verdict(), verdict, "{ctx}");
        assert_eq!(r.error_kind(), kind, "{ctx}");
        if let Some(n) = executions {
            assert_eq!(r.executions(), n, "{ctx}");
        }
        assert_eq!(r.status, if verdict == "ok" { 0 } else { 1 }, "{ctx}");
    }
}

macro_rules! cases {
    ($($test:ident => $i:expr;)*) => {$(
        #[test]
        fn $test() {
            let (name, verdict, kind, n) = CASES[$i];
            check_case(name, verdict, kind, n);
        }
    )*};
}

cases! {
    store_buffering => 0;
    message_passing => 1;
    racy_counter => 2;
    mutex_counter => 3;
    cas_counter => 4;
    lock_order_deadlock => 5;
    null_publication_crash => 6;
    peterson_spin_loops => 7;
    condition_variable => 8;
    lost_signal_deadlock => 9;
    barrier_semaphore_rwlock_spinlock_trylock => 10;
    sched_yield_spin => 11;
    single_threaded_flag => 12;
}

#[test]
fn sv_comp_conventions() {
    // atomic sections: the two sections in either order, and no error
    let r = check(&source("svcomp.c"), "sc", &[]);
    assert_eq!(
        (r.verdict(), r.executions()),
        ("ok", 2),
        "{}{}",
        r.stdout,
        r.stderr
    );
    // the same program without them: the check-then-act races
    let scratch = Scratch::new("svcomp");
    let racy = scratch.0.join("svcomp_racy.c");
    let text = std::fs::read_to_string(source("svcomp.c")).unwrap();
    std::fs::write(
        &racy,
        text.replace("__VERIFIER_atomic_begin();", "")
            .replace("__VERIFIER_atomic_end();", ""),
    )
    .unwrap();
    let r = check(&racy, "sc", &[]);
    assert_eq!(
        r.error_kind(),
        Some("assertion"),
        "{}{}",
        r.stdout,
        r.stderr
    );
    let msg = r.error_message();
    assert!(msg.contains("__VERIFIER_error"), "{msg}");
}

#[test]
fn stripped_pie_o2_build() {
    let scratch = Scratch::new("stripped");
    let bin = compile(
        &scratch,
        &source("sb.c"),
        "gcc",
        &["-O2", "-fPIE", "-pie", "-s"],
    );
    let r = check(&bin, "sc", &[]);
    assert_eq!((r.verdict(), r.executions()), ("ok", 3), "{}", r.stdout);
    let bin = compile(
        &scratch,
        &source("racy_counter.c"),
        "gcc",
        &["-O2", "-fPIE", "-pie", "-s"],
    );
    assert_eq!(check(&bin, "sc", &[]).error_kind(), Some("assertion"));
}

#[test]
fn non_pie_o3_build() {
    let scratch = Scratch::new("nopie");
    let bin = compile(&scratch, &source("sb.c"), "gcc", &["-O3", "-no-pie"]);
    let r = check(&bin, "sc", &[]);
    assert_eq!((r.verdict(), r.executions()), ("ok", 3), "{}", r.stdout);
}

#[test]
fn c_file_is_compiled_first() {
    let r = check(&source("sb.c"), "sc", &[]);
    assert_eq!(
        (r.verdict(), r.executions(), r.status),
        ("ok", 3, 0),
        "{}{}",
        r.stdout,
        r.stderr
    );
}

#[test]
fn counterexample_names_functions_lines_and_globals() {
    let r = check(&source("racy_counter.c"), "sc", &[]);
    let err = &r.json.as_ref().expect("json")["error"];
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("Assertion `counter == 2' failed"),
        "{err}"
    );
    let trace = err["trace"].as_array().unwrap();
    let stores: Vec<_> = trace.iter().filter(|e| e["op"] == "store").collect();
    assert!(!stores.is_empty(), "{err}");
    for s in &stores {
        assert_eq!(s["symbol"], "counter", "{s}");
        assert!(s["function"].as_str().unwrap().starts_with("inc"), "{s}");
        assert!(
            s["line"].as_str().unwrap().starts_with("racy_counter.c:"),
            "{s}"
        );
    }
    // the lost update: both increments store 1
    assert!(stores.iter().all(|s| s["written"] == 1), "{err}");
    assert!(
        r.stdout.contains("store counter (4 B) <- 1"),
        "{}",
        r.stdout
    );
}

#[test]
fn crash_names_the_faulting_instruction() {
    let r = check(&source("null_publication.c"), "sc", &[]);
    let err = &r.json.as_ref().expect("json")["error"];
    assert_eq!(err["signal"], 11, "{err}");
    assert_eq!(err["fault_addr"], "0x0", "{err}");
    assert!(
        err["location"].as_str().unwrap().starts_with("consumer"),
        "{err}"
    );
}

#[test]
fn json_has_the_documented_fields() {
    let r = check(&source("mp.c"), "sc", &[]);
    let j = r.json.expect("the last line is JSON");
    for key in [
        "schema",
        "verdict",
        "model",
        "executions",
        "blocked",
        "bounded",
        "elapsed_s",
    ] {
        assert!(j.get(key).is_some(), "missing {key} in {j}");
    }
    assert_eq!(j["model"], "sc");
    assert!(j.get("error").is_none());
}

#[test]
fn step_bound_gives_bounded_verdict() {
    let r = check(&source("sb.c"), "sc", &["--max-steps", "4"]);
    assert_eq!((r.verdict(), r.status), ("bounded", 3), "{}", r.stdout);
}

/// The racy counter (`counter` ends at 1 or 2) with `__VERIFIER_assume(assumption)` before its
/// check, written into `scratch`.
fn racy_counter_assuming(scratch: &Scratch, assumption: &str) -> std::path::PathBuf {
    let src = scratch.0.join("assume.c");
    let text = std::fs::read_to_string(source("racy_counter.c")).unwrap();
    let text = text
        .replace(
            "#include <pthread.h>",
            "#include <pthread.h>\n#include \"smc_verifier.h\"",
        )
        .replace(
            "    assert(counter == 2);",
            &format!("    __VERIFIER_assume({assumption});\n    assert(counter == 2);"),
        );
    std::fs::write(&src, text).unwrap();
    src
}

#[test]
fn failed_assumption_drops_the_execution() {
    // the racy counter, assuming no update is lost: of its four traces, the two serial ones
    // complete and the two lost-update ones are dropped
    let scratch = Scratch::new("assume");
    let src = racy_counter_assuming(&scratch, "counter == 2");
    let r = check(&src, "sc", &[]);
    assert_eq!(r.verdict(), "ok", "{}{}", r.stdout, r.stderr);
    let j = r.json.unwrap();
    assert_eq!(
        (j["executions"].as_u64(), j["blocked"].as_u64()),
        (Some(2), Some(2)),
        "{j}"
    );
}

#[test]
fn a_check_whose_every_execution_is_dropped_checked_nothing() {
    // the racy counter, assuming an impossible final value: every execution is dropped
    let scratch = Scratch::new("vacuous");
    let src = racy_counter_assuming(&scratch, "counter == 3");
    let r = check(&src, "sc", &[]);
    assert_eq!(
        (r.verdict(), r.status),
        ("vacuous", 4),
        "{}{}",
        r.stdout,
        r.stderr
    );
    let j = r.json.as_ref().unwrap();
    assert_eq!(
        (j["executions"].as_u64(), j["blocked"].as_u64()),
        (Some(0), Some(4)),
        "{j}"
    );
    let text = common::run(&["--model", "sc", src.to_str().unwrap()]);
    assert!(
        text.stdout.contains("verdict: NOTHING CHECKED"),
        "{}",
        text.stdout
    );
    assert!(!text.stdout.contains("verdict: OK"), "{}", text.stdout);
}

/// `__VERIFIER_nondet_*` values are choices: every combination of the domain is an execution
/// (the thread's choice is independent of main's), and the error needs values outside the
/// default domain {0, 1}.
#[test]
fn nondet_values_are_explored() {
    for (model, n, verdict, executions) in [
        ("sc", "1", "ok", 1),
        ("sc", "2", "ok", 8),
        ("tso", "2", "ok", 8),
        ("sc", "3", "error", 18),
        ("pso", "3", "error", 18),
    ] {
        for engine in ["interleaving", "graph"] {
            let r = check(
                &source("nondet.c"),
                model,
                &["--keep-going", "--nondet-values", n, "--engine", engine],
            );
            assert_eq!(
                (r.verdict(), r.executions()),
                (verdict, executions),
                "{model} {n} {engine}\n{}{}",
                r.stdout,
                r.stderr
            );
        }
    }
}

/// Nondet values drawn in threads and kept in range by `__VERIFIER_assume` there: each value
/// pair times each of the 20 traces of the threads' accesses (the values decide no branch
/// until main's check), under both engines (the graph engine with none blocked).
#[test]
fn nondet_values_and_assumptions_in_threads() {
    for (n, verdict) in [(2u64, "ok"), (3, "error")] {
        for engine in ["interleaving", "graph"] {
            let values = n.to_string();
            let r = check(
                &source("nondet_push.c"),
                "sc",
                &[
                    "--keep-going",
                    "--nondet-values",
                    &values,
                    "--engine",
                    engine,
                ],
            );
            let ctx = format!("{n} {engine}\n{}{}", r.stdout, r.stderr);
            assert_eq!(
                (r.verdict(), r.executions()),
                (verdict, n * n * 20),
                "{ctx}"
            );
            if engine == "graph" {
                assert_eq!(r.blocked(), 0, "{ctx}");
            }
        }
    }
}

/// A `reach_error` the program defines itself (empty, as in many SV-COMP tasks) is hooked:
/// reaching it is the error, named where it was called: main reads 0 (no error), or 1 with the
/// thread's exit after or before its failing step (2 errors). (Optimising compilers remove a
/// call of an empty function, hence -O0, as SV-COMP's tasks are built by tests/svcomp.py.)
#[test]
fn a_reach_error_of_the_programs_own_is_the_error_call() {
    let scratch = Scratch::new("own-reach-error");
    for cc in ["gcc", "clang"] {
        let bin = compile(&scratch, &source("own_reach_error.c"), cc, &["-O0"]);
        for model in ["sc", "tso"] {
            let r = check(&bin, model, &["--keep-going"]);
            let error = r.json.as_ref().map(|j| j["error"].clone());
            let message = error.as_ref().and_then(|e| e["message"].as_str());
            assert_eq!(
                (r.verdict(), r.executions(), message),
                ("error", 3, Some("reach_error() reached")),
                "{cc} {model}\n{}{}",
                r.stdout,
                r.stderr
            );
        }
    }
}

/// An execution that a thread ends (here main's abort) cut the other threads off: their next
/// operations race with its last step, so the executions where they run first are explored
/// too, and the assertion behind the check is reached.
#[test]
fn an_abort_does_not_hide_what_the_other_threads_would_do_first() {
    let scratch = Scratch::new("abort-wait");
    for (cc, opt) in builds() {
        let bin = compile(&scratch, &source("abort_wait.c"), cc, &[opt]);
        for model in ["sc", "tso", "pso"] {
            let r = check(&bin, model, &["--keep-going"]);
            let kinds = r.error_kinds();
            assert!(
                kinds.contains(&"assertion") && kinds.contains(&"crash"),
                "{cc} {opt} {model}: {kinds:?}\n{}{}",
                r.stdout,
                r.stderr
            );
        }
    }
}

/// Functions named `__VERIFIER_atomic_*` run atomically (hooked at their entry and returns;
/// nested ones are one section): the two increments in either order, no update lost. (At -O0,
/// as SV-COMP's tasks are built: an optimiser may inline them into their callers.)
#[test]
fn functions_named_atomic_run_atomically() {
    let scratch = Scratch::new("atomic-functions");
    for cc in ["gcc", "clang"] {
        let bin = compile(&scratch, &source("atomic_functions.c"), cc, &["-O0"]);
        check_every_model(&bin, &["--keep-going"], ("ok", 2), cc);
    }
}

/// An atomic section with no visible operation inside is no section (its begin is announced
/// with its first operation): threads that touch disjoint memory stay independent, one
/// execution under every model (the section's fence remains under store buffers).
#[test]
fn empty_atomic_sections_order_nothing() {
    for model in ["sc", "tso", "pso"] {
        let r = check(&source("empty_sections.c"), model, &[]);
        assert_eq!(
            (r.verdict(), r.executions()),
            ("ok", 1),
            "{model}\n{}{}",
            r.stdout,
            r.stderr
        );
    }
}

/// Atomic sections are ordered only where they touch the same memory: two sections on
/// different globals are independent (1 execution), two on one global are ordered both ways
/// (2), and a third that reads what one writes is ordered with that one only (2), never
/// seeing half of it. Under every model (a section's begin and end are fences).
#[test]
fn disjoint_atomic_sections_are_independent() {
    let scratch = Scratch::new("disjoint-sections");
    let text = std::fs::read_to_string(source("disjoint_sections.c")).unwrap();
    for (define, executions) in [("", 1), ("OVERLAP", 2), ("READER", 2)] {
        let src = scratch.0.join(format!("disjoint_sections{define}.c"));
        let defines = if define.is_empty() {
            String::new()
        } else {
            format!("#define {define}\n")
        };
        std::fs::write(&src, defines + &text).unwrap();
        for model in ["sc", "tso", "pso"] {
            let r = check(&src, model, &[]);
            assert_eq!(
                (r.verdict(), r.executions(), r.blocked()),
                ("ok", executions, 0),
                "{define} {model}\n{}{}",
                r.stdout,
                r.stderr
            );
        }
    }
}

/// Random bytes and clock readings are the same in every execution along the same schedule:
/// stores whose addresses depend on them replay (before, the second execution diverged).
#[test]
fn time_and_random_bytes_replay() {
    let scratch = Scratch::new("time-random");
    for (cc, opt) in builds() {
        let bin = compile(&scratch, &source("time_and_random.c"), cc, &[opt, "-g"]);
        check_every_model(&bin, &[], ("ok", 2), &format!("{cc} {opt}"));
    }
}
