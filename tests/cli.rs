//! The command line's contract: input errors are one line with exit status 2, and the checker
//! leaves no process behind, also when interrupted.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{compile, processes_of, run, source, Scratch};

#[test]
fn no_process_is_left_behind() {
    let scratch = Scratch::new("leftover");
    let bin = compile(&scratch, &source("lock_order_deadlock.c"), "gcc", &["-O2"]);
    let r = common::check(&bin, "sc", &[]);
    assert_eq!(r.error_kind(), Some("deadlock"));
    assert_eq!(processes_of(&bin), Vec::<u32>::new());
}

/// Start the checker on a program that spins forever, and wait until the program runs.
fn start_spinning(bin: &std::path::Path, shell: bool) -> std::process::Child {
    let mut cmd = if shell {
        // a parent between us and the checker, to be killed instead of the checker
        let mut c = Command::new("sh");
        c.arg("-c").arg(format!(
            "{} --exec-timeout 2 {} ; exit 0",
            common::checker(),
            bin.display()
        ));
        c
    } else {
        let mut c = Command::new(common::checker());
        c.arg(bin);
        c
    };
    // in the scratch directory: a checker that reports the hang saves its schedule there
    let child = cmd
        .current_dir(bin.parent().unwrap())
        .env("TMPDIR", bin.parent().unwrap().join("tmp"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while processes_of(bin).len() < 2 {
        assert!(Instant::now() < deadline, "the program never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

fn assert_nothing_left(bin: &std::path::Path, within: Duration) {
    let deadline = Instant::now() + within;
    while !processes_of(bin).is_empty() {
        assert!(
            Instant::now() < deadline,
            "left behind: {:?}",
            processes_of(bin)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let tmp: Vec<_> = std::fs::read_dir(bin.parent().unwrap().join("tmp"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(tmp.is_empty(), "left in TMPDIR: {tmp:?}");
}

#[test]
fn interrupt_stops_everything() {
    let scratch = Scratch::new("interrupt");
    std::fs::create_dir_all(scratch.0.join("tmp")).unwrap();
    let bin = compile(&scratch, &source("local_spin.c"), "gcc", &["-O2"]);
    for (sig, status) in [
        (libc::SIGINT, Some(130)),
        (libc::SIGTERM, Some(130)),
        (libc::SIGKILL, None),
    ] {
        let mut child = start_spinning(&bin, false);
        // SAFETY: signalling the child we started, by its PID.
        unsafe { libc::kill(child.id() as i32, sig) };
        let st = child.wait().unwrap();
        assert_eq!(st.code(), status, "signal {sig}");
        assert_nothing_left(&bin, Duration::from_secs(5));
    }
}

/// Run the checker with `args` in `scratch` for 1.5 s, then send it `sig`: its stderr, and how
/// long it took to end after the signal. It must end with status 130.
fn interrupted_run(scratch: &Scratch, args: &[&str], sig: i32) -> (String, Duration) {
    let child = Command::new(common::checker())
        .args(args)
        .current_dir(&scratch.0)
        .env("TMPDIR", scratch.0.join("tmp"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let sent = Instant::now();
    // SAFETY: signalling the child we started, by its PID.
    unsafe { libc::kill(child.id() as i32, sig) };
    let out = child.wait_with_output().unwrap();
    let took = sent.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(130), "{args:?}: {stderr}");
    (stderr, took)
}

/// An interrupted check says how far it got, and that it has no verdict: five threads that
/// all write and read three shared words (far too many executions to finish), interrupted
/// once it has run a while, under both engines.
#[test]
fn an_interrupted_check_says_how_far_it_got() {
    let scratch = Scratch::new("interrupt-far");
    std::fs::create_dir_all(scratch.0.join("tmp")).unwrap();
    let src = scratch.0.join("crowd.c");
    std::fs::write(
        &src,
        "#include <pthread.h>\nvolatile int w[3];\n\
         static void *t(void *a) { long i = (long)a; w[i % 3] = i; int s = w[(i + 1) % 3];\n\
         w[(i + 2) % 3] = s + 1; return (void *)(long)w[i % 3]; }\n\
         int main(void) { pthread_t x[5]; for (long i = 0; i < 5; i++) pthread_create(&x[i], 0, t, (void *)i);\n\
         for (int i = 0; i < 5; i++) pthread_join(x[i], 0); return 0; }\n",
    )
    .unwrap();
    let bin = compile(&scratch, &src, "gcc", &["-O2"]);
    for engine in ["interleaving", "graph"] {
        let args = ["--engine", engine, "-j", "1", bin.to_str().unwrap()];
        let (stderr, _) = interrupted_run(&scratch, &args, libc::SIGINT);
        let line = stderr.lines().last().unwrap_or_default();
        let n: u64 = line
            .strip_prefix("smc-run: interrupted after ")
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{engine}: {stderr}"));
        assert!(n > 100, "{engine}: {line}");
        assert!(line.ends_with("no verdict"), "{engine}: {line}");
        assert_nothing_left(&bin, Duration::from_secs(5));
    }
}

/// An interrupt in the middle of one long execution (the graph engine inside the worker looks
/// for it only between executions) still ends the check promptly, with no verdict. The
/// execution: a million locked increments of a word main has read (so each update is checked
/// against the location's other events), under a step bound that lets them all run.
#[test]
fn an_interrupt_inside_one_long_execution_ends_the_check() {
    let scratch = Scratch::new("interrupt-long");
    std::fs::create_dir_all(scratch.0.join("tmp")).unwrap();
    let src = scratch.0.join("long.c");
    std::fs::write(
        &src,
        "#include <pthread.h>\n#include <stdatomic.h>\natomic_long n;\n\
         static void *t(void *a) { for (long i = 0; i < 1000000; i++) atomic_fetch_add(&n, 1); return a; }\n\
         int main(void) { pthread_t x; pthread_create(&x, 0, t, 0); long seen = atomic_load(&n);\n\
         pthread_join(x, 0); return seen > 1000000; }\n",
    )
    .unwrap();
    let bin = compile(&scratch, &src, "gcc", &["-O2"]);
    let args = [
        "--model",
        "ra",
        "--max-steps",
        "100000000",
        bin.to_str().unwrap(),
    ];
    let (stderr, took) = interrupted_run(&scratch, &args, libc::SIGTERM);
    let line = stderr.lines().last().unwrap_or_default();
    assert!(
        line.starts_with("smc-run: interrupted after 0 executions"),
        "{line}"
    );
    // the worker's engine gets two seconds to stop by itself, then its process is killed
    assert!(took < Duration::from_secs(6), "took {took:?}: {line}");
    assert_nothing_left(&bin, Duration::from_secs(5));
}

#[test]
fn the_checker_outlives_its_parent_and_still_cleans_up() {
    let scratch = Scratch::new("orphan");
    std::fs::create_dir_all(scratch.0.join("tmp")).unwrap();
    let bin = compile(&scratch, &source("local_spin.c"), "gcc", &["-O2"]);
    let mut shell = start_spinning(&bin, true);
    // SAFETY: the shell is our child, signalled by its PID.
    unsafe { libc::kill(shell.id() as i32, libc::SIGKILL) };
    shell.wait().unwrap();
    // the orphaned checker ends its execution at the time limit, reports the hang and exits
    assert_nothing_left(&bin, Duration::from_secs(30));
}

#[test]
fn endless_local_loop_is_a_hang() {
    let scratch = Scratch::new("hang");
    let bin = compile(&scratch, &source("local_spin.c"), "gcc", &["-O2"]);
    let r = common::check(&bin, "sc", &["--exec-timeout", "0.5"]);
    assert_eq!(
        (r.error_kind(), r.status),
        (Some("hang"), 1),
        "{}{}",
        r.stdout,
        r.stderr
    );
    assert_eq!(processes_of(&bin), Vec::<u32>::new());
}

#[test]
fn livelock_is_a_hang() {
    // both threads wait for a flag nobody sets
    let scratch = Scratch::new("livelock");
    let src = scratch.0.join("livelock.c");
    std::fs::write(
        &src,
        "#include <pthread.h>\nvolatile int go;\nstatic void *w(void *a) { while (!go) {} return a; }\n\
         int main(void) { pthread_t t; pthread_create(&t, 0, w, 0); pthread_join(t, 0); return 0; }\n",
    )
    .unwrap();
    for opt in ["-O0", "-O2"] {
        let bin = compile(&scratch, &src, "gcc", &[opt]);
        let r = common::check(&bin, "sc", &[]);
        assert_eq!(r.error_kind(), Some("hang"), "{opt}: {}", r.stdout);
        assert!(r.json.unwrap()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("livelock"));
    }
}

#[test]
fn verifier_dir_writes_header_and_library() {
    let scratch = Scratch::new("verifier");
    let dir = scratch.0.join("v");
    let r = run(&["--verifier-dir", dir.to_str().unwrap()]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let src = scratch.0.join("p.c");
    std::fs::write(&src, "#include \"smc_verifier.h\"\nint main(void) { __VERIFIER_assume(1); return __VERIFIER_nondet_int(); }\n")
        .unwrap();
    let d = dir.to_str().unwrap();
    let exe = scratch.0.join("p");
    let st = Command::new("gcc")
        .arg(format!("-I{d}"))
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .args([
            format!("-L{d}"),
            "-lsmc_verifier".into(),
            format!("-Wl,-rpath,{d}"),
        ])
        .status()
        .unwrap();
    assert!(st.success());
    assert_eq!(Command::new(&exe).status().unwrap().code(), Some(0));
}

#[test]
fn string_instruction_with_32_bit_addresses_on_shared_memory_is_a_clear_error() {
    let r = run(&[source("rep_stos.c").to_str().unwrap()]);
    assert_eq!(r.status, 2, "{}{}", r.stdout, r.stderr);
    let last = r.stderr.lines().last().unwrap_or("");
    assert!(
        last.contains("unsupported instruction") && last.contains("rep stosb [edi]"),
        "{}",
        r.stderr
    );
}

/// `smc-run` is one file: a copy of it alone in an empty directory (as `cargo install` or a
/// release tarball leaves it) runs the engine inside the program's worker, from the library
/// it carries.
#[test]
fn a_copied_binary_runs_the_engine_in_the_worker() {
    let scratch = Scratch::new("copied-binary");
    let bin = compile(&scratch, &source("sb.c"), "gcc", &["-O1"]);
    let alone = scratch.0.join("alone");
    std::fs::create_dir_all(&alone).unwrap();
    let copy = alone.join("smc-run");
    std::fs::copy(common::checker(), &copy).unwrap();
    let out = Command::new(&copy)
        .args(["--json", "-q", "--model", "tso", "-j", "1"])
        .arg(&bin)
        .current_dir(&alone)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let json: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(json["engine"], "worker", "{stdout}");
    assert_eq!(json["verdict"], "error", "{stdout}");
}

/// A reader that goes away (`smc-run … | head -1`) is not the checker's error: no panic, and
/// the exit status is still the verdict's.
#[test]
fn a_closed_stdout_does_not_end_the_check() {
    let scratch = Scratch::new("closed-stdout");
    let mut child = Command::new(common::checker())
        .arg(common::example("bank.c"))
        .current_dir(&scratch.0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // every line goes to a pipe nobody reads
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
