//! Release/acquire (`--model ra`: the graph engine over weak traces) and the graph engine under
//! sc, tso and pso, on C programs compiled at test time with every available compiler at -O0
//! and -O2: exact verdicts, exact weak-trace counts for Tracer's families (Abdulla et al.,
//! OOPSLA 2018), where ra differs from tso, and the graph engine's counts equal to the
//! interleaving engine's (both one execution per trace) with none blocked.

mod common;

use common::{builds, check, compile, source, Scratch};

/// `name` built every way, with `defines`, checked by `each(binary, build)`.
fn each_build(test: &str, name: &str, defines: &[&str], each: impl Fn(&std::path::Path, &str)) {
    let scratch = Scratch::new(test);
    for (cc, opt) in builds() {
        let mut flags = vec![opt];
        flags.extend_from_slice(defines);
        let bin = compile(&scratch, &source(name), cc, &flags);
        each(&bin, &format!("{name} {defines:?} with {cc} {opt}"));
    }
}

/// Checks under ra with --keep-going: (verdict, executions), none blocked.
fn ra(bin: &std::path::Path, build: &str) -> (String, u64) {
    let r = check(bin, "ra", &["--keep-going"]);
    assert_eq!(r.blocked(), 0, "{build}: {}{}", r.stdout, r.stderr);
    (r.verdict().to_string(), r.executions())
}

#[test]
fn n_writers_and_a_reader_have_n_plus_one_weak_traces() {
    for n in 1..=4u64 {
        let define = format!("-DN={n}");
        each_build("ra-writers", "ra/writers.c", &[&define], |bin, build| {
            assert_eq!(ra(bin, build), ("ok".into(), n + 1), "{build}");
        });
    }
}

#[test]
fn two_writers_and_two_loads_have_3n2_3n_1_weak_traces() {
    for n in 1..=3u64 {
        let define = format!("-DN={n}");
        each_build("ra-two", "ra/two_writers.c", &[&define], |bin, build| {
            assert_eq!(
                ra(bin, build),
                ("ok".into(), 3 * n * n + 3 * n + 1),
                "{build}"
            );
        });
    }
}

/// Independent reads of independent writes: the readers may disagree on the order of the two
/// writes under ra, never under tso (stores are multi-copy atomic there).
#[test]
fn iriw_fails_only_under_ra() {
    each_build("ra-iriw", "tso/iriw.c", &[], |bin, build| {
        assert_eq!(ra(bin, build), ("error".into(), 16), "{build}");
        let r = check(bin, "ra", &[]);
        assert_eq!(r.error_kind(), Some("assertion"), "{build}: {}", r.stdout);
        // the counterexample says which write each load read: here, past a write shown
        // before it (which it names), the initial value
        assert!(
            r.stdout.contains("-> 0 (initial; #") && r.stdout.contains(" not seen yet)"),
            "{build}: {}",
            r.stdout
        );
        assert_eq!(check(bin, "tso", &[]).verdict(), "ok", "{build}");
    });
}

/// A read that must see the last of three writes to a word, two of them unordered: a weak
/// trace that sequential consistency also has, and the one where the assertion fails.
#[test]
fn a_read_of_the_last_of_unordered_writes_is_explored() {
    each_build(
        "ra-unordered",
        "ra/unordered_writes.c",
        &[],
        |bin, build| {
            assert_eq!(ra(bin, build), ("error".into(), 8), "{build}");
            assert_eq!(check(bin, "sc", &[]).verdict(), "error", "{build}");
        },
    );
}

/// Message passing with plain stores and loads: release/acquire keeps it, as tso does; store
/// buffering is allowed, and forbidden again by `mfence` (an SC fence).
#[test]
fn message_passing_holds_and_store_buffering_fails_under_ra() {
    each_build("ra-mp", "mp.c", &[], |bin, build| {
        assert_eq!(ra(bin, build), ("ok".into(), 3), "{build}");
    });
    each_build("ra-sb", "sb.c", &[], |bin, build| {
        assert_eq!(ra(bin, build), ("error".into(), 4), "{build}");
    });
    // mfence as an SC fence: the fences are ordered, and the later one sees the earlier
    // one's thread's store (2 fence orders x 2 for the load that may read either value)
    each_build("ra-sb-fences", "sb.c", &["-DFENCES"], |bin, build| {
        assert_eq!(ra(bin, build), ("ok".into(), 4), "{build}");
    });
}

/// `--engine graph` under sc, tso and pso: the verdict and errors of the interleaving engine,
/// and, where no execution fails, its number of executions (Mazurkiewicz and Shasha-Snir
/// traces are the consistent graphs), none blocked. (An execution that fails cuts the other
/// threads off: the interleaving engine counts each point where it may cut them, the graph
/// engine lets them finish first.)
#[test]
fn graph_engine_explores_as_many_executions_as_interleavings() {
    let programs: &[(&str, &[&str])] = &[
        ("sb.c", &[]),
        ("sb.c", &["-DFENCES"]),
        ("mp.c", &[]),
        ("tso/two_plus_two_w.c", &[]),
        ("tso/iriw.c", &[]),
        ("tso/forwarding.c", &[]),
        ("racy_counter.c", &[]),
        ("exit_handler_crash.c", &[]),
        ("null_publication.c", &[]),
        ("ra/writers.c", &[]),
        ("update_chain.c", &[]),
    ];
    for (name, defines) in programs {
        each_build("ra-engines", name, defines, |bin, build| {
            as_interleavings(bin, build, true, true)
        });
    }
}

/// An exit handler registered in the execution reads what memory holds at the exit: the last
/// write of each location in coherence order, whatever order the writes ran in when the
/// graph was replayed (exit_handler.c aborts where the second thread's store is last).
#[test]
fn exit_handlers_read_the_latest_writes() {
    each_build("ra-exit-handler", "exit_handler.c", &[], |bin, build| {
        for model in ["sc", "tso", "pso"] {
            let r = check(bin, model, &["--engine", "graph", "--keep-going"]);
            let failing = r
                .json
                .as_ref()
                .and_then(|j| j["errors"][0]["count"].as_u64());
            assert_eq!(
                (r.verdict(), r.executions(), r.error_kind(), failing),
                ("error", 2, Some("crash"), Some(1)),
                "{build} under {model}: {}{}",
                r.stdout,
                r.stderr
            );
        }
    });
}

/// Threads that loop thousands of times over words only they write, and a read of those
/// words after joining them: every execution has ~20,000 events, and the graph engine's work
/// per event must not grow with the graph (it grew with its cube: hours).
#[test]
fn long_loops_over_private_words_are_checked() {
    each_build("ra-long-loops", "ra/long_loops.c", &[], |bin, build| {
        assert_eq!(ra(bin, build), ("ok".into(), 2), "{build}");
        for model in ["sc", "tso", "pso"] {
            let r = check(bin, model, &["--engine", "graph"]);
            let ctx = format!("{build} under {model}: {}{}", r.stdout, r.stderr);
            assert_eq!(
                (r.verdict(), r.executions(), r.blocked()),
                ("ok", 2, 0),
                "{ctx}"
            );
        }
    });
}

/// Under sc, tso and pso, `--engine graph` gives the interleaving engine's verdict and errors,
/// and with `same_count` its executions where none fails (with `none_blocked`, none blocked).
fn as_interleavings(bin: &std::path::Path, build: &str, same_count: bool, none_blocked: bool) {
    as_interleavings_under(bin, build, same_count, none_blocked, &["sc", "tso", "pso"]);
}

/// [`as_interleavings`] under `models`.
fn as_interleavings_under(
    bin: &std::path::Path,
    build: &str,
    same_count: bool,
    none_blocked: bool,
    models: &[&str],
) {
    for &model in models {
        let i = check(bin, model, &["--keep-going"]);
        let g = check(bin, model, &["--keep-going", "--engine", "graph"]);
        let ctx = format!(
            "{build} under {model}: {}{}{}",
            i.stdout, g.stdout, g.stderr
        );
        assert_eq!(
            (g.verdict(), g.error_kinds()),
            (i.verdict(), i.error_kinds()),
            "{ctx}"
        );
        if same_count && i.verdict() == "ok" {
            assert_eq!(g.executions(), i.executions(), "{ctx}");
        }
        if none_blocked {
            assert_eq!(g.blocked(), 0, "{ctx}");
        }
    }
}

/// With `--keep-going`, an execution that ends in an error while other threads could still
/// run counts as one, under either engine: the executions are those that end in an error and
/// those that end well (which the theory fixes: the load reads 0 in one graph per order of the
/// two stores to y, in one weak trace under ra).
#[test]
fn executions_that_end_in_an_error_midway_are_counted() {
    let scratch = Scratch::new("ra-keep-going-count");
    for (cc, opt) in builds() {
        let bin = compile(&scratch, &source("assert_before_others.c"), cc, &[opt]);
        let runs = [
            ("sc", "interleaving", 2),
            ("tso", "interleaving", 2),
            ("pso", "interleaving", 2),
            ("sc", "graph", 2),
            ("tso", "graph", 2),
            ("pso", "graph", 2),
            ("ra", "graph", 1),
        ];
        for (model, engine, ending_well) in runs {
            let r = check(
                &bin,
                model,
                &["--keep-going", "--engine", engine, "-j", "1"],
            );
            let ctx = format!("{cc} {opt} {model} {engine}: {}{}", r.stdout, r.stderr);
            assert_eq!(r.error_kinds(), ["assertion"], "{ctx}");
            assert!(r.error_executions() > 0, "{ctx}");
            assert_eq!(r.executions() - r.error_executions(), ending_well, "{ctx}");
        }
    }
}

/// A read of a block another thread freed finds what the allocator wrote over its first
/// bytes, under the graph engine's heap (which reuses no block) as under glibc's: the use after
/// free is found under every model and engine.
#[test]
fn a_read_after_another_threads_free_is_found() {
    let scratch = Scratch::new("ra-use-after-free");
    for (cc, opt) in builds() {
        let bin = compile(&scratch, &source("use_after_free.c"), cc, &[opt]);
        for model in ["sc", "tso", "pso", "ra"] {
            for engine in ["interleaving", "graph"] {
                if model == "ra" && engine == "interleaving" {
                    continue;
                }
                let r = check(&bin, model, &["--engine", engine, "-j", "1"]);
                assert_eq!(
                    (r.verdict(), r.error_kind()),
                    ("error", Some("assertion")),
                    "{cc} {opt} {model} {engine}: {}{}",
                    r.stdout,
                    r.stderr
                );
            }
        }
    }
}

/// A block a thread frees comes back from its next allocation of the same size, as from
/// glibc's per-thread cache, under every engine: a Treiber stack whose pop compares only the
/// top pointer fails (ABA), and the report says which earlier block the address held; with
/// nodes never freed it holds, in as many executions under both engines. A block given back
/// holds what calloc and realloc promise, whatever another thread stored there before.
#[test]
fn an_address_the_allocator_gives_back_is_explored() {
    let scratch = Scratch::new("ra-address-reuse");
    for (cc, opt) in builds() {
        let aba = compile(&scratch, &source("treiber_aba.c"), cc, &[opt]);
        let kept = compile(
            &scratch,
            &source("treiber_aba.c"),
            cc,
            &[opt, "-DKEEP_NODES"],
        );
        let reused = compile(&scratch, &source("reused_block.c"), cc, &[opt]);
        for model in ["sc", "tso", "pso", "ra"] {
            let mut kept_counts = Vec::new();
            for engine in ["interleaving", "graph"] {
                if model == "ra" && engine == "interleaving" {
                    continue;
                }
                let context = format!("{cc} {opt} {model} {engine}");
                let r = check(&aba, model, &["--engine", engine, "-j", "1"]);
                assert_eq!(
                    (r.verdict(), r.error_kind()),
                    ("error", Some("assertion")),
                    "{context}: {}{}",
                    r.stdout,
                    r.stderr
                );
                let blocks = &r.json.as_ref().unwrap()["error"]["heap_blocks"];
                let again = blocks.as_array().unwrap().iter().any(|b| {
                    b["earlier_at_address"]
                        .as_array()
                        .is_some_and(|e| !e.is_empty())
                });
                assert!(again, "{context}: no block named as reused: {blocks}");
                let r = check(&kept, model, &["--engine", engine, "-j", "1"]);
                assert_eq!(r.verdict(), "ok", "{context}: {}{}", r.stdout, r.stderr);
                kept_counts.push(r.executions());
                let r = check(&reused, model, &["--engine", engine, "-j", "1"]);
                assert_eq!(
                    (r.verdict(), r.executions()),
                    ("ok", 1),
                    "{context}: {}{}",
                    r.stdout,
                    r.stderr
                );
            }
            assert!(
                kept_counts.windows(2).all(|w| w[0] == w[1]),
                "{cc} {opt} {model}: {kept_counts:?}"
            );
        }
    }
}

/// An await loop whose awaited value may be overwritten for good is a livelock under every
/// model and engine: under ra nothing orders two threads' writes, so where the one awaited
/// comes first in coherence order the loop spins on the other (each graph of the loop's read
/// used to count as blocked, taken to be covered by the graph where it reads the other write:
/// nothing was checked, or OK). With the writes in one thread the loop ends.
#[test]
fn an_await_on_a_write_that_may_come_first_is_a_livelock() {
    let scratch = Scratch::new("ra-await-last-write");
    for (cc, opt) in builds() {
        let racing = compile(&scratch, &source("await_last_write.c"), cc, &[opt]);
        let ordered = compile(
            &scratch,
            &source("await_last_write.c"),
            cc,
            &[opt, "-DORDERED"],
        );
        for model in ["sc", "tso", "pso", "ra"] {
            for engine in ["interleaving", "graph"] {
                if model == "ra" && engine == "interleaving" {
                    continue;
                }
                let context = format!("{cc} {opt} {model} {engine}");
                let r = check(&racing, model, &["--engine", engine, "-j", "1"]);
                assert_eq!(
                    (r.verdict(), r.error_kind()),
                    ("error", Some("hang")),
                    "{context}: {}{}",
                    r.stdout,
                    r.stderr
                );
                let r = check(&ordered, model, &["--engine", engine, "-j", "1"]);
                assert_eq!(r.verdict(), "ok", "{context}: {}{}", r.stdout, r.stderr);
            }
        }
    }
}

/// Thread-specific data's destructors run in their thread before it ends, their accesses
/// events: two threads' plain increments of one count lose an update under every model and
/// engine; atomic ones do not (the two additions in either order).
#[test]
fn destructors_of_thread_specific_data_are_explored() {
    let scratch = Scratch::new("ra-key-destructors");
    for (cc, opt) in builds() {
        let racy = compile(&scratch, &source("key_destructor_race.c"), cc, &[opt]);
        let atomic = compile(
            &scratch,
            &source("key_destructor_race.c"),
            cc,
            &[opt, "-DATOMIC"],
        );
        for model in ["sc", "tso", "pso", "ra"] {
            for engine in ["interleaving", "graph"] {
                if model == "ra" && engine == "interleaving" {
                    continue;
                }
                let r = check(&racy, model, &["--engine", engine, "-j", "1"]);
                let ctx = format!("{cc} {opt} {model} {engine}: {}{}", r.stdout, r.stderr);
                assert_eq!(
                    (r.verdict(), r.error_kind()),
                    ("error", Some("assertion")),
                    "{ctx}"
                );
                let r = check(&atomic, model, &["--engine", engine, "-j", "1"]);
                let ctx = format!("{cc} {opt} {model} {engine}: {}{}", r.stdout, r.stderr);
                assert_eq!((r.verdict(), r.executions()), ("ok", 2), "{ctx}");
            }
        }
    }
}

/// What the graph engine cannot check yet is a one-line error (exit 2), not a verdict.
#[test]
fn what_the_graph_engine_does_not_support_is_named() {
    let r = check(&source("disjoint_sections.c"), "ra", &[]);
    assert_eq!(r.status, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("does not support `atomic_begin`"),
        "{}",
        r.stderr
    );
    let r = check(
        &source("disjoint_sections.c"),
        "ra",
        &["--engine", "interleaving"],
    );
    assert_eq!(r.status, 2, "{}", r.stderr);
    assert!(r.stderr.contains("graph engine only"), "{}", r.stderr);
}

/// Futexes under the graph engine: a wait takes the futex's state (the kernel's lock, which a
/// wake waits for), reads the word, and joins the waiters if it holds the value, so no wake
/// comes between. Drepper's futex mutex, its lost wake-up (-DBUGGY), and C++20's atomic wait:
/// the interleaving engine's verdicts and errors under sc, tso and pso; under ra, sc's verdict
/// for the mutex (its atomics are locked instructions), tso's deadlock for the atomic wait.
#[test]
fn futexes_under_the_graph_engine() {
    for (defines, ra_verdict) in [(&[][..], "ok"), (&["-DBUGGY"][..], "error")] {
        each_build("ra-futex", "futex_mutex.c", defines, |bin, build| {
            as_interleavings_under(bin, build, false, false, &["sc", "tso", "pso"]);
            let ra = check(bin, "ra", &[]);
            assert_eq!(
                ra.verdict(),
                ra_verdict,
                "{build}: {}{}",
                ra.stdout,
                ra.stderr
            );
        });
    }
    let scratch = Scratch::new("ra-atomic-wait");
    for cxx in ["g++", "clang++"] {
        let flags = ["-std=c++20", "-O2"];
        let bin = compile(&scratch, &source("cpp_atomic_wait.cpp"), cxx, &flags);
        let build = format!("cpp_atomic_wait.cpp with {cxx}");
        as_interleavings_under(&bin, &build, true, false, &["sc", "tso", "pso"]);
        let ra = check(&bin, "ra", &[]);
        assert_eq!(
            ra.error_kind(),
            Some("deadlock"),
            "{build}: {}{}",
            ra.stdout,
            ra.stderr
        );
    }
}

/// Memory accessed in several sizes (a copy of a record whose fields are written one by one,
/// string instructions, the C library's copies at every alignment): an access over several
/// pieces is an event per piece, the interleaving engine's verdicts and counts under sc and
/// tso, the same verdict under ra. A word the processor writes atomically that another thread
/// reads in halves is refused (exit 2), not explored as halves x86 does not have.
#[test]
fn accesses_of_several_sizes_under_the_graph_engine() {
    for (name, defines) in [
        ("torn_memcpy.c", &[][..]),
        ("torn_memcpy.c", &["-DWORD_LOOP"][..]),
        ("rep_shared.c", &[][..]),
        ("memory_functions.c", &[][..]),
    ] {
        each_build("ra-sizes", name, defines, |bin, build| {
            as_interleavings_under(bin, build, true, true, &["sc", "tso"]);
            let (sc, ra) = (check(bin, "sc", &[]), check(bin, "ra", &[]));
            assert_eq!(
                ra.verdict(),
                sc.verdict(),
                "{build}: {}{}",
                ra.stdout,
                ra.stderr
            );
        });
    }
    each_build("ra-halves", "halves.c", &[], |bin, build| {
        let r = check(bin, "ra", &[]);
        assert_eq!(r.status, 2, "{build}: {}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains("atomically"), "{build}: {}", r.stderr);
        assert_eq!(check(bin, "tso", &[]).verdict(), "ok", "{build}");
    });
}

/// Condition variables, barriers, semaphores and read-write locks under the graph engine,
/// each a state the engine keeps (a condition variable's: its waiters, a signal waking one
/// of them as a branch of its own): the interleaving engine's verdicts and errors under sc,
/// tso and pso, and its executions where `same_count` (the graph engine's events are finer
/// where a wait's wake-up and its taking the mutex again are two events, or a read lock's
/// count changes: more graphs than interleavings of whole operations), and under ra the
/// same verdict, as these programs have no race.
#[test]
fn pthread_objects_under_the_graph_engine() {
    let programs: &[(&str, &str, &str, bool)] = &[
        ("condvar.c", "", "ok", true),
        ("condvar_lost_signal.c", "", "error", true),
        ("sync_objects.c", "", "ok", true),
        ("objects/one_slot_queue.c", "", "ok", false),
        ("objects/one_slot_queue.c", "-DSIGNAL", "error", false),
        ("objects/barrier_phases.c", "", "ok", true),
        ("objects/barrier_phases.c", "-DTHREE", "error", false),
        ("objects/barrier_phases.c", "-DONE", "error", false),
        ("objects/semaphore_handoff.c", "", "error", true),
        ("objects/semaphore_slots.c", "", "ok", true),
        ("objects/semaphore_slots.c", "-DTHREE_SLOTS", "error", false),
        ("objects/rwlock_pair.c", "", "ok", false),
        (
            "objects/rwlock_pair.c",
            "-DREAD_LOCKED_WRITER",
            "error",
            false,
        ),
    ];
    let scratch = Scratch::new("graph-objects");
    // (two builds of the four, both compilers and both levels, and sc and tso: the suite's
    // time; tso is where a semaphore's second order was missed)
    for &(name, define, verdict, same_count) in programs {
        for (cc, opt) in [("gcc", "-O2"), ("clang", "-O0")] {
            let flags: Vec<&str> = [opt, define]
                .into_iter()
                .filter(|d| !d.is_empty())
                .collect();
            let bin = compile(&scratch, &source(name), cc, &flags);
            let build = format!("{name} {flags:?} with {cc}");
            let bin = bin.as_path();
            as_interleavings_under(bin, &build, same_count, false, &["sc", "tso"]);
            let r = check(bin, "ra", &["--keep-going"]);
            let i = check(bin, "sc", &["--keep-going"]);
            let ctx = format!("{build} under ra: {}{}", r.stdout, r.stderr);
            assert_eq!(r.verdict(), verdict, "{ctx}");
            assert_eq!(r.error_kinds(), i.error_kinds(), "{ctx}");
        }
    }
}

/// Mutexes under the graph engine: a lock reads the mutex's lock word and takes it when it
/// is free (an update), waits when it is taken; an unlock frees it. The interleaving engine's
/// verdicts and executions under sc, tso and pso (some executions end blocked: a lock that
/// found the mutex taken waits, and the graph where it gets it comes through the unlock's
/// revisit), and under ra the mutual exclusion and the deadlock.
#[test]
fn mutexes_lock_under_the_graph_engine() {
    let programs: &[(&str, &str)] = &[
        ("mutex_counter.c", "ok"),
        ("lock_order_deadlock.c", "error"),
        ("../../examples/stack_safe.c", "ok"),
        ("../../examples/stack_unsafe.c", "error"),
        ("../../examples/dcl_singleton.c", "ok"),
    ];
    for (name, ra_verdict) in programs {
        each_build("ra-mutexes", name, &[], |bin, build| {
            as_interleavings(bin, build, true, false);
            let r = check(bin, "ra", &[]);
            assert_eq!(
                r.verdict(),
                *ra_verdict,
                "{build} under ra: {}{}",
                r.stdout,
                r.stderr
            );
        });
    }
}

/// Await loops: a thread whose load repeats its last one (same instruction, same state) waits
/// for a write instead of spinning; the graph where it reads a later write is visited through
/// that write's revisit (the waiting graph ends blocked); an iteration of several loads and no
/// write waits as a whole. The verdicts of the interleaving engine, under every model; a CAS
/// spin lock keeps its mutual exclusion under ra.
#[test]
fn await_loops_wait_for_a_write() {
    for name in [
        "tso/cas_spinlock.c",
        "yield_spin.c",
        "examples/lamport.c",
        "examples/dekker.c",
        "examples/peterson.c",
    ] {
        each_build("ra-await", name, &[], |bin, build| {
            for model in ["sc", "tso", "pso"] {
                let i = check(bin, model, &[]);
                let g = check(bin, model, &["--engine", "graph"]);
                assert_eq!(
                    (g.verdict(), g.error_kind()),
                    (i.verdict(), i.error_kind()),
                    "{build} under {model}: {}{}",
                    g.stdout,
                    g.stderr
                );
            }
        });
    }
    each_build("ra-spinlock", "tso/cas_spinlock.c", &[], |bin, build| {
        let r = check(bin, "ra", &[]);
        assert_eq!(r.verdict(), "ok", "{build}: {}{}", r.stdout, r.stderr);
    });
    // Dekker's loops read two locations an iteration: they wait as one; under ra the
    // algorithm needs its fences (store buffering), and holds with them
    for (defines, verdict) in [(&[][..], "error"), (&["-DFENCES"][..], "ok")] {
        each_build("ra-dekker", "examples/dekker.c", defines, |bin, build| {
            let r = check(bin, "ra", &[]);
            assert_eq!(r.verdict(), verdict, "{build}: {}{}", r.stdout, r.stderr);
        });
    }
}

/// `-j 2`: the graph engine's workers share the graphs still to visit (each worker its own
/// process), and explore each graph once: the same weak traces as one worker (sigma, N = 6:
/// 6! = 720), none blocked, and the same verdict where an execution fails. The engine runs
/// inside each worker's process (the graphs below the top claimed through the checker), or in
/// the checker (`SMC_NO_WORKER_ENGINE`, its workers sharing one pool); the shards of `--shard`
/// add up to the whole, each on two workers.
#[test]
fn graph_engine_workers_share_the_exploration() {
    let scratch = Scratch::new("ra-jobs");
    let sigma = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/programs/sigma.c");
    let bin = compile(&scratch, &sigma, "gcc", &["-O2", "-DN=6"]);
    let b = bin.to_str().unwrap();
    let engines: [(&str, &[(&str, &std::path::Path)]); 2] = [
        ("worker", &[]),
        (
            "checker",
            &[("SMC_NO_WORKER_ENGINE", std::path::Path::new("1"))],
        ),
    ];
    for (engine, env) in engines {
        for jobs in ["1", "2"] {
            let args = ["--json", "--model", "ra", "-j", jobs, b];
            let r = common::run_env(&scratch.0, &args, env);
            assert_eq!(
                (r.verdict(), r.executions(), r.blocked()),
                ("ok", 720, 0),
                "{}: {}{}",
                r.command,
                r.stdout,
                r.stderr
            );
            let json = r.json.as_ref().unwrap();
            assert_eq!(json["jobs"].as_u64(), jobs.parse().ok(), "{}", r.stdout);
            assert_eq!(json["engine"], engine, "{}", r.command);
        }
    }
    let parts: Vec<u64> = ["1/2", "2/2"]
        .iter()
        .map(|shard| {
            let r = check(&bin, "ra", &["-j", "2", "--shard", shard]);
            assert_eq!(r.verdict(), "ok", "{}{}", r.stdout, r.stderr);
            r.executions()
        })
        .collect();
    assert_eq!(parts.iter().sum::<u64>(), 720, "{parts:?}");
    assert!(
        parts.iter().all(|&p| p > 0),
        "every shard has a part: {parts:?}"
    );
    let iriw = compile(&scratch, &source("tso/iriw.c"), "gcc", &["-O2"]);
    let one = check(&iriw, "ra", &["--keep-going", "-j", "1"]);
    let two = check(&iriw, "ra", &["--keep-going", "-j", "2"]);
    assert_eq!(
        (two.verdict(), two.executions(), two.error_kinds()),
        (one.verdict(), one.executions(), one.error_kinds()),
        "{}{}",
        one.stdout,
        two.stdout
    );
}

/// A graph engine's counterexample is saved as a schedule with the bytes each read was given,
/// and `--replay` runs it again to the same error with the same reads-from (IRIW under ra;
/// store buffering under tso on the graph engine, replayed without `--engine`), a deadlock
/// too (every thread left waiting as the schedule leaves it: two mutexes taken in opposite
/// orders, a signal that wakes the wrong waiter).
#[test]
fn graph_engine_counterexamples_replay() {
    let scratch = Scratch::new("ra-replay");
    for (name, define, model, engine) in [
        ("tso/iriw.c", "-O2", "ra", None),
        ("sb.c", "-O2", "tso", Some("graph")),
        // (its error ends the process before events of its graph that come after it)
        ("examples/lamport.c", "-O0", "tso", Some("graph")),
        ("lock_order_deadlock.c", "-O2", "ra", None),
        ("objects/one_slot_queue.c", "-DSIGNAL", "ra", None),
        // (its second round's threads run in the first round's slots)
        ("thread_rounds.c", "-O2", "ra", None),
    ] {
        let bin = compile(&scratch, &source(name), "cc", &[define]);
        let b = bin.to_str().unwrap();
        let dir = scratch.0.join(model);
        std::fs::create_dir_all(&dir).unwrap();
        let mut args = vec!["--model", model, b];
        if let Some(e) = engine {
            args.extend(["--engine", e]);
        }
        let found = common::run_in(&dir, &args);
        assert_eq!(found.status, 1, "{}{}", found.stdout, found.stderr);
        let stem = bin.file_name().unwrap().to_string_lossy().into_owned();
        let schedule = dir.join(format!("smc-run-out/{stem}.{model}.schedule"));
        let replay = common::run_in(&dir, &["--replay", schedule.to_str().unwrap(), b]);
        assert_eq!(replay.status, 1, "{}{}", replay.stdout, replay.stderr);
        assert!(
            replay.stdout.contains("replay: reproduced the saved error"),
            "{}{}",
            replay.stdout,
            replay.stderr
        );
        // the same trace, each read from the same write
        let trace = |out: &str| -> Vec<String> {
            out.lines()
                .filter(|l| l.contains(" -> ") || l.contains(" <- "))
                .map(str::to_string)
                .collect()
        };
        assert_eq!(
            trace(&replay.stdout),
            trace(&found.stdout),
            "{name} {model}"
        );
        // (a read of another thread's store, where there are loads)
        let reads = trace(&found.stdout);
        assert!(
            !reads.iter().any(|l| l.contains(" -> "))
                || reads.iter().any(|l| l.contains("(from #")),
            "{name}: {}",
            found.stdout
        );
    }
}

/// A hang the graph engine found (a thread past the time limit between two visible
/// operations) replays to the same hang.
#[test]
fn a_graph_engine_hang_replays() {
    let scratch = Scratch::new("ra-replay-hang");
    let bin = compile(&scratch, &source("hang_and_fail.c"), "cc", &["-O2"]);
    let b = bin.to_str().unwrap();
    let quick = ["--exec-timeout", "0.3"];
    let found = common::run_in(&scratch.0, &[&["--model", "ra", b][..], &quick].concat());
    assert_eq!(found.status, 1, "{}{}", found.stdout, found.stderr);
    assert!(found.stdout.contains("ERROR (hang)"), "{}", found.stdout);
    let stem = bin.file_name().unwrap().to_string_lossy().into_owned();
    let schedule = scratch.0.join(format!("smc-run-out/{stem}.ra.schedule"));
    let args = [&["--replay", schedule.to_str().unwrap(), b][..], &quick].concat();
    let replay = common::run_in(&scratch.0, &args);
    assert_eq!(replay.status, 1, "{}{}", replay.stdout, replay.stderr);
    assert!(
        replay.stdout.contains("replay: reproduced the saved error")
            && replay.stdout.contains("ERROR (hang)"),
        "{}{}",
        replay.stdout,
        replay.stderr
    );
}

/// Compare-exchange loops (of words of 1 to 8 bytes), and nodes a thread allocates while the
/// other allocates and frees: the interleaving engine's verdicts and counts under sc, tso
/// and pso (a compare-exchange that fails only reads, also where a revisit gives a
/// successful one a write it does not expect), and under ra sc's verdict; none blocked (the
/// runtime reports what each compares with, so each source's graph is an update or a read as
/// the source's value says). Each thread's blocks come from a heap of its own under the graph
/// engine, so a graph replays with the same addresses whatever the other thread did (before,
/// "the program behaved differently when replayed").
#[test]
fn compare_exchange_loops_under_the_graph_engine() {
    for (name, defines) in [
        ("cas_increments.c", &["-DN=1"][..]),
        ("cas_increments.c", &["-DN=2"][..]),
        ("treiber_push.c", &[][..]),
        ("treiber_push.c", &["-DLOST"][..]),
        ("cas_counter.c", &[][..]),
        ("cas_sizes.c", &[][..]),
    ] {
        each_build("ra-cas", name, defines, |bin, build| {
            as_interleavings_under(bin, build, true, true, &["sc", "tso", "pso"]);
            let (sc, ra) = (check(bin, "sc", &[]), check(bin, "ra", &[]));
            assert_eq!(ra.blocked(), 0, "{build}: {}", ra.stdout);
            assert_eq!(
                (ra.verdict(), ra.error_kind()),
                (sc.verdict(), sc.error_kind()),
                "{build}: {}{}",
                ra.stdout,
                ra.stderr
            );
        });
    }
}
