//! The futex system call made by the program itself through syscall(): a mutex built on it
//! (Drepper's, "Futexes Are Tricky") is correct; taking it with the wrong value in the
//! contended path loses a wake-up, and a thread sleeps for good.

mod common;

use common::{builds, check, compile, source, Scratch};

#[test]
fn futex_mutex_and_its_lost_wake_up() {
    let scratch = Scratch::new("futex");
    let mut failures = Vec::new();
    for (cc, opt) in builds() {
        for (defines, expect) in [
            // (a wake that finds no waiter only looks at the waiters: 24 before it was taken to
            // change them)
            (&[][..], ("ok", 18, "")),
            (&["-DBUGGY"][..], ("error", 0, "deadlock")),
        ] {
            let flags: Vec<&str> = std::iter::once(opt)
                .chain(defines.iter().copied())
                .collect();
            let bin = compile(&scratch, &source("futex_mutex.c"), cc, &flags);
            for model in ["sc", "tso", "pso"] {
                let r = check(&bin, model, &[]);
                let got = (
                    r.verdict(),
                    if expect.0 == "ok" { r.executions() } else { 0 },
                    r.error_kind().unwrap_or(""),
                );
                if got != expect {
                    failures.push(format!(
                        "{cc} {opt} {defines:?} {model}: {got:?}, expected {expect:?}\n{}",
                        r.stdout
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A futex operation other than wait and wake is named in a one-line error, exit status 2.
#[test]
fn unmodelled_futex_operation_is_named() {
    let scratch = Scratch::new("futex-requeue");
    let bin = compile(&scratch, &source("futex_requeue.c"), "gcc", &["-O2"]);
    let r = check(&bin, "sc", &[]);
    assert_eq!(r.status, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("futex(FUTEX_CMP_REQUEUE)") && r.stderr.trim_end().lines().count() <= 2,
        "{}",
        r.stderr
    );
}
