//! ppc64le programs, cross-compiled at test time with Debian's powerpc64le-linux-gnu-gcc and
//! checked under qemu-user (.ci/setup installs both): the verdicts the same programs get on
//! x86-64, the same execution counts where the visible accesses are the same, counterexamples
//! with file:line that replay, and bad ppc64le input named.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{check, compile, example, outcomes, random_program, run, run_in, source, Scratch};

const CROSS_CC: &str = "powerpc64le-linux-gnu-gcc";

/// `src` cross-compiled into `scratch` with `flags` (and -g -pthread).
fn cross(scratch: &Scratch, src: &Path, flags: &[&str]) -> PathBuf {
    compile(scratch, src, CROSS_CC, flags)
}

/// Test program `file` cross-compiled at -O2 with `flags`.
fn cross_o2(scratch: &Scratch, file: &str, flags: &[&str]) -> PathBuf {
    let mut all = vec!["-O2"];
    all.extend_from_slice(flags);
    cross(scratch, &source(file), &all)
}

/// Test programs whose visible accesses are the same loads and stores on both instruction
/// sets at -O0 (no read-modify-write: POWER's is a load-reserve and a store-conditional, two
/// events where x86-64 has one locked instruction).
const SAME_ACCESSES: &[&str] = &[
    "sb.c",
    "mp.c",
    "tso/two_plus_two_w.c",
    "tso/iriw.c",
    "tso/forwarding.c",
    "racy_counter.c",
    "null_publication.c",
    "condvar.c",
    "condvar_lost_signal.c",
    "lock_order_deadlock.c",
    "exit_handler.c",
    "exit_without_join.c",
    "heap_account.c",
    "many_threads.c",
    "owner_errors.c",
];

/// Programs with atomics, whose counts differ (larx/stcx. loops) but whose verdicts must not.
const SAME_VERDICTS: &[&str] = &["cas_counter.c", "tso/cas_spinlock.c", "futex_mutex.c"];

fn summary(r: &common::Run) -> (String, Vec<String>) {
    let kinds = if r.error_kinds().is_empty() {
        r.error_kind().into_iter().map(str::to_string).collect()
    } else {
        r.error_kinds().into_iter().map(str::to_string).collect()
    };
    (r.verdict().to_string(), kinds)
}

#[test]
fn test_programs_give_the_verdicts_and_counts_of_x86_64() {
    let scratch = Scratch::new("ppc64le-programs");
    for opt in ["-O0", "-O2"] {
        for name in SAME_ACCESSES.iter().chain(SAME_VERDICTS) {
            let x86 = compile(&scratch, &source(name), "gcc", &[opt]);
            let ppc = cross(&scratch, &source(name), &[opt]);
            for model in ["sc", "tso", "pso"] {
                let want = check(&x86, model, &[]);
                let got = check(&ppc, model, &[]);
                let ctx = format!(
                    "{name} {opt} under {model}:\nx86-64: {}{}\nppc64le: {}{}",
                    want.stdout, want.stderr, got.stdout, got.stderr
                );
                assert_eq!(summary(&got), summary(&want), "{ctx}");
                assert_eq!(
                    got.json.as_ref().unwrap()["arch"].as_str(),
                    Some("ppc64le"),
                    "{ctx}"
                );
                let same_events = opt == "-O0" && SAME_ACCESSES.contains(name);
                if same_events && want.verdict() == "ok" {
                    assert_eq!(
                        (got.executions(), got.blocked()),
                        (want.executions(), want.blocked()),
                        "{ctx}"
                    );
                }
            }
        }
    }
}

/// Executions run in the coroutine worker (`"executor": "coroutines"`), and what ends one
/// badly is reported as on x86-64: a thread that spins past the time limit is a hang (the
/// checker's signal reaches the guest through qemu), a crash is a crash, with the other
/// executions explored on.
#[test]
fn hangs_and_crashes_are_reported_as_on_x86_64() {
    let scratch = Scratch::new("ppc64le-hangs");
    let flags = ["--keep-going", "--exec-timeout", "0.5"];
    for name in ["hang_and_fail.c", "local_spin.c", "crash_pids.c"] {
        let x86 = compile(&scratch, &source(name), "gcc", &["-O1"]);
        let ppc = cross(&scratch, &source(name), &["-O1"]);
        for model in ["sc", "tso"] {
            let want = check(&x86, model, &flags);
            let got = check(&ppc, model, &flags);
            let ctx = format!(
                "{name} under {model}:\nx86-64: {}{}\nppc64le: {}{}",
                want.stdout, want.stderr, got.stdout, got.stderr
            );
            assert_eq!(summary(&got), summary(&want), "{ctx}");
            assert_eq!(got.executions(), want.executions(), "{ctx}");
            assert_eq!(
                got.json.as_ref().unwrap()["executor"].as_str(),
                Some("coroutines"),
                "{ctx}"
            );
        }
    }
}

/// Store buffering, exactly: 3 executions under sc, the error under tso and pso; and under ra
/// (the graph engine) the error too, with 4 weak traces explored with --keep-going.
#[test]
fn store_buffering_on_power_binaries() {
    let scratch = Scratch::new("ppc64le-sb");
    let bin = cross(&scratch, &source("sb.c"), &["-O2"]);
    let sc = check(&bin, "sc", &[]);
    assert_eq!((sc.verdict(), sc.executions()), ("ok", 3), "{}", sc.stdout);
    for model in ["tso", "pso"] {
        let r = check(&bin, model, &[]);
        assert_eq!(r.error_kind(), Some("assertion"), "{model}: {}", r.stdout);
    }
    let ra = check(&bin, "ra", &["--keep-going"]);
    assert_eq!(
        (ra.verdict(), ra.executions(), ra.blocked()),
        ("error", 4, 0),
        "{}{}",
        ra.stdout,
        ra.stderr
    );
    // IRIW: an error only under ra
    let iriw = cross(&scratch, &source("tso/iriw.c"), &["-O2"]);
    assert_eq!(check(&iriw, "tso", &[]).verdict(), "ok");
    assert_eq!(check(&iriw, "ra", &[]).verdict(), "error");
}

/// A site's jump hook (a branch to a stub that calls the runtime) hands back every register
/// the program holds across it: general registers, CTR, LR, CR, XER, FPSCR, the full vector
/// registers and the red zone. The store-conditional sites, which keep the trap, are covered
/// by the atomics programs above.
#[test]
fn jump_hooks_keep_every_register() {
    let scratch = Scratch::new("ppc64le-registers");
    let bin = cross_o2(&scratch, "power/keeps_registers.c", &[]);
    for model in ["sc", "power"] {
        let r = check(&bin, model, &[]);
        assert_eq!(
            (r.verdict(), r.executions()),
            ("ok", 3),
            "{model}: {}{}",
            r.stdout,
            r.stderr
        );
    }
}

/// The POWER model, the default for a ppc64le program, on compiled C (exact counts: one
/// execution per consistent graph, none blocked): load buffering is an error under power only;
/// a data dependency forbids it, unless the value came from another run of the same load
/// instruction on the thread's own memory (no event: the dependency is not on the shared read,
/// and must not be taken to be); message passing is broken on either side until the writer
/// has `lwsync` and the reader an address dependency, or a control dependency and `isync`;
/// mutexes keep critical sections whole (glibc's acquire and release barriers).
#[test]
fn power_model_on_compiled_programs() {
    let scratch = Scratch::new("ppc64le-power");
    let build = |file: &str, flags: &[&str]| cross_o2(&scratch, file, flags);
    let want = |bin: &Path, model: &str, verdict: &str, executions: u64| {
        let r = check(bin, model, &["--keep-going"]);
        assert_eq!(
            (r.verdict(), r.executions(), r.blocked()),
            (verdict, executions, 0),
            "{} {model}:\n{}{}",
            bin.display(),
            r.stdout,
            r.stderr
        );
    };
    let lb = build("power/lb.c", &[]);
    want(&lb, "sc", "ok", 3);
    want(&lb, "tso", "ok", 3);
    want(&lb, "power", "error", 4);
    // the default model of a ppc64le program
    let r = run(&["--json", lb.to_str().unwrap()]);
    assert_eq!(r.json.as_ref().unwrap()["model"], "power", "{}", r.stdout);
    want(&build("power/lb_data.c", &[]), "power", "ok", 3);
    // (POWER allows this one's error: the write's value comes from the load's second
    // execution, on the thread's own stack. The exploration keeps the shared read with the
    // write all the same, as it cannot tell which execution of the load the value is from:
    // a weak behaviour missed, not a wrong one found)
    want(
        &build("power/lb_data.c", &["-DOWN_MEMORY"]),
        "power",
        "ok",
        3,
    );
    for (flags, verdict, executions) in [
        (&[][..], "error", 4),
        (&["-DLWSYNC"][..], "error", 4),
        (&["-DLWSYNC", "-DADDR"][..], "ok", 3),
        (&["-DLWSYNC", "-DCTRL"][..], "error", 4),
        (&["-DLWSYNC", "-DCTRL", "-DISYNC"][..], "ok", 3),
    ] {
        want(&build("power/mp.c", flags), "power", verdict, executions);
    }
    let r = check(&build("mutex_counter.c", &[]), "power", &[]);
    assert_eq!(r.verdict(), "ok", "{}{}", r.stdout, r.stderr);
}

/// C11 message passing (release store, acquire load) holds under power at every optimisation
/// level: at -O0 the acquire load's value goes through a stack slot addressed by r31, gcc's
/// frame pointer, before the branch of its control+isync, and so do the later values. Those
/// slots are the thread's own stack (no loads a dependency comes from, nor events that break
/// one); before, the acquire was lost at -O0 and the correct program failed. The same with the
/// record on main's stack (`stack_flag.c`), which makes main's stack accesses events. Relaxed,
/// the reader may see the flag first at every level. A spin lock of a compare-exchange with
/// acquire: its isync orders what follows on the way out of the loop (where another way to the
/// exit branch has none, the branch that way always loops) and past the return of the lock's
/// function (-O0); so does the acquire of a count published with release.
#[test]
fn c11_message_passing_holds_under_power_at_every_optimisation_level() {
    let scratch = Scratch::new("ppc64le-c11-mp");
    for opt in ["-O0", "-O1", "-O2"] {
        for (file, flags, verdict) in [
            ("power/mp_c11.c", &[][..], "ok"),
            ("power/mp_c11.c", &["-DRELAXED"][..], "error"),
            ("stack_flag.c", &[][..], "ok"),
            ("stack_flag.c", &["-DGLOBAL"][..], "ok"),
            ("power/c11_lock.c", &[][..], "ok"),
            ("power/c11_lock.c", &["-DPUBLISHED"][..], "ok"),
        ] {
            let mut all = vec![opt];
            all.extend_from_slice(flags);
            let bin = cross(&scratch, &source(file), &all);
            let r = check(&bin, "power", &[]);
            assert_eq!(
                r.verdict(),
                verdict,
                "{file} {all:?}:\n{}{}",
                r.stdout,
                r.stderr
            );
        }
    }
}

/// Two atomic increments (lwarx/stwcx. pairs) after both threads saw a flag clear: either
/// thread's may come second, under power as under sc. (Power found only the order in which
/// the first pair explored wrote first: a store-conditional whose load-reserve read the write
/// another thread's pair had taken failed, and never revisited that thread's load-reserve.)
#[test]
fn either_increment_may_come_second_under_power() {
    let scratch = Scratch::new("ppc64le-increments");
    let bin = cross_o2(&scratch, "power/increments.c", &[]);
    let second = cross_o2(&scratch, "power/increments.c", &["-DSECOND_IS_0"]);
    let sc = check(&bin, "sc", &["--keep-going"]);
    assert_eq!(
        (sc.verdict(), sc.executions()),
        ("ok", 10),
        "{}{}",
        sc.stdout,
        sc.stderr
    );
    let power = check(&bin, "power", &["--keep-going"]);
    assert_eq!(
        (power.verdict(), power.executions()),
        ("ok", 10),
        "{}{}",
        power.stdout,
        power.stderr
    );
    for model in ["sc", "tso", "pso", "power"] {
        let r = check(&second, model, &[]);
        assert_eq!(
            r.error_kind(),
            Some("assertion"),
            "{model}: {}{}",
            r.stdout,
            r.stderr
        );
    }
}

/// A write whose existence rests on a read through a path the model's dependencies do not
/// show (a branch in a called function, a value kept on the stack): a revisit must keep the
/// read with the write. (It did not: the graph where the read kept the value the write rests
/// on was never visited, and power said OK where even sc finds the error.)
#[test]
fn a_write_decided_in_a_callee_keeps_its_read_under_power() {
    let scratch = Scratch::new("ppc64le-decided");
    for flags in [
        &["-O2"][..],
        &["-O0"],
        &["-O2", "-DVIA_STACK"],
        &["-O0", "-DVIA_STACK"],
    ] {
        let bin = cross(&scratch, &source("power/decided_in_callee.c"), flags);
        for model in ["sc", "power"] {
            let r = check(&bin, model, &["--keep-going"]);
            assert_eq!(
                (r.error_kind(), r.executions(), r.blocked()),
                (Some("assertion"), 3, 0),
                "{flags:?} {model}: {}{}",
                r.stdout,
                r.stderr
            );
        }
    }
}

/// The pthread objects under power: what takes or waits acquires, what gives back or signals
/// releases (a barrier's wait both), also where a revisit keeps an update its thread has not
/// run again yet, so programs without races get the verdicts they have under sc: a barrier
/// makes each thread's value seen, a signal that wakes the wrong waiter deadlocks.
#[test]
fn pthread_objects_under_power() {
    let scratch = Scratch::new("ppc64le-objects");
    for (file, flags, verdict) in [
        ("objects/barrier_phases.c", &[][..], "ok"),
        ("objects/barrier_phases.c", &["-DONE"][..], "error"),
        ("objects/one_slot_queue.c", &["-DSIGNAL"][..], "error"),
        ("objects/semaphore_handoff.c", &[][..], "error"),
        ("objects/rwlock_pair.c", &[][..], "ok"),
        ("condvar.c", &[][..], "ok"),
        ("../../examples/stack_safe.c", &[][..], "ok"),
    ] {
        let bin = cross_o2(&scratch, file, flags);
        let r = check(&bin, "power", &[]);
        assert_eq!(
            r.verdict(),
            verdict,
            "{file} {flags:?}:\n{}{}",
            r.stdout,
            r.stderr
        );
    }
}

/// Under power a counterexample says which pair of a thread's accesses took effect out of
/// program order and why, the coherence order where a location has several writes, and
/// (`--dot`) draws it with the dependencies.
#[test]
fn power_counterexamples_explain_the_weak_behaviour() {
    let scratch = Scratch::new("ppc64le-power-explain");
    let build = |file: &str, flags: &[&str]| cross_o2(&scratch, file, flags);
    let error_of = |bin: &Path, extra: &[&str]| {
        let r = check(bin, "power", extra);
        assert_eq!(r.verdict(), "error", "{}{}", r.stdout, r.stderr);
        (r.json.as_ref().unwrap()["error"].clone(), r.stdout)
    };
    // what each reordered pair is: (text of the first, text of the second, why)
    let pairs = |e: &serde_json::Value| -> Vec<(String, String, String)> {
        let text = |i: &serde_json::Value| {
            let i = i.as_u64().unwrap() as usize - 1;
            e["trace"][i]["text"].as_str().unwrap().to_string()
        };
        e["reorderings"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|p| {
                        let why = p["why"].as_str().unwrap().to_string();
                        (text(&p["first"]), text(&p["second"]), why)
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    // message passing: both sides reordered, each pair named
    let (e, out) = error_of(&build("power/mp.c", &[]), &[]);
    let got = pairs(&e);
    let names: Vec<(&str, &str)> = got.iter().map(|(a, b, _)| (&a[..10], &b[..10])).collect();
    assert_eq!(
        names,
        [("store data", "store flag"), ("load flag ", "load data ")],
        "{out}"
    );
    assert!(
        out.contains("took effect in the other order: no fence between them"),
        "{out}"
    );
    // with lwsync and a control dependency the reader's loads are the pair, for want of isync
    let (e, out) = error_of(&build("power/mp.c", &["-DLWSYNC", "-DCTRL"]), &[]);
    let got = pairs(&e);
    assert_eq!(got.len(), 1, "{out}");
    assert!(
        got[0].0.starts_with("load flag") && got[0].1.starts_with("load data"),
        "{out}"
    );
    assert!(got[0].2.contains("control dependency alone"), "{out}");
    let kinds: Vec<&str> = e["dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"ctrl") && kinds.contains(&"data"),
        "{kinds:?}"
    );
    // 2+2W: each location's coherence order, the last write of each the one read at the end
    let bin = build("tso/two_plus_two_w.c", &[]);
    let dot = scratch.0.join("two_plus_two_w.dot");
    let (e, out) = error_of(&bin, &["--dot", dot.to_str().unwrap()]);
    let co = e["coherence"].as_array().expect("a coherence order");
    assert_eq!(co.len(), 2, "{out}");
    let trace = e["trace"].as_array().unwrap();
    for order in co {
        let order: Vec<usize> = order
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i.as_u64().unwrap() as usize)
            .collect();
        assert_eq!(order.len(), 2, "{out}");
        let last = &trace[order[1] - 1];
        assert_eq!(
            last["written"], 1,
            "the final value is the last write: {out}"
        );
        assert!(
            out.contains(&format!("#{} -> #{}", order[0], order[1])),
            "{out}"
        );
    }
    assert!(
        !out.contains("not seen yet"),
        "main reads the last writes: {out}"
    );
    let dot = std::fs::read_to_string(&dot).unwrap();
    assert_eq!(dot.matches("label=\"co\"").count(), 2, "{dot}");
    // load buffering replayed: the read is given the bytes of the store after it again
    let bin = build("power/lb.c", &[]);
    let b = bin.to_str().unwrap();
    let found = run_in(&scratch.0, &[b]);
    assert_eq!(found.status, 1, "{}{}", found.stdout, found.stderr);
    let stem = bin.file_name().unwrap().to_string_lossy().into_owned();
    let schedule = scratch.0.join(format!("smc-run-out/{stem}.power.schedule"));
    let replay = run_in(&scratch.0, &["--replay", schedule.to_str().unwrap(), b]);
    assert!(
        replay.status == 1 && replay.stdout.contains("replay: reproduced the saved error"),
        "{}{}",
        replay.stdout,
        replay.stderr
    );
    assert!(
        replay.stdout.contains("a later store)"),
        "{}",
        replay.stdout
    );
    // write-to-read causality: no pair reordered, the stores reached threads in different orders
    let (e, out) = error_of(&build("power/wrc.c", &[]), &[]);
    assert!(pairs(&e).is_empty(), "{out}");
    assert!(e["weakness"]
        .as_str()
        .unwrap()
        .contains("reached the threads in different orders"));
}

/// The bank example, a prebuilt ppc64le binary: its counterexample names the functions and
/// lines of the source, as on x86-64, and its saved schedule replays to the same error.
#[test]
fn bank_counterexample_names_lines_and_replays() {
    let scratch = Scratch::new("ppc64le-bank");
    let bin = cross(&scratch, &example("bank.c"), &["-O1"]);
    let b = bin.to_str().unwrap();
    let r = run_in(&scratch.0, &["--model", "sc", b]);
    assert_eq!(r.status, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("bank.c:"), "no file:line\n{}", r.stdout);
    assert!(
        r.stdout.contains("deposit"),
        "no function name\n{}",
        r.stdout
    );
    let saved = scratch.0.join("smc-run-out");
    let schedule = std::fs::read_dir(&saved)
        .ok()
        .and_then(|mut d| d.next())
        .and_then(|e| e.ok())
        .map(|e| e.path())
        .unwrap_or_else(|| panic!("no schedule saved\n{}", r.stdout));
    let replay = run_in(&scratch.0, &["--replay", schedule.to_str().unwrap(), b]);
    assert_eq!(replay.status, 1, "{}{}", replay.stdout, replay.stderr);
    let first_line = |s: &str| {
        s.lines()
            .find(|l| l.starts_with("error:"))
            .map(str::to_string)
    };
    assert_eq!(
        first_line(&replay.stdout),
        first_line(&r.stdout),
        "{}",
        replay.stdout
    );
}

/// A source file compiled for ppc64le by the checker itself.
#[test]
fn arch_flag_compiles_a_source_for_ppc64le() {
    let r = run(&[
        "--json",
        "--arch",
        "ppc64le",
        "--model",
        "tso",
        source("sb.c").to_str().unwrap(),
    ]);
    assert_eq!(r.verdict(), "error", "{}{}", r.stdout, r.stderr);
    assert_eq!(r.json.as_ref().unwrap()["arch"].as_str(), Some("ppc64le"));
}

/// A static ppc64le binary gets a one-line error (exit 2), and no qemu is left behind by a
/// check that is interrupted.
#[test]
fn static_binaries_are_refused_and_nothing_is_left_running() {
    let scratch = Scratch::new("ppc64le-robust");
    let bin = cross(&scratch, &source("sb.c"), &["-static"]);
    let r = run(&[bin.to_str().unwrap()]);
    assert_eq!(r.status, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("statically linked"), "{}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);

    // a program that spins forever without a visible operation, interrupted
    let spin = scratch.0.join("spin.c");
    std::fs::write(
        &spin,
        "#include <pthread.h>\nvolatile int go;\nstatic void *t(void *a) { return a; }\n\
         int main(void) { pthread_t x; pthread_create(&x, 0, t, 0); for (;;) {} }\n",
    )
    .unwrap();
    let bin = cross(&scratch, &spin, &["-O0"]);
    let mut child = Command::new(common::checker())
        .arg(&bin)
        .current_dir(&scratch.0)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(3));
    // SAFETY: plain kill of the checker we started, by its pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert!(!status.success());
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_eq!(
        running_with(&bin),
        Vec::<u32>::new(),
        "processes left behind"
    );
}

/// PIDs of live processes whose command line names `path` (qemu runs the program as an
/// argument, so its executable is qemu's).
fn running_with(path: &Path) -> Vec<u32> {
    let needle = path.as_os_str().as_encoded_bytes();
    let mut v = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        if cmdline.split(|&b| b == 0).any(|arg| arg == needle) {
            v.push(pid);
        }
    }
    v
}

/// POWER allows every execution sc does, so on random programs every final state sc reaches
/// must be reached under power too, whatever the code does between a read and what rests on
/// it (a call, a stack variable, a store-conditional loop); and the graph engine under sc
/// reaches exactly the interleaving engine's.
#[test]
fn random_programs_reach_under_power_every_state_sc_does() {
    let scratch = Scratch::new("ppc64le-random");
    let random = (0..=24u64).map(|seed| {
        let opt = if seed % 4 == 1 { "-O0" } else { "-O2" };
        (format!("seed {seed}"), random_program(seed), opt)
    });
    // (and programs the random ones found, each cut down to what it needs)
    let found = [
        "power/pieces_after_a_revisit.c",
        "power/increment_read_before_it_ran.c",
    ]
    .map(|f| {
        let text = std::fs::read_to_string(source(f)).unwrap();
        (f.to_string(), text, "-O2")
    });
    for (k, (case, text, opt)) in random.chain(found).enumerate() {
        let src = scratch.0.join(format!("random{k}.c"));
        std::fs::write(&src, &text).unwrap();
        let bin = cross(&scratch, &src, &[opt]);
        let sc = check(&bin, "sc", &["--keep-going"]);
        let graph = check(&bin, "sc", &["--keep-going", "--engine", "graph"]);
        let power = check(&bin, "power", &["--keep-going"]);
        for r in [&sc, &graph, &power] {
            assert_eq!(
                r.verdict(),
                "ok",
                "{case} {opt}:\n{text}\n{}{}",
                r.stdout,
                r.stderr
            );
        }
        let (sc, graph, power) = (outcomes(&sc), outcomes(&graph), outcomes(&power));
        assert_eq!(
            sc, graph,
            "{case} {opt}: the engines differ under sc:\n{text}"
        );
        let missed: Vec<&String> = sc.difference(&power).collect();
        assert!(
            missed.is_empty(),
            "{case} {opt}: power misses final states sc reaches: {missed:?}\n{text}"
        );
    }
}
