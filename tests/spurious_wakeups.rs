//! `--spurious-wakeups N`: a `pthread_cond_wait` may return without a signal, at most N times
//! per thread and execution, as POSIX allows. A wait guarded by `if` then fails; a `while`
//! loop explores one execution more per allowed wake-up.

mod common;

use common::{builds, check, compile, source, Scratch};

#[test]
fn an_if_guarded_wait_fails_on_a_spurious_wakeup() {
    let scratch = Scratch::new("spurious-wakeups");
    let mut failures = Vec::new();
    // (build with -DWHILE, --spurious-wakeups, verdict, executions with --keep-going): the
    // consumer takes the lock after main, before it (woken by the signal), or before it and
    // woken before main takes the lock, once per allowed wake-up
    let cases = [
        (false, "0", "ok", 2),
        (false, "1", "error", 3),
        (true, "1", "ok", 3),
        (true, "2", "ok", 4),
    ];
    for (cc, opt) in builds() {
        let plain = compile(&scratch, &source("condvar_if.c"), cc, &[opt]);
        let looped = compile(&scratch, &source("condvar_if.c"), cc, &[opt, "-DWHILE"]);
        for (is_while, n, verdict, executions) in cases {
            let bin = if is_while { &looped } else { &plain };
            // the graph engine: the same verdicts (its wake-up and its taking the mutex again
            // are two events, so it tells more executions apart)
            for model in ["sc", "ra"] {
                let r = check(bin, model, &["--spurious-wakeups", n, "--engine", "graph"]);
                if r.verdict() != verdict {
                    failures.push(format!(
                        "{cc} {opt} while={is_while} n={n} {model} graph: {}\n{}{}",
                        r.verdict(),
                        r.stdout,
                        r.stderr
                    ));
                }
            }
            for model in ["sc", "tso", "pso"] {
                let r = check(bin, model, &["--keep-going", "--spurious-wakeups", n]);
                if (r.verdict(), r.executions()) != (verdict, executions) {
                    failures.push(format!(
                        "{cc} {opt} while={is_while} n={n} {model}: {} {}\n{}{}",
                        r.verdict(),
                        r.executions(),
                        r.stdout,
                        r.stderr
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
