//! A hang — a thread that runs past `--exec-timeout` without a visible operation — sets that
//! thread aside for the rest of the execution: the other threads go on, the execution's races
//! are analysed as any other's, and the search goes on past it.

mod common;

use common::{builds, check, compile, source, Scratch};

/// main spins forever when it runs before the worker's store, and the worker fails when main
/// runs after it: 3 executions (main hangs; the worker first, then main before or after the
/// worker's check), each error kind reported with --keep-going, under every model.
#[test]
fn a_hang_does_not_hide_another_threads_error() {
    let scratch = Scratch::new("hang-and-fail");
    let mut failures = Vec::new();
    for (cc, opt) in builds() {
        let bin = compile(&scratch, &source("hang_and_fail.c"), cc, &[opt]);
        for model in ["sc", "tso", "pso"] {
            let r = check(&bin, model, &["--keep-going", "--exec-timeout", "0.5"]);
            let kinds = r.error_kinds();
            if (r.executions(), kinds.as_slice()) != (3, &["assertion", "hang"][..]) {
                failures.push(format!(
                    "{cc} {opt} {model}: {} executions, errors {kinds:?}\n{}{}",
                    r.executions(),
                    r.stdout,
                    r.stderr
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
