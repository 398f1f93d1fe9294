//! The robustness corpus: inputs a user may point the checker at and programs that misbehave,
//! each with the outcome it must get — and after every run, no process of the program left.

mod common;

use std::path::PathBuf;

use common::{compile, processes_of, run, Scratch};

/// What a run must end with: exit status, and a text the output (stdout or stderr) contains.
struct Case {
    name: &'static str,
    args: &'static [&'static str],
    status: i32,
    says: &'static str,
}

const fn case(
    name: &'static str,
    args: &'static [&'static str],
    status: i32,
    says: &'static str,
) -> Case {
    Case {
        name,
        args,
        status,
        says,
    }
}

/// Programs of tests/robustness/, compiled with gcc -O1 -g, checked under sc unless the case
/// names a model.
const PROGRAMS: &[Case] = &[
    case(
        "exit_status",
        &[],
        1,
        "ERROR (exit): the program exited with status 3",
    ),
    case("exit_status", &["--allow-exit-status"], 0, "verdict: OK"),
    case("calls_fork", &[], 2, "the program calls fork()"),
    case("calls_system", &[], 2, "the program calls system()"),
    case("calls_exec", &[], 2, "the program calls execl()"),
    case("own_segv_handler", &[], 1, "ERROR (crash): SIGSEGV"),
    case(
        "own_trap_handler",
        &[],
        1,
        "Assertion `counter == 2' failed",
    ),
    case("closes_fds", &[], 1, "Assertion `counter == 2' failed"),
    case("dup2_fds", &[], 1, "Assertion `counter == 2' failed"),
    case("floods_output", &[], 0, "executions: 1 "),
    case("floods_output", &["--model", "tso"], 0, "verdict: OK"),
    case("many_threads", &[], 0, "executions: 1 "),
    case("thread_local", &[], 0, "executions: 1 "),
    // five locations, each incremented atomically by two threads in either order: 2^5
    case("atomic_widths", &[], 0, "executions: 32 "),
    case("atomic_widths", &["--model", "pso"], 0, "verdict: OK"),
];

#[test]
fn misbehaving_programs_are_reported_not_obeyed() {
    let scratch = Scratch::new("robust");
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/robustness");
    let mut failures = Vec::new();
    for c in PROGRAMS {
        let bin = compile(
            &scratch,
            &dir.join(format!("{}.c", c.name)),
            "gcc",
            &["-O1", "-g"],
        );
        let mut args = c.args.to_vec();
        if !args.contains(&"--model") {
            args.extend(["--model", "sc"]);
        }
        let b = bin.to_str().unwrap();
        args.push(b);
        let r = run(&args);
        let out = format!("{}{}", r.stdout, r.stderr);
        if r.status != c.status || !out.contains(c.says) {
            failures.push(format!(
                "{} {:?}: status {} (want {}), output does not say `{}`:\n{}",
                c.name,
                c.args,
                r.status,
                c.status,
                c.says,
                out.lines().take(5).collect::<Vec<_>>().join("\n")
            ));
        }
        if r.status == 2 && r.stderr.lines().count() != 1 {
            failures.push(format!("{}: not one line on stderr: {}", c.name, r.stderr));
        }
        if out.contains("panicked") {
            failures.push(format!("{}: the checker panicked", c.name));
        }
        let left = processes_of(&bin);
        if !left.is_empty() {
            failures.push(format!("{}: processes left behind: {left:?}", c.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
