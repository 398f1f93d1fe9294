//! The command line's contract: input errors are one line with exit status 2, and the checker
//! leaves no process behind, also when interrupted.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{compile, processes_of, run, source, Scratch};

fn assert_input_error(args: &[&str], expect: &str) {
    let r = run(args);
    assert_eq!(r.status, 2, "{}: {}{}", r.command, r.stdout, r.stderr);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line expected: {}", r.stderr);
    assert!(
        lines[0].contains(expect),
        "`{}` does not say `{expect}`",
        lines[0]
    );
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
}

#[test]
fn bad_inputs_are_one_line_and_status_2() {
    let scratch = Scratch::new("badinput");
    let dir = scratch.0.to_str().unwrap().to_string();
    assert_input_error(&["/nonexistent/prog"], "no such file");
    assert_input_error(&[&dir], "is a directory");
    let text = scratch.0.join("notes.txt");
    std::fs::write(&text, "hello\n").unwrap();
    assert_input_error(&[text.to_str().unwrap()], "not an ELF");
    let script = scratch.0.join("run.sh");
    std::fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
    assert_input_error(&[script.to_str().unwrap()], "is a script");
    let lib = compile(&scratch, &source("sb.c"), "gcc", &["-shared", "-fPIC"]);
    assert_input_error(&[lib.to_str().unwrap()], "shared library");
    let single = scratch.0.join("single.c");
    std::fs::write(&single, "int main(void) { return 0; }\n").unwrap();
    let single = compile(&scratch, &single, "gcc", &["-O2"]);
    assert_input_error(&[single.to_str().unwrap()], "does not create threads");
    assert_input_error(
        &["--model", "weird", source("sb.c").to_str().unwrap()],
        "unknown model `weird`",
    );
    let broken = scratch.0.join("broken.c");
    std::fs::write(&broken, "int main(void) { return }\n").unwrap();
    let r = run(&[broken.to_str().unwrap()]);
    assert_eq!(r.status, 2);
    assert!(
        r.stderr
            .lines()
            .last()
            .unwrap()
            .contains("compilation failed"),
        "{}",
        r.stderr
    );
}

#[test]
fn static_executable_is_refused() {
    let scratch = Scratch::new("static");
    let out = scratch.0.join("static");
    let ok = Command::new("gcc")
        .args(["-static", "-O2", "-pthread"])
        .arg(source("sb.c"))
        .arg("-o")
        .arg(&out)
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        assert_input_error(&[out.to_str().unwrap()], "statically linked");
    } else {
        // no static libc on this machine: nothing to refuse
        assert!(!out.exists());
    }
}

#[test]
fn no_process_is_left_behind() {
    let scratch = Scratch::new("leftover");
    let bin = compile(&scratch, &source("lock_order_deadlock.c"), "gcc", &["-O2"]);
    let r = common::check(&bin, "sc", &[]);
    assert_eq!(r.error_kind(), Some("deadlock"));
    assert_eq!(processes_of(&bin), Vec::<u32>::new());
}

#[test]
fn interrupt_stops_everything() {
    let scratch = Scratch::new("interrupt");
    let bin = compile(&scratch, &source("local_spin.c"), "gcc", &["-O2"]);
    let mut child = Command::new(common::checker())
        .arg(&bin)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // wait until the program runs under the checker
    let deadline = Instant::now() + Duration::from_secs(20);
    while processes_of(&bin).len() < 2 {
        assert!(Instant::now() < deadline, "the program never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: signalling the child we started, by its PID.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let deadline = Instant::now() + Duration::from_secs(5);
    while !processes_of(&bin).is_empty() {
        assert!(
            Instant::now() < deadline,
            "left behind: {:?}",
            processes_of(&bin)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
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
fn string_instruction_on_shared_memory_is_a_clear_error() {
    let r = run(&[source("rep_stos.c").to_str().unwrap()]);
    assert_eq!(r.status, 2, "{}{}", r.stdout, r.stderr);
    let last = r.stderr.lines().last().unwrap_or("");
    assert!(
        last.contains("unsupported instruction") && last.contains("rep stosb"),
        "{}",
        r.stderr
    );
}
