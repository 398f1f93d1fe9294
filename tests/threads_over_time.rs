//! The thread limit counts threads alive at once: a joined thread's slot is taken by the next
//! one. Past the limit the execution is cut, as at the step bound (verdict `bounded`, exit 3),
//! never an error of the program's.

mod common;

use common::{builds, check, compile, source, Scratch};

#[test]
fn hundreds_of_threads_created_and_joined_in_turn_are_checked() {
    let scratch = Scratch::new("threads-over-time");
    for (cc, opt) in builds() {
        let bin = compile(&scratch, &source("many_threads.c"), cc, &[opt]);
        for model in ["sc", "tso", "pso"] {
            // each thread joined before the next starts: one execution
            let r = check(&bin, model, &[]);
            assert_eq!(
                (r.verdict(), r.executions()),
                ("ok", 1),
                "{cc} {opt} {model}\n{}{}",
                r.stdout,
                r.stderr
            );
        }
    }
}

/// The same with a process per execution and real threads (the executor of ppc64le
/// programs): a joined thread's slot serves the next one there too.
#[test]
fn real_threads_created_and_joined_in_turn_reuse_their_slots() {
    let scratch = Scratch::new("threads-over-time-fork");
    let bin = compile(&scratch, &source("many_threads.c"), "gcc", &["-O1"]);
    let b = bin.to_str().unwrap();
    for model in ["sc", "tso"] {
        let r = common::run_env(
            &scratch.0,
            &["--json", "--model", model, b],
            &[("SMC_NO_COROUTINES", std::path::Path::new("1"))],
        );
        assert_eq!(
            (r.verdict(), r.executions()),
            ("ok", 1),
            "{model}\n{}{}",
            r.stdout,
            r.stderr
        );
        assert_eq!(r.json.as_ref().unwrap()["executor"], "fork", "{}", r.stdout);
    }
}

#[test]
fn more_threads_alive_than_the_limit_cut_the_execution() {
    let scratch = Scratch::new("threads-alive");
    let bin = compile(
        &scratch,
        &source("many_threads.c"),
        "gcc",
        &["-O1", "-DALIVE"],
    );
    for model in ["sc", "tso"] {
        let r = check(&bin, model, &[]);
        assert_eq!(
            (r.status, r.verdict(), r.executions()),
            (3, "bounded", 0),
            "{}{}",
            r.stdout,
            r.stderr
        );
        assert!(
            r.stdout.contains("more than 256 threads alive at once"),
            "{}",
            r.stdout
        );
    }
}

/// Rounds of threads, each round's workers meeting main at a barrier set up for the round,
/// under the graph engine too: its threads take the slots of the joined ones (a slot then
/// names another thread of the graph), with the interleaving engine's verdicts and counts.
#[test]
fn rounds_of_threads_take_the_slots_of_joined_ones_under_every_engine() {
    let scratch = Scratch::new("thread-rounds");
    for (cc, opt) in builds() {
        let racy = compile(&scratch, &source("thread_rounds.c"), cc, &[opt]);
        let locked = compile(&scratch, &source("thread_rounds.c"), cc, &[opt, "-DLOCKED"]);
        for model in ["sc", "tso", "pso", "ra"] {
            let mut counts = Vec::new();
            for engine in ["interleaving", "graph"] {
                if model == "ra" && engine == "interleaving" {
                    continue;
                }
                let context = format!("{cc} {opt} {model} {engine}");
                let r = check(&racy, model, &["--engine", engine]);
                assert_eq!(
                    (r.verdict(), r.error_kind()),
                    ("error", Some("assertion")),
                    "{context}\n{}{}",
                    r.stdout,
                    r.stderr
                );
                assert!(
                    r.error_message().contains("count =="),
                    "{context}: {}",
                    r.stdout
                );
                let r = check(&locked, model, &["--engine", engine]);
                assert_eq!(r.verdict(), "ok", "{context}\n{}{}", r.stdout, r.stderr);
                counts.push(r.executions());
            }
            assert!(
                counts.windows(2).all(|w| w[0] == w[1]),
                "{cc} {opt} {model}: {counts:?}"
            );
        }
    }
}
