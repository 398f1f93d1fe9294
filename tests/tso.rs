//! TSO and PSO on real programs, compiled at test time with every available compiler at -O0 and
//! -O2: verdicts under sc, tso and pso, and the exact number of executions where the theory
//! (Mazurkiewicz traces under SC, Shasha-Snir traces under TSO and PSO) fixes it. Every run
//! uses --keep-going, so an execution count covers the whole exploration.

mod common;

use common::{builds, check, compile, source, Scratch};

/// Expected outcome under one model: verdict and, where the theory fixes it, executions.
type Expect = (&'static str, Option<u64>);

const OK: &str = "ok";
const ERROR: &str = "error";

/// (program, -D defines, [sc, tso, pso])
const CASES: &[(&str, &[&str], [Expect; 3])] = &[
    // store buffering: the SC-forbidden outcome needs a store to wait behind a load
    (
        "sb.c",
        &[],
        [(OK, Some(3)), (ERROR, Some(4)), (ERROR, Some(4))],
    ),
    (
        "sb.c",
        &["-DFENCES"],
        [(OK, Some(3)), (OK, Some(3)), (OK, Some(3))],
    ),
    // message passing: stores reach memory in order under TSO, not under PSO
    (
        "mp.c",
        &[],
        [(OK, Some(3)), (OK, Some(3)), (ERROR, Some(4))],
    ),
    (
        "tso/two_plus_two_w.c",
        &[],
        [(OK, Some(3)), (OK, Some(3)), (ERROR, Some(4))],
    ),
    // independent reads of independent writes: stores are multi-copy atomic in all three
    (
        "tso/iriw.c",
        &[],
        [(OK, Some(15)), (OK, Some(15)), (OK, Some(15))],
    ),
    (
        "tso/cas_spinlock.c",
        &[],
        [(OK, None), (OK, None), (OK, None)],
    ),
    // a load half served by its own buffer, half by memory
    (
        "tso/partial_forwarding.c",
        &[],
        [(OK, Some(2)), (OK, Some(2)), (OK, Some(2))],
    ),
    // message passing awaited with sched_yield: the replayed spins must not diverge
    ("yield_spin.c", &[], [(OK, None), (OK, None), (ERROR, None)]),
    // TACAS'15 Figure 5: the load can be served by the buffer; three traces under TSO
    (
        "tso/forwarding.c",
        &[],
        [(OK, Some(3)), (OK, Some(3)), (OK, Some(3))],
    ),
    (
        "examples/dekker.c",
        &[],
        [(OK, None), (ERROR, None), (ERROR, None)],
    ),
    (
        "examples/dekker.c",
        &["-DFENCES"],
        [(OK, None), (OK, None), (OK, None)],
    ),
    (
        "examples/peterson.c",
        &[],
        [(OK, None), (ERROR, None), (ERROR, None)],
    ),
    // one mfence after both entry stores: enough for TSO, but under PSO the flag store can
    // reach memory after the turn store
    (
        "examples/peterson.c",
        &["-DTSO_FENCES"],
        [(OK, None), (OK, None), (ERROR, None)],
    ),
    // realloc and free see the thread's own buffered stores into the block, which do not
    // land in it afterwards (they did: a false alarm)
    (
        "tso/realloc_own_stores.c",
        &[],
        [(OK, Some(1)), (OK, Some(1)), (OK, Some(1))],
    ),
    // code that is not instrumented (strtol, the kernel in open) sees the thread's own
    // buffered stores (it read memory without them: a false alarm)
    (
        "tso/own_stores_in_library.c",
        &[],
        [(OK, Some(1)), (OK, Some(1)), (OK, Some(1))],
    ),
    // a page a thread stored into, unmapped by it with the store still buffered (and, under
    // sc, its value read for the report after the page was gone: the checker crashed)
    (
        "tso/unmap_own_stores.c",
        &[],
        [(OK, Some(1)), (OK, Some(1)), (OK, Some(1))],
    ),
    (
        "examples/peterson.c",
        &["-DFENCES"],
        [(OK, None), (OK, None), (OK, None)],
    ),
];

fn check_case(i: usize) {
    let (name, defines, expect) = CASES[i];
    let scratch = Scratch::new(&format!("tso{i}"));
    for (cc, opt) in builds() {
        let mut flags = vec![opt];
        flags.extend_from_slice(defines);
        let bin = compile(&scratch, &source(name), cc, &flags);
        for (model, (verdict, executions)) in ["sc", "tso", "pso"].iter().zip(expect) {
            let r = check(&bin, model, &["--keep-going"]);
            let ctx = format!(
                "{name} {defines:?} with {cc} {opt} under {model}; reproduce: {}\n{}{}",
                r.command, r.stdout, r.stderr
            );
            assert_eq!(r.verdict(), verdict, "{ctx}");
            if verdict == ERROR {
                assert_eq!(r.error_kind(), Some("assertion"), "{ctx}");
            }
            if let Some(n) = executions {
                assert_eq!(r.executions(), n, "{ctx}");
            }
        }
    }
}

macro_rules! cases {
    ($($test:ident => $i:expr;)*) => {$(
        #[test]
        fn $test() {
            check_case($i);
        }
    )*};
}

cases! {
    store_buffering => 0;
    store_buffering_with_fences => 1;
    message_passing => 2;
    two_plus_two_writes => 3;
    independent_reads_of_independent_writes => 4;
    cas_spin_lock => 5;
    partial_forwarding => 6;
    yield_spin => 7;
    buffer_forwarding => 8;
    dekker_without_fences => 9;
    dekker_with_mfence => 10;
    peterson_without_fences => 11;
    peterson_with_mfence => 12;
    realloc_sees_own_buffered_stores => 13;
    library_code_sees_own_buffered_stores => 14;
    unmapping_own_buffered_stores => 15;
    peterson_with_pso_fences => 16;
}

#[test]
fn buffer_bound_zero_is_sc_and_one_finds_store_buffering() {
    for model in ["tso", "pso"] {
        for (name, sc_executions) in [("sb.c", 3), ("mp.c", 3), ("tso/two_plus_two_w.c", 3)] {
            let r = check(
                &source(name),
                model,
                &["--keep-going", "--buffer-bound", "0"],
            );
            assert_eq!(
                (r.verdict(), r.executions()),
                (OK, sc_executions),
                "{name} {model}: {}",
                r.stdout
            );
        }
        let r = check(&source("sb.c"), model, &["--buffer-bound", "1"]);
        assert_eq!(r.error_kind(), Some("assertion"), "{model}: {}", r.stdout);
    }
}

#[test]
fn tso_is_the_default_model() {
    let r = common::run(&["--json", source("sb.c").to_str().unwrap()]);
    let j = r.json.expect("json");
    assert_eq!(
        (j["model"].as_str(), j["verdict"].as_str()),
        (Some("tso"), Some(ERROR))
    );
}

/// A free waits only for the thread's stores into its block: a racy store buffered after
/// them stays buffered past the free, and store buffering is still found.
#[test]
fn a_free_drains_its_block_not_the_whole_buffer() {
    let program = source("tso/free_between.c");
    for (model, want) in [("sc", OK), ("tso", ERROR), ("pso", ERROR)] {
        let r = check(&program, model, &[]);
        assert_eq!(r.verdict(), want, "{model}\n{}{}", r.stdout, r.stderr);
        if want == ERROR {
            let trace = &r.json.as_ref().unwrap()["error"]["trace"];
            let release = trace
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["op"] == "heap_release");
            assert_eq!(
                release.map(|e| e["symbol"].clone()),
                Some("heap#1".into()),
                "{}",
                r.stdout
            );
        }
    }
}

#[test]
fn counterexample_shows_buffered_stores_and_their_updates() {
    let r = check(&source("sb.c"), "tso", &[]);
    assert!(
        r.stdout.contains("store x (4 B) <- 1 (buffered)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("T1's buffer  update x (4 B) <- 1 reaches memory"),
        "{}",
        r.stdout
    );
    let trace = r.json.as_ref().unwrap()["error"]["trace"]
        .as_array()
        .unwrap()
        .clone();
    let store = trace
        .iter()
        .position(|e| e["op"] == "store" && e["symbol"] == "x")
        .unwrap();
    let load_y = trace
        .iter()
        .position(|e| e["op"] == "load" && e["symbol"] == "y")
        .unwrap();
    let update = trace
        .iter()
        .position(|e| e["op"] == "update" && e["symbol"] == "x")
        .unwrap();
    assert!(
        store < load_y && load_y < update,
        "the load overtook the store: {trace:?}"
    );
}

#[test]
fn more_buffered_stores_than_the_commit_queue() {
    for model in ["tso", "pso"] {
        let r = check(&source("tso/many_stores.c"), model, &[]);
        assert_eq!(
            (r.verdict(), r.executions()),
            (OK, 1),
            "{model}: {}{}",
            r.stdout,
            r.stderr
        );
    }
}

/// A read() into memory the thread has just stored to comes after that store, which is still
/// in the store buffer: the read's bytes stay (no false alarm), 2 executions under every model
/// and both engines (the graph engine's loads read what the kernel wrote over their source).
#[test]
fn input_comes_after_the_threads_buffered_stores() {
    let scratch = Scratch::new("store-then-read");
    let bin = compile(&scratch, &source("store_then_read.c"), "gcc", &["-O2"]);
    let runs = ["sc", "tso", "pso"]
        .iter()
        .flat_map(|m| [(*m, "interleaving"), (*m, "graph")])
        .chain([("ra", "graph")]);
    for (model, engine) in runs {
        let r = check(&bin, model, &["--engine", engine]);
        assert_eq!(
            (r.verdict(), r.executions()),
            ("ok", 2),
            "{model} {engine}\n{}{}",
            r.stdout,
            r.stderr
        );
    }
}

/// A library call between a thread's store and its load is a full fence where glibc's code has
/// one, under both engines: a mutex's or semaphore's try that fails only loads the word, so
/// store buffering stays reachable; a spin try-lock is a locked compare-exchange either way,
/// and sched_yield enters the kernel; a condition variable's signal with no waiter only loads
/// (the interleaving engine; the graph engine's signal is still a fence). An sfence keeps a
/// thread's stores in order under pso.
#[test]
fn library_calls_fence_where_glibc_does() {
    let scratch = Scratch::new("tso-calls");
    let sb = |sep: &str| {
        compile(
            &scratch,
            &source("tso/sb_calls.c"),
            "gcc",
            &["-O2", &format!("-DSEP={sep}")],
        )
    };
    let mp = |defines: &[&str]| {
        let mut flags = vec!["-O2"];
        flags.extend_from_slice(defines);
        compile(&scratch, &source("tso/mp_sfence.c"), "gcc", &flags)
    };
    let reachable = [(OK, 3), (ERROR, 4), (ERROR, 4)];
    let fenced = [(OK, 3), (OK, 3), (OK, 3)];
    let cases = [
        ("failed mutex try-lock", sb("1"), reachable),
        ("failed sem_trywait", sb("2"), reachable),
        ("failed spin try-lock", sb("3"), fenced),
        ("sched_yield", sb("4"), fenced),
        // (the two signals conflict: twice the orders)
        (
            "a signal with no waiter",
            sb("5"),
            [(OK, 4), (ERROR, 8), (ERROR, 8)],
        ),
        ("sfence", mp(&[]), [(OK, 2), (OK, 2), (OK, 2)]),
        (
            "no sfence",
            mp(&["-DNO_FENCE"]),
            [(OK, 2), (OK, 2), (ERROR, 3)],
        ),
    ];
    let mut failures = Vec::new();
    for (what, bin, expect) in &cases {
        for engine in ["interleaving", "graph"] {
            // (the graph engine's signal is an update whatever the waiters: a fence)
            if *what == "a signal with no waiter" && engine == "graph" {
                continue;
            }
            for (model, &(verdict, executions)) in ["sc", "tso", "pso"].iter().zip(expect) {
                let r = check(bin, model, &["--keep-going", "--engine", engine]);
                if (r.verdict(), r.executions()) != (verdict, executions) {
                    failures.push(format!(
                        "{what}, {engine} engine, {model}: {} {} (want {verdict} {executions})\n{}{}",
                        r.verdict(),
                        r.executions(),
                        r.stdout,
                        r.stderr
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Each model allows what a stronger one does: on random programs (loads, stores, branches,
/// calls, stack variables, atomic increments), every final state sc reaches is reached under
/// tso, every one of tso under pso, every one of sc under ra; and the graph engine reaches
/// exactly the states of the interleaving engine under sc, tso and pso.
#[test]
fn random_programs_reach_every_state_of_the_stronger_models() {
    let scratch = Scratch::new("random-x86");
    for seed in 1..=24u64 {
        let text = common::random_program(seed);
        let src = scratch.0.join(format!("random{seed}.c"));
        std::fs::write(&src, &text).unwrap();
        let (cc, opt) = builds()[seed as usize % 4];
        let bin = compile(&scratch, &src, cc, &[opt]);
        let states = |model: &str, engine: &str| {
            let r = check(&bin, model, &["--keep-going", "--engine", engine]);
            assert_eq!(
                r.verdict(),
                "ok",
                "seed {seed} {cc} {opt} {model} {engine}:\n{text}\n{}{}",
                r.stdout,
                r.stderr
            );
            common::outcomes(&r)
        };
        let mut by_model = Vec::new();
        for model in ["sc", "tso", "pso"] {
            let interleaving = states(model, "interleaving");
            assert_eq!(
                interleaving,
                states(model, "graph"),
                "seed {seed} {cc} {opt}: the engines differ under {model}:\n{text}"
            );
            by_model.push(interleaving);
        }
        let ra = states("ra", "graph");
        for (weaker, stronger, name) in [
            (&by_model[1], &by_model[0], "tso misses states sc"),
            (&by_model[2], &by_model[1], "pso misses states tso"),
            (&ra, &by_model[0], "ra misses states sc"),
        ] {
            let missed: Vec<&String> = stronger.difference(weaker).collect();
            assert!(
                missed.is_empty(),
                "seed {seed} {cc} {opt}: {name} reaches: {missed:?}\n{text}"
            );
        }
    }
}
