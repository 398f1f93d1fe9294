//! Executions run by one worker process, which is reset from a snapshot taken at main between
//! them and runs the program's threads as coroutines ("executor": "coroutines"), with the
//! engine inside that worker ("engine": "worker") or in the checker (`SMC_NO_WORKER_ENGINE=1`),
//! against a process per execution (`SMC_NO_COROUTINES=1`, "executor": "fork"): what one
//! execution does must not leak into the next, each thread must keep what is its own, and all
//! three must give the same results.

mod common;

use std::path::Path;

use common::{builds, compile, run_env, source, Run, Scratch};

/// How a check runs its executions.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    /// The worker process runs the whole exploration, the engine inside it.
    Worker,
    /// The worker runs the executions, the checker's engine decides each step.
    Checker,
    /// A process per execution.
    Fork,
}

use Mode::{Checker, Fork, Worker};

const MODES: [Mode; 3] = [Worker, Checker, Fork];

impl Mode {
    fn executor(self) -> &'static str {
        if self == Fork {
            "fork"
        } else {
            "coroutines"
        }
    }

    fn engine(self) -> &'static str {
        if self == Worker {
            "worker"
        } else {
            "checker"
        }
    }
}

/// Check `bin` in `mode` (the engine runs in the worker only on one job: `-j 1` is added).
fn check_with(scratch: &Scratch, bin: &Path, model: &str, mode: Mode, extra: &[&str]) -> Run {
    let mut args = vec!["--json", "--model", model];
    if mode == Worker && !extra.contains(&"-j") {
        args.extend(["-j", "1"]);
    }
    args.extend_from_slice(extra);
    args.push(bin.to_str().unwrap());
    // the worker's descriptor watch from the second execution on, not the 257th
    let watch = ("SMC_FDWATCH_AFTER", Path::new("1"));
    let env: &[(&str, &Path)] = match mode {
        Worker => &[watch],
        Checker => &[("SMC_NO_WORKER_ENGINE", Path::new("1")), watch],
        Fork => &[("SMC_NO_COROUTINES", Path::new("1"))],
    };
    run_env(&scratch.0, &args, env)
}

fn field<'a>(r: &'a Run, name: &str) -> &'a serde_json::Value {
    &r.json
        .as_ref()
        .unwrap_or_else(|| panic!("no JSON:\n{}{}", r.stdout, r.stderr))[name]
}

/// Check `name` in every mode: each must report itself, and all must give `verdict` with
/// `executions` executions (and equal counts of everything else).
fn both_executors(name: &str, model: &str, extra: &[&str], verdict: &str, executions: u64) {
    let scratch = Scratch::new(&format!("reset-{name}"));
    for (cc, opt) in builds() {
        let bin = compile(&scratch, &source(name), cc, &[opt]);
        let runs = MODES.map(|m| check_with(&scratch, &bin, model, m, extra));
        for (r, mode) in runs.iter().zip(MODES) {
            let ctx = format!(
                "{name} ({cc} {opt}) under {model}, {mode:?}: {}\n{}{}",
                r.command, r.stdout, r.stderr
            );
            assert_eq!(field(r, "executor"), mode.executor(), "{ctx}");
            assert_eq!(field(r, "engine"), mode.engine(), "{ctx}");
            // the exploration's memory is the worker's when the engine runs there
            let worker_kib = field(r, "worker_peak_rss_kib").as_u64();
            assert_eq!(worker_kib.is_some_and(|k| k > 0), mode == Worker, "{ctx}");
            assert_eq!(r.verdict(), verdict, "{ctx}");
            assert_eq!(r.executions(), executions, "{ctx}");
            for f in ["blocked", "bounded", "events"] {
                assert_eq!(field(r, f), field(&runs[2], f), "{f}: {ctx}");
            }
        }
    }
}

#[test]
fn each_thread_keeps_its_own_state() {
    // __thread, errno, pthread_self and thread-specific data, checked across thread switches;
    // 22 executions: the orders of the conflicting accesses to `shared` (main's store, each
    // worker's store and then load)
    both_executors("thread_state.c", "sc", &[], "ok", 22);
}

#[test]
fn memory_an_execution_maps_is_unmapped_after_it() {
    // a page mapped at one fixed address (MAP_FIXED_NOREPLACE) in each execution
    both_executors("mmap_each.c", "sc", &[], "ok", 2);
}

#[test]
fn the_working_directory_is_changed_back() {
    // each execution checks it starts where cwd_marker is, then changes to /
    let scratch = Scratch::new("reset-chdir");
    std::fs::write(scratch.0.join("cwd_marker"), "").unwrap();
    let bin = compile(&scratch, &source("chdir_each.c"), "gcc", &["-O2"]);
    for mode in MODES {
        let (r, ctx, _) = check_logging(&scratch, &bin, mode, "unused.txt", &[]);
        assert_eq!((r.verdict(), r.executions()), ("ok", 2), "{ctx}");
    }
}

#[test]
fn signal_dispositions_and_alarms_are_put_back() {
    // a SIGUSR1 handler installed and an alarm set in each execution
    both_executors("signals_each.c", "sc", &[], "ok", 2);
}

#[test]
fn each_thread_has_its_own_thread_id() {
    // gettid() and syscall(SYS_gettid): distinct per thread, main's the process id
    both_executors("thread_ids.c", "sc", &[], "ok", 2);
}

#[test]
fn an_execution_leaves_nothing_behind() {
    // globals, heap, break, argv, environment and descriptors as at main in each of the
    // 20 executions (the orders of two threads' three stores each)
    both_executors("process_state.c", "sc", &[], "ok", 20);
}

#[test]
fn a_descriptor_opened_by_a_raw_system_call_is_closed() {
    // the worker learns of descriptors from the system calls it stops (fdwatch.h), not from
    // libc: each of the six executions dups to descriptor 3
    both_executors("raw_descriptor.c", "sc", &[], "ok", 6);
}

#[test]
fn exit_handlers_registered_in_an_execution_run() {
    // the handler aborts in one of the two executions (when the second store came last)
    both_executors("exit_handler.c", "sc", &["--keep-going"], "error", 2);
    let scratch = Scratch::new("reset-exit-kind");
    let bin = compile(&scratch, &source("exit_handler.c"), "gcc", &["-O2"]);
    let r = check_with(&scratch, &bin, "sc", Worker, &[]);
    assert_eq!(r.error_kind(), Some("crash"), "{}", r.stdout);
}

#[test]
fn crashes_and_failed_assertions_do_not_stop_the_worker_for_good() {
    // a crash or a failed assertion ends its execution only; the next one starts from the
    // snapshot as any other
    both_executors(
        "null_publication.c",
        "sc",
        &["--keep-going"],
        "error",
        expected_count("null_publication.c", "sc", &["--keep-going"]),
    );
    both_executors(
        "racy_counter.c",
        "tso",
        &["--keep-going"],
        "error",
        expected_count("racy_counter.c", "tso", &["--keep-going"]),
    );
}

/// Check `bin` under sc on one worker in `mode`, with `log` (in the scratch directory, which
/// the program's executions write to) removed first: the run, a description of it, and the log.
fn check_logging(
    scratch: &Scratch,
    bin: &Path,
    mode: Mode,
    log: &str,
    extra: &[&str],
) -> (Run, String, String) {
    let log = scratch.0.join(log);
    let _ = std::fs::remove_file(&log);
    let mut args = vec!["-j", "1"];
    args.extend_from_slice(extra);
    let r = check_with(scratch, bin, "sc", mode, &args);
    let ctx = format!("{}\n{}{}", r.command, r.stdout, r.stderr);
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    (r, ctx, logged)
}

/// How many distinct lines `logged` has.
fn distinct_lines(logged: &str) -> usize {
    logged
        .lines()
        .collect::<std::collections::BTreeSet<_>>()
        .len()
}

/// The report shows what the failing execution printed, to stdout and stderr, also when the
/// worker watches the output instead of asking the capture file's offset after each execution
/// (late_output.c prints only in its second execution, after the watch went on).
#[test]
fn output_printed_after_the_watch_went_on_is_reported() {
    let scratch = Scratch::new("reset-late-output");
    let bin = compile(&scratch, &source("late_output.c"), "gcc", &["-O2"]);
    for model in ["sc", "tso"] {
        for mode in MODES {
            let r = check_with(&scratch, &bin, model, mode, &[]);
            let ctx = format!("{mode:?} {model}: {}\n{}{}", r.command, r.stdout, r.stderr);
            assert_eq!((r.verdict(), r.executions()), ("error", 2), "{ctx}");
            let output = &field(&r, "error")["output"];
            let tail = output["tail"].as_str().unwrap_or_default();
            assert!(tail.starts_with("main saw the setter's store\n"), "{ctx}");
            assert!(tail.contains("Assertion `!seen' failed."), "{ctx}");
            assert_eq!(output["bytes"].as_u64(), Some(tail.len() as u64), "{ctx}");
        }
    }
}

#[test]
fn a_crash_ends_its_execution_not_the_worker() {
    // 4 executions (main's two reads each before or after its setter's store), 3 of them crash
    // at the end of main; each logs its process id. The worker outlives the crashes: one
    // process id (with the engine inside it, the checker replays the one distinct error in the
    // same worker afterwards: a fifth line). One process per execution: four.
    let scratch = Scratch::new("reset-crash-pids");
    let bin = compile(&scratch, &source("crash_pids.c"), "gcc", &["-O2"]);
    for (mode, lines, processes) in [(Worker, 5, 1), (Checker, 4, 1), (Fork, 4, 4)] {
        let (r, ctx, logged) = check_logging(&scratch, &bin, mode, "pids.txt", &["--keep-going"]);
        assert_eq!((r.verdict(), r.executions()), ("error", 4), "{ctx}");
        assert_eq!(field(&r, "engine"), mode.engine(), "{ctx}");
        assert_eq!(field(&r, "errors")[0]["count"], 3, "{ctx}");
        assert_eq!(logged.lines().count(), lines, "{ctx}");
        assert_eq!(distinct_lines(&logged), processes, "{mode:?}: {logged}");
    }
}

#[test]
fn exit_handlers_of_an_execution_run_in_the_worker() {
    // a C++ function-local static first used in each execution registers its destructor each
    // time; the destructor logs the process id at each exit: 2 lines, from one worker process
    // (a process of its own per execution before: as slow as fork), or from 2 processes
    let scratch = Scratch::new("reset-local-static");
    let bin = compile(&scratch, &source("local_static.cpp"), "g++", &["-O2"]);
    for (mode, processes) in [(Worker, 1), (Checker, 1), (Fork, 2)] {
        let (r, ctx, logged) = check_logging(&scratch, &bin, mode, "exit_pids.txt", &[]);
        assert_eq!((r.verdict(), r.executions()), ("ok", 2), "{ctx}");
        assert_eq!(field(&r, "engine"), mode.engine(), "{ctx}");
        assert_eq!(logged.lines().count(), 2, "{ctx}");
        assert_eq!(distinct_lines(&logged), processes, "{mode:?}: {logged}");
    }
}

#[test]
fn destructors_run_when_a_thread_ends() {
    // thread-specific data (C) and thread_local objects (C++, main's at exit too), each
    // destructor logging its thread's number: the same lines with both executors
    for (name, cc, expected) in [
        ("key_dtors.c", "gcc", "key 1\nkey 1\nkey 2\nkey 2\n"),
        (
            "thread_local_dtors.cpp",
            "g++",
            "tls 1\ntls 1\ntls 2\ntls 2\ntls 3\ntls 3\n",
        ),
    ] {
        let scratch = Scratch::new(&format!("reset-{name}"));
        let bin = compile(&scratch, &source(name), cc, &["-O2"]);
        for mode in MODES {
            let (r, ctx, logged) = check_logging(&scratch, &bin, mode, "dtors.txt", &[]);
            assert_eq!((r.verdict(), r.executions()), ("ok", 2), "{ctx}");
            let mut lines: Vec<&str> = logged.lines().collect();
            lines.sort_unstable();
            let sorted: String = lines.iter().map(|l| format!("{l}\n")).collect();
            assert_eq!(sorted, expected, "{name}, {mode:?}: {ctx}");
        }
    }
}

#[test]
fn more_exit_handlers_than_the_worker_keeps_all_run_in_order() {
    // 300 handlers per execution: 256 kept by the worker, the rest given to libc behind one
    // that runs the kept ones; each execution logs whether all ran, last registered first. An
    // execution that must end its worker ends the engine inside it too, before the handlers
    // run: the checker explores by itself.
    let scratch = Scratch::new("reset-many-handlers");
    let bin = compile(&scratch, &source("many_exit_handlers.c"), "gcc", &["-O2"]);
    for mode in MODES {
        let (r, ctx, logged) = check_logging(&scratch, &bin, mode, "handlers.txt", &[]);
        assert_eq!((r.verdict(), r.executions()), ("ok", 2), "{ctx}");
        assert_eq!(field(&r, "engine"), "checker", "{ctx}");
        assert_eq!(logged, "in order\nin order\n", "{mode:?}: {ctx}");
    }
}

#[test]
fn an_execution_with_exit_handlers_that_crashes_runs_none() {
    // 2 executions, each registers a handler that logs a line; the one that crashes must not
    // run it (it ends in a process of its own, killed by the signal)
    let scratch = Scratch::new("reset-exit-crash");
    let bin = compile(&scratch, &source("exit_handler_crash.c"), "gcc", &["-O2"]);
    for mode in MODES {
        let (r, ctx, logged) =
            check_logging(&scratch, &bin, mode, "handler.txt", &["--keep-going"]);
        assert_eq!((r.verdict(), r.executions()), ("error", 2), "{ctx}");
        assert_eq!(field(&r, "engine"), mode.engine(), "{ctx}");
        assert_eq!(r.error_kind(), Some("crash"), "{ctx}");
        assert_eq!(logged, "ran\n", "{mode:?}");
    }
}

#[test]
fn a_library_loaded_in_an_execution_is_loaded_afresh_in_the_next() {
    // the loader's state is not put back: a worker that ran dlopen ends after that execution
    // (the engine inside it too: the checker explores by itself)
    let scratch = Scratch::new("reset-dlopen");
    let lib = compile(
        &scratch,
        &source("plugin.c"),
        "gcc",
        &["-O2", "-shared", "-fPIC"],
    );
    std::fs::rename(lib, scratch.0.join("plugin.so")).unwrap();
    let bin = compile(&scratch, &source("dlopen_each.c"), "gcc", &["-O2", "-ldl"]);
    for mode in MODES {
        let r = check_with(&scratch, &bin, "sc", mode, &["-j", "1"]);
        let ctx = format!("{}\n{}{}", r.command, r.stdout, r.stderr);
        assert_eq!((r.verdict(), r.executions()), ("ok", 2), "{ctx}");
        assert_eq!(field(&r, "engine"), "checker", "{ctx}");
    }
}

/// The executions of a program under the fork executor, which the coroutine one must equal.
fn expected_count(name: &str, model: &str, extra: &[&str]) -> u64 {
    let scratch = Scratch::new(&format!("reset-count-{name}"));
    let bin = compile(&scratch, &source(name), "gcc", &["-O2"]);
    check_with(&scratch, &bin, model, Fork, extra).executions()
}

#[test]
fn both_executors_agree_on_every_test_program() {
    let programs = [
        "sb.c",
        "mp.c",
        "cas_counter.c",
        "mutex_counter.c",
        "condvar.c",
        "condvar_lost_signal.c",
        "sync_objects.c",
        "yield_spin.c",
        "lock_order_deadlock.c",
        "heap_account.c",
        "examples/peterson.c",
        "examples/dekker.c",
        "examples/szymanski.c",
        "examples/stack_unsafe.c",
        "examples/indexer.c",
        "examples/bank.c",
        "examples/lamport.c",
        "examples/pgsql_latch.c",
        "examples/parker.c",
        "examples/dcl_singleton.c",
        "examples/stack_safe.c",
        "examples/ticket_lock.c",
    ];
    let scratch = Scratch::new("reset-agree");
    for (name, flags) in programs
        .iter()
        .map(|p| (*p, &[][..]))
        .chain([("examples/lamport.c", &["-DFENCES"][..])])
    {
        let mut cflags = vec!["-O2"];
        cflags.extend_from_slice(flags);
        let bin = compile(&scratch, &source(name), "gcc", &cflags);
        for model in ["sc", "tso", "pso"] {
            // one worker each: blocked executions depend on how the tree is split
            let extra = ["--keep-going", "-j", "1"];
            let runs = MODES.map(|m| check_with(&scratch, &bin, model, m, &extra));
            let [worker, co, fork] = &runs;
            let ctx = format!(
                "{name} under {model}:\n{}\n{}\nchecker:\n{}\n{}\nfork:\n{}\n{}",
                worker.stdout, worker.stderr, co.stdout, co.stderr, fork.stdout, fork.stderr
            );
            assert_eq!(field(worker, "engine"), "worker", "{ctx}");
            assert_eq!(field(co, "executor"), "coroutines", "{ctx}");
            for f in ["verdict", "executions", "blocked", "bounded", "events"] {
                assert_eq!(field(worker, f), field(fork, f), "{f}: {ctx}");
                assert_eq!(field(co, f), field(fork, f), "{f}: {ctx}");
            }
            // in the order found, which varies with two workers
            let kinds = |r: &Run| -> Vec<(String, u64)> {
                let mut v: Vec<_> = field(r, "errors")
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .map(|e| (e["message"].to_string(), e["count"].as_u64().unwrap()))
                            .collect()
                    })
                    .unwrap_or_default();
                v.sort();
                v
            };
            assert_eq!(kinds(worker), kinds(fork), "errors: {ctx}");
            assert_eq!(kinds(co), kinds(fork), "errors: {ctx}");
        }
    }
}

#[test]
fn a_hang_ends_its_execution_with_the_engine_in_the_worker_too() {
    // a thread sleeps in the kernel: the checker's engine kills the worker after the time
    // limit; with the engine inside the worker, the checker's signal makes the worker end that
    // execution as a hang itself, and its engine reports it
    let scratch = Scratch::new("reset-hang");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/robustness/sleeps_forever.c");
    let bin = compile(&scratch, &src, "gcc", &["-O1"]);
    for mode in MODES {
        let extra = ["--exec-timeout", "0.3", "--keep-going"];
        let r = check_with(&scratch, &bin, "sc", mode, &extra);
        let ctx = format!("{mode:?}: {}\n{}{}", r.command, r.stdout, r.stderr);
        assert_eq!((r.verdict(), r.executions()), ("error", 1), "{ctx}");
        assert_eq!(r.error_kind(), Some("hang"), "{ctx}");
        assert_eq!(field(&r, "engine"), mode.engine(), "{ctx}");
    }
}
