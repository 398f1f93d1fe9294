//! Counterexamples a person can read, replay and debug: what each event says, the saved
//! schedule and `--replay`, `--dot`, `--keep-going`, `--gdb`.

mod common;

use std::path::Path;
use std::process::Command;

use common::{compile, run, source, Scratch};

fn racy(scratch: &Scratch) -> String {
    let bin = compile(scratch, &source("racy_counter.c"), "gcc", &["-O0", "-g"]);
    bin.to_str().unwrap().to_string()
}

/// The racy counter's counterexample names, for every event, the thread by its start
/// function, the instruction as function+offset and file:line, the global, the value, and for
/// each read the write it read from; then the failing line with its source.
#[test]
fn counterexample_names_functions_lines_and_globals() {
    let scratch = Scratch::new("cx-text");
    let bin = racy(&scratch);
    let sched = scratch.0.join("racy.schedule");
    let r = run(&["--model", "sc", "--schedule", sched.to_str().unwrap(), &bin]);
    assert_eq!(r.status, 1, "{}{}", r.stdout, r.stderr);
    // stderr is not a terminal here: no progress line
    assert!(!r.stderr.contains("executions ("), "{}", r.stderr);
    let events: Vec<&str> = r
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("counterexample"))
        .skip(1)
        .take_while(|l| !l.trim_start().starts_with("failed:"))
        .collect();
    // Each line: index, thread, what, where.
    let expect = [
        ("T0 main", "pthread_create", "main+", "racy_counter.c:15"),
        ("T0 main", "pthread_create", "main+", "racy_counter.c:16"),
        ("T1 inc", "thread-start", "", ""),
        (
            "T1 inc",
            "load counter (4 B) -> 0 (initial)",
            "inc+",
            "racy_counter.c:9",
        ),
        ("T2 inc", "thread-start", "", ""),
        (
            "T2 inc",
            "load counter (4 B) -> 0 (initial)",
            "inc+",
            "racy_counter.c:9",
        ),
        (
            "T1 inc",
            "store counter (4 B) <- 1",
            "inc+",
            "racy_counter.c:9",
        ),
        ("T1 inc", "thread-exit", "", ""),
        ("T0 main", "pthread_join(T1)", "main+", "racy_counter.c:17"),
        (
            "T2 inc",
            "store counter (4 B) <- 1",
            "inc+",
            "racy_counter.c:9",
        ),
        ("T2 inc", "thread-exit", "", ""),
        ("T0 main", "pthread_join(T2)", "main+", "racy_counter.c:18"),
        (
            "T0 main",
            "load counter (4 B) -> 1 (from #10)",
            "main+",
            "racy_counter.c:19",
        ),
    ];
    assert_eq!(events.len(), expect.len(), "{}", r.stdout);
    for (i, (line, (thread, what, func, file_line))) in events.iter().zip(expect).enumerate() {
        let rest = line
            .trim_start()
            .strip_prefix(&format!("{} ", i + 1))
            .unwrap();
        let rest = rest.trim_start();
        assert!(rest.starts_with(thread), "event {}: {line}", i + 1);
        let rest = rest[thread.len()..].trim_start();
        assert!(rest.starts_with(what), "event {}: {line}", i + 1);
        let at = rest[what.len()..].trim();
        assert!(at.starts_with(func), "event {}: {line}", i + 1);
        assert!(
            at.ends_with(&format!("({file_line})")) || file_line.is_empty(),
            "event {}: {line}",
            i + 1
        );
    }
    assert!(
        r.stdout.contains("  failed: T0 main at main+"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(">   19 |     assert(counter == 2);"),
        "source excerpt: {}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains(&format!("schedule saved to {}", sched.display())),
        "{}",
        r.stdout
    );
    assert!(sched.is_file());
}

/// Replaying the saved schedule reproduces the same error along the same events, 10 times out
/// of 10, under each model, and shows the program's own output.
#[test]
fn replay_reproduces_the_error_every_time() {
    let scratch = Scratch::new("cx-replay");
    let bin = racy(&scratch);
    let mp = compile(&scratch, &source("mp.c"), "gcc", &["-O2", "-g"]);
    for (prog, model) in [
        (bin.as_str(), "sc"),
        (bin.as_str(), "tso"),
        (mp.to_str().unwrap(), "pso"),
    ] {
        let sched = scratch.0.join(format!("{model}.schedule"));
        let sched = sched.to_str().unwrap();
        let first = run(&["--json", "--model", model, "--schedule", sched, prog]);
        assert_eq!(first.status, 1, "{}{}", first.stdout, first.stderr);
        let json = first.json.as_ref().unwrap();
        assert_eq!(json["error"]["schedule_file"], sched);
        let trace = json["error"]["trace"].clone();
        for i in 0..10 {
            let again = run(&["--json", "--replay", sched, prog]);
            assert_eq!(
                again.status, 1,
                "replay {i}: {}{}",
                again.stdout, again.stderr
            );
            let j = again.json.as_ref().unwrap();
            assert_eq!(j["model"], model);
            assert_eq!(
                j["error"]["message"], json["error"]["message"],
                "replay {i}"
            );
            assert_eq!(j["error"]["trace"], trace, "replay {i}: the same events");
            assert_eq!(j["executions"], 1);
            // the program's stderr is let through: its own assertion message
            assert!(
                again.stderr.contains("Assertion"),
                "replay {i}: {}",
                again.stderr
            );
        }
        let text = run(&["--replay", sched, prog]);
        assert!(
            text.stdout.contains("replay: reproduced the saved error"),
            "{}",
            text.stdout
        );
    }
    let bad = scratch.0.join("bad.schedule");
    std::fs::write(&bad, "{\"smc_schedule\": 1}").unwrap();
    let r = run(&["--replay", bad.to_str().unwrap(), &bin]);
    assert_eq!(r.status, 2);
    assert!(r.stderr.contains("malformed schedule"), "{}", r.stderr);
}

/// --dot writes the failing execution as a graph that graphviz renders.
#[test]
fn dot_output_renders() {
    let scratch = Scratch::new("cx-dot");
    let bin = racy(&scratch);
    let dot = scratch.0.join("cx.dot");
    let r = run(&["--model", "tso", "--dot", dot.to_str().unwrap(), &bin]);
    assert_eq!(r.status, 1, "{}", r.stderr);
    let text = std::fs::read_to_string(&dot).unwrap();
    assert!(text.starts_with("digraph counterexample {"), "{text}");
    assert!(text.contains("label=\"rf\""), "{text}");
    assert!(text.contains("label=\"co\""), "{text}");
    assert!(
        text.contains("label=\"buffer\""),
        "tso stores reach memory through updates: {text}"
    );
    assert!(text.contains("T1 inc"), "{text}");
    let svg = scratch.0.join("cx.svg");
    let out = Command::new("dot")
        .args(["-Tsvg", "-o"])
        .arg(&svg)
        .arg(&dot)
        .output()
        .expect("graphviz's `dot` is needed (.ci/setup installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
}

/// --keep-going reports each distinct error once, with its count and its own counterexample,
/// and saves a schedule for each.
#[test]
fn keep_going_reports_each_distinct_error() {
    let scratch = Scratch::new("cx-keep");
    let src = scratch.0.join("two_errors.c");
    std::fs::write(
        &src,
        "#include <assert.h>\n#include <pthread.h>\n#include <stdlib.h>\n\
         volatile int x, y;\n\
         static void *a(void *p) { x = 1; y = 1; return p; }\n\
         static void *b(void *p) { int r1 = y, r2 = x;\n\
         \x20 if (r1 == 1 && r2 == 1) abort();\n\
         \x20 assert(!(r1 == 0 && r2 == 1));\n  return p; }\n\
         int main(void) { pthread_t t, u; pthread_create(&t, 0, a, 0); pthread_create(&u, 0, b, 0);\n\
         \x20 pthread_join(t, 0); pthread_join(u, 0); return 0; }\n",
    )
    .unwrap();
    let bin = compile(&scratch, &src, "gcc", &["-O1", "-g"]);
    let sched = scratch.0.join("k.schedule");
    let r = run(&[
        "--json",
        "--keep-going",
        "--model",
        "sc",
        "--schedule",
        sched.to_str().unwrap(),
        bin.to_str().unwrap(),
    ]);
    assert_eq!(r.status, 1, "{}{}", r.stdout, r.stderr);
    let j = r.json.as_ref().unwrap();
    let errors = j["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 2, "{j}");
    let kinds: Vec<&str> = errors.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert!(
        kinds.contains(&"crash") && kinds.contains(&"assertion"),
        "{kinds:?}"
    );
    // SC: x=1,y=1 seen as (1,1) once, (0,1) once: each distinct error in one execution here
    for e in errors {
        assert_eq!(e["count"], 1, "{e}");
        assert!(!e["trace"].as_array().unwrap().is_empty());
        let f = e["schedule_file"].as_str().unwrap();
        assert!(Path::new(f).is_file(), "{f}");
    }
    let text = run(&[
        "--keep-going",
        "--model",
        "sc",
        "--schedule",
        sched.to_str().unwrap(),
        bin.to_str().unwrap(),
    ]);
    assert_eq!(
        text.stdout.matches("counterexample (").count(),
        2,
        "{}",
        text.stdout
    );
    assert!(
        text.stdout
            .contains("error: crash: abort() called (1 executions)"),
        "{}",
        text.stdout
    );
}

/// --gdb stops the replayed program at its failing event with a debugger attached: gdb's
/// backtrace shows the failing assertion in main.
#[test]
fn gdb_attaches_at_the_failing_event() {
    let scratch = Scratch::new("cx-gdb");
    let bin = racy(&scratch);
    let sched = scratch.0.join("g.schedule");
    let r = run(&["--model", "sc", "--schedule", sched.to_str().unwrap(), &bin]);
    assert_eq!(r.status, 1);
    // gdb in batch mode, printing the backtrace where it stops.
    let out = scratch.0.join("gdb.out");
    let wrapper = scratch.0.join("gdb-batch");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nexec gdb -batch -nx \"$@\" -ex bt > {} 2>&1\n",
            out.display()
        ),
    )
    .unwrap();
    Command::new("chmod")
        .arg("+x")
        .arg(&wrapper)
        .status()
        .unwrap();
    let st = Command::new(common::checker())
        .args(["--replay", sched.to_str().unwrap(), &bin, "--gdb"])
        .env("SMC_RUN_GDB", &wrapper)
        .current_dir(&scratch.0)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&st.stderr);
    assert!(
        stderr.contains("gdb -q "),
        "prints the gdb command: {stderr}"
    );
    let bt = std::fs::read_to_string(&out).expect("gdb ran");
    assert!(bt.contains("SIGSTOP"), "{bt}");
    assert!(bt.contains("__assert_fail"), "{bt}");
    assert!(
        bt.contains("main () at") && bt.contains("racy_counter.c:19"),
        "{bt}"
    );
}

/// Heap data is named by its block, listed with the line that allocated it.
#[test]
fn heap_blocks_are_named_by_allocation_site() {
    let scratch = Scratch::new("cx-heap");
    let bin = compile(&scratch, &source("heap_account.c"), "gcc", &["-O1", "-g"]);
    let r = run(&["--json", "--model", "sc", bin.to_str().unwrap()]);
    assert_eq!(r.status, 1, "{}{}", r.stdout, r.stderr);
    let j = r.json.as_ref().unwrap();
    let blocks = j["error"]["heap_blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), 1, "{j}");
    assert_eq!(blocks[0]["name"], "heap#1");
    assert_eq!(blocks[0]["size"], 8);
    let at = blocks[0]["allocated_at"].as_str().unwrap();
    assert!(
        at.starts_with("main+") && at.ends_with("(heap_account.c:16)"),
        "{at}"
    );
    let trace = j["error"]["trace"].as_array().unwrap();
    let last = trace.last().unwrap();
    assert_eq!(last["symbol"], "heap#1+4", "{last}");
    assert_eq!(last["read"], 90);
    let text = run(&["--model", "sc", bin.to_str().unwrap()]);
    assert!(
        text.stdout
            .contains("  heap#1: heap block #1 (8 B) allocated at main+"),
        "{}",
        text.stdout
    );
}

/// The replay command printed with a counterexample passes the program the arguments the
/// check passed it, quoted for the shell where they need it: run as printed, it reproduces the
/// error (without them the program took another path).
#[test]
fn the_replay_command_names_the_programs_arguments() {
    let scratch = Scratch::new("cx-replay-args");
    let bin = compile(&scratch, &source("argv_race.c"), "gcc", &["-O2"]);
    let b = bin.to_str().unwrap();
    let sched = scratch.0.join("argv.schedule");
    let s = sched.to_str().unwrap();
    let r = run(&[
        "--model",
        "sc",
        "--schedule",
        s,
        b,
        "--",
        "racy",
        "two words",
    ]);
    assert_eq!(r.status, 1, "{}{}", r.stdout, r.stderr);
    let printed = format!("replay it with: smc-run --replay {s} {b} -- racy 'two words'\n");
    assert!(r.stdout.contains(&printed), "{}", r.stdout);
    let again = run(&["--replay", s, b, "--", "racy", "two words"]);
    assert!(
        again.stdout.contains("replay: reproduced the saved error"),
        "{}{}",
        again.stdout,
        again.stderr
    );
    let plain = run(&["--model", "sc", b]);
    assert_eq!(plain.status, 0, "{}{}", plain.stdout, plain.stderr);
}

/// A replay runs the program in a process of its own, without the engine the check's workers
/// carried: its environment strings must be as long as theirs, and its preloaded runtime named
/// alike, or its arguments (above the environment on the initial stack) and its thread-locals
/// (placed after the loader's records of the preloaded objects) lie elsewhere. A program whose
/// events depend on where those lie (a loop counted from their addresses) did not replay, under
/// either engine: "behaved differently", or the error not reproduced.
#[test]
fn a_replay_sees_the_arguments_and_thread_locals_where_the_check_saw_them() {
    let scratch = Scratch::new("cx-replay-layout");
    let bin = compile(&scratch, &source("layout_events.c"), "gcc", &["-O2"]);
    let b = bin.to_str().unwrap();
    for (model, arg) in [("sc", "x"), ("tso", "xyz"), ("ra", "x"), ("ra", "xy")] {
        let sched = scratch.0.join(format!("{model}.{arg}.schedule"));
        let s = sched.to_str().unwrap();
        let r = run(&["-j", "1", "--model", model, "--schedule", s, b, "--", arg]);
        assert_eq!(r.status, 1, "{model} {arg}\n{}{}", r.stdout, r.stderr);
        let again = run(&["--replay", s, b, "--", arg]);
        assert!(
            again.stdout.contains("replay: reproduced the saved error"),
            "{model} {arg}\n{}{}",
            again.stdout,
            again.stderr
        );
    }
}

/// By default each error's schedule goes to smc-run-out/NAME.MODEL.schedule in the current
/// directory: a check under another model keeps its own, and a replay against another build
/// of the program says so in one line instead of diverging.
#[test]
fn schedules_are_kept_per_model_and_name_their_build() {
    let scratch = Scratch::new("cx-schedules");
    let bin = racy(&scratch);
    let dir = scratch.0.join("cwd");
    std::fs::create_dir_all(&dir).unwrap();
    for model in ["sc", "tso"] {
        let r = common::run_in(&dir, &["--model", model, &bin]);
        assert_eq!(r.status, 1, "{}{}", r.stdout, r.stderr);
        let want = format!("smc-run-out/racy_counter-gcc-O0-g.{model}.schedule");
        assert!(
            r.stdout
                .contains(&format!("schedule saved to {want}; replay it with")),
            "{}",
            r.stdout
        );
    }
    let sc = dir.join("smc-run-out/racy_counter-gcc-O0-g.sc.schedule");
    let tso = dir.join("smc-run-out/racy_counter-gcc-O0-g.tso.schedule");
    let sc_text = std::fs::read_to_string(&sc).unwrap();
    assert!(sc_text.contains("\"model\":\"sc\""), "{sc_text}");
    assert!(sc_text.contains("\"binary\":\"build-id:"), "{sc_text}");
    assert!(std::fs::read_to_string(&tso)
        .unwrap()
        .contains("\"model\":\"tso\""));
    let again = common::run_in(&dir, &["--replay", sc.to_str().unwrap(), &bin]);
    assert!(
        again.stdout.contains("replay: reproduced the saved error"),
        "{}",
        again.stdout
    );
    // Another build of the same source (another optimisation level).
    let other = compile(&scratch, &source("racy_counter.c"), "gcc", &["-O2", "-g"]);
    let r = common::run_in(
        &dir,
        &["--replay", sc.to_str().unwrap(), other.to_str().unwrap()],
    );
    assert_eq!(r.status, 2, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("the schedule was saved for another build of the program"),
        "{}",
        r.stderr
    );
}

/// A .c PROGRAM is compiled into a new directory each time: its schedule names the source, so
/// that a replay of the same file is accepted.
#[test]
fn a_c_programs_schedule_replays_after_recompiling() {
    let scratch = Scratch::new("cx-c-replay");
    let src = source("racy_counter.c");
    let sched = scratch.0.join("c.schedule");
    let (s, p) = (sched.to_str().unwrap(), src.to_str().unwrap());
    let r = run(&["--model", "sc", "--schedule", s, p]);
    assert_eq!(r.status, 1, "{}{}", r.stdout, r.stderr);
    let again = run(&["--replay", s, p]);
    assert!(
        again.stdout.contains("replay: reproduced the saved error"),
        "{}{}",
        again.stdout,
        again.stderr
    );
}

/// Without -g there is no file:line, and the check says once why.
#[test]
fn a_binary_without_debug_information_gets_a_note() {
    let scratch = Scratch::new("cx-nodebug");
    let src = source("racy_counter.c");
    let out = scratch.0.join("racy-nodebug");
    let status = Command::new("gcc")
        .args(["-O2", "-pthread"])
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let r = run(&["--model", "sc", out.to_str().unwrap()]);
    assert_eq!(r.status, 1, "{}{}", r.stdout, r.stderr);
    let note = "has no debug information; build it with -g to see file:line";
    assert_eq!(r.stdout.matches(note).count(), 1, "{}", r.stdout);
    let with_g = run(&["--model", "sc", &racy(&scratch)]);
    assert!(!with_g.stdout.contains(note), "{}", with_g.stdout);
}

/// Only the executable is instrumented: a program that calls its own shared library (here a
/// lost update inside it) is told that the library's accesses are not explored; one that
/// needs only the C library is not.
#[test]
fn a_shared_library_the_check_does_not_see_gets_a_note() {
    let scratch = Scratch::new("cx-unseen-library");
    let lib_src = scratch.0.join("libbump.c");
    std::fs::write(
        &lib_src,
        "void bump(int *p) { int v = *(volatile int *)p; *(volatile int *)p = v + 1; }\n",
    )
    .unwrap();
    let main_src = scratch.0.join("uses_bump.c");
    std::fs::write(
        &main_src,
        "#include <pthread.h>\nvoid bump(int *p);\nint counter;\n\
         static void *w(void *a) { bump(&counter); return a; }\n\
         int main(void) { pthread_t t; pthread_create(&t, 0, w, 0); bump(&counter);\n\
         pthread_join(t, 0); return 0; }\n",
    )
    .unwrap();
    let lib = scratch.0.join("libbump.so");
    let built = Command::new("gcc")
        .args(["-O2", "-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(&lib_src)
        .status()
        .unwrap();
    assert!(built.success());
    let bin = scratch.0.join("uses_bump");
    let built = Command::new("gcc")
        .args(["-O2", "-g", "-pthread", "-o"])
        .arg(&bin)
        .arg(&main_src)
        .arg(format!("-L{}", scratch.0.display()))
        .args(["-lbump", "-Wl,-rpath,$ORIGIN"])
        .status()
        .unwrap();
    assert!(built.success());
    let note = "only the executable's code is checked: what libbump.so does to shared memory";
    let r = run(&["--model", "sc", bin.to_str().unwrap()]);
    assert_eq!(
        r.stdout.matches(note).count(),
        1,
        "{}{}",
        r.stdout,
        r.stderr
    );
    let plain = run(&["--model", "sc", &racy(&scratch)]);
    assert!(
        !plain.stdout.contains("only the executable's code"),
        "{}",
        plain.stdout
    );
}
