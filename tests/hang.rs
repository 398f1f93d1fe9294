//! A hang — a thread that runs past `--exec-timeout` without a visible operation — sets that
//! thread aside for the rest of the execution: the other threads go on, the execution's races
//! are analysed as any other's, and the search goes on past it.

mod common;

use common::{builds, check, compile, run, source, Scratch};

/// main spins forever when it runs before the worker's store, and the worker fails when main
/// runs after it: 3 executions (main hangs; the worker first, then main before or after the
/// worker's check), each error kind reported with --keep-going, under every model.
#[test]
fn a_hang_does_not_hide_another_threads_error() {
    let scratch = Scratch::new("hang-and-fail");
    let mut failures = Vec::new();
    for (cc, opt) in builds() {
        let bin = compile(&scratch, &source("hang_and_fail.c"), cc, &[opt]);
        for model in ["sc", "tso", "pso"] {
            let r = check(&bin, model, &["--keep-going", "--exec-timeout", "0.5"]);
            let kinds = r.error_kinds();
            if (r.executions(), kinds.as_slice()) != (3, &["assertion", "hang"][..]) {
                failures.push(format!(
                    "{cc} {opt} {model}: {} executions, errors {kinds:?}\n{}{}",
                    r.executions(),
                    r.stdout,
                    r.stderr
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The counterexample of a hang is replayed (the engine inside the worker found it; the
/// checker runs it again to report it) with the step that hung expected to hang again, set
/// aside after a short limit: each round of the check (the first, then one with every stack
/// access visible, which finds nothing shared) takes one `--exec-timeout`, not two. Under
/// both engines, the first error being main's hang. (A limit of 1 s: no probe round before.)
#[test]
fn a_hangs_counterexample_does_not_wait_out_the_limit_again() {
    let scratch = Scratch::new("hang-replay");
    let bin = compile(&scratch, &source("hang_and_fail.c"), "gcc", &["-O2"]);
    for engine in ["interleaving", "graph"] {
        // (the wall time: the summary's counts the rounds, a replay's wait included or not)
        let started = std::time::Instant::now();
        let r = check(&bin, "sc", &["--exec-timeout", "1", "--engine", engine]);
        let wall = started.elapsed().as_secs_f64();
        let ctx = format!("{engine}: {}{}", r.stdout, r.stderr);
        assert_eq!(r.error_kinds(), ["hang"], "{ctx}");
        assert!((2.0..3.0).contains(&wall), "{wall} s\n{ctx}");
        let json = r.json.as_ref().expect("a JSON summary");
        let elapsed = json["elapsed_s"].as_f64().expect("elapsed_s");
        assert!(
            elapsed > 2.0,
            "the summary's {elapsed} s leaves out a round\n{ctx}"
        );
    }
}

/// A saved schedule records the steps that hung, so `--replay` of a hang sets the thread
/// aside after a short limit too, under both engines (without the record it waits the full
/// `--exec-timeout`, 3 s here).
#[test]
fn a_saved_hang_replays_without_the_full_limit() {
    let scratch = Scratch::new("hang-saved");
    let bin = compile(&scratch, &source("hang_and_fail.c"), "gcc", &["-O2"]);
    for engine in ["interleaving", "graph"] {
        let sched = scratch.0.join(format!("{engine}.schedule"));
        let sched = sched.to_str().unwrap();
        let args = [
            "--exec-timeout",
            "1",
            "--engine",
            engine,
            "--schedule",
            sched,
        ];
        let first = check(&bin, "sc", &args);
        let ctx = format!("{engine}: {}{}", first.stdout, first.stderr);
        assert_eq!(first.error_kinds(), ["hang"], "{ctx}");
        let started = std::time::Instant::now();
        let again = run(&[
            "--json",
            "--exec-timeout",
            "3",
            "--replay",
            sched,
            bin.to_str().unwrap(),
        ]);
        let wall = started.elapsed().as_secs_f64();
        let ctx = format!("{engine}: {}{}", again.stdout, again.stderr);
        assert_eq!(again.error_kinds(), ["hang"], "{ctx}");
        assert!(wall < 2.0, "the replay took {wall} s\n{ctx}");
    }
}

/// A thread that computes for longer than the first round's probe (1 s) without a visible
/// operation is not a hang: the round that sees every stack access finds nothing shared, and
/// the check runs again with the full limit (main computes about 1.4 s here).
#[test]
fn a_long_computation_is_not_a_hang() {
    let scratch = Scratch::new("long-compute");
    let bin = compile(&scratch, &source("long_compute.c"), "gcc", &["-O2"]);
    let r = check(&bin, "sc", &[]);
    assert_eq!(
        (r.verdict(), r.executions()),
        ("ok", 2),
        "{}{}",
        r.stdout,
        r.stderr
    );
}

/// A wait for a flag with a deadline in seconds (`time()`), which nobody sets: each round of
/// its loop reads the clock, so it is no await loop (it was reported as a livelock), and
/// `time()` moves a second a call, so the deadline comes in a few rounds. With a thread that
/// sets the flag, the wait ends either way. Under both engines and every model.
#[test]
fn a_wait_with_a_deadline_is_not_a_hang() {
    let scratch = Scratch::new("clock-deadline");
    let alone = compile(&scratch, &source("clock_deadline.c"), "gcc", &["-O2"]);
    let set = compile(
        &scratch,
        &source("clock_deadline.c"),
        "gcc",
        &["-O2", "-DSETTER"],
    );
    let mut failures = Vec::new();
    for (bin, what) in [(&alone, "alone"), (&set, "with a setter")] {
        for engine in ["interleaving", "graph"] {
            for model in ["sc", "tso", "pso", "ra"] {
                if model == "ra" && engine == "interleaving" {
                    continue;
                }
                let r = check(bin, model, &["--engine", engine]);
                if r.verdict() != "ok" {
                    failures.push(format!(
                        "{what}, {engine} under {model}: {}{}",
                        r.stdout, r.stderr
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A thread that spins with visible events (a timed wait that times out, again and again)
/// gives way to the others after a run of steps: the producer, which the consumer's spin
/// would keep from ever running before the step bound, runs, and its late store is found.
/// (The exploration used to end with one execution cut at the bound and no verdict.)
#[test]
fn a_spin_of_visible_steps_lets_the_other_threads_run() {
    let scratch = Scratch::new("timed-retry");
    let bin = compile(&scratch, &source("timed_retry.c"), "gcc", &["-O2"]);
    let runs = [
        ("sc", "interleaving"),
        ("tso", "interleaving"),
        ("pso", "interleaving"),
        ("sc", "graph"),
        ("ra", "graph"),
    ];
    for (model, engine) in runs {
        // (the graph engine's first execution runs to the step bound: the producer's lock
        // waits for an unlock that only another graph gives it; a graph that long is slow to
        // build, so the bound is lower than the default)
        let r = check(&bin, model, &["--engine", engine, "--max-steps", "3000"]);
        assert_eq!(
            (r.verdict(), r.error_kind()),
            ("error", Some("assertion")),
            "{model} {engine}\n{}{}",
            r.stdout,
            r.stderr
        );
    }
}
