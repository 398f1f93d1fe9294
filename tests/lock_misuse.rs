//! Locks used wrongly, as glibc answers it: a normal mutex or spin lock unlocked by a thread
//! that does not hold it is released (the error this lets in is found under every model and
//! both engines), while error-checking, recursive and robust mutexes, rwlocks and joins answer
//! their misuse with an error code and go on. Verdicts and exact executions, with
//! `--keep-going` so that a count covers the whole exploration.

mod common;

use common::{builds, compile, expect_every_model, source, Scratch};

const OK: &str = "ok";
const ERROR: &str = "error";

/// A thread's stray unlock released main's lock: the interleaving engine took the unlock for
/// independent of main's lock (no acquire of its own to reverse with), so under sc it explored
/// no order where the unlock comes after main's lock and said OK (a rwlock's stray unlock it
/// did not release at all, where the graph engine did). With an error-checking or a recursive
/// mutex the stray unlock fails with EPERM: one execution per order of the locks.
#[test]
fn a_stray_unlock_releases_a_normal_lock_and_fails_on_an_owned_one() {
    let scratch = Scratch::new("stray-unlock");
    for (cc, opt) in builds() {
        for kind in 0..5 {
            let define = format!("-DKIND={kind}");
            let bin = compile(&scratch, &source("stray_unlock.c"), cc, &[opt, &define]);
            let want = if matches!(kind, 0 | 1 | 4) {
                [(ERROR, Some((9, 9))); 4]
            } else {
                [(OK, Some((2, 2))); 4]
            };
            expect_every_model(&bin, want, &format!("stray_unlock.c {cc} {opt} {define}"));
        }
    }
}

/// The answers glibc gives a lock's misuse (EDEADLK, EBUSY, EPERM), each asserted by the
/// program, while another thread uses the same locks: it used to deadlock on the relock of an
/// error-checking mutex, a rwlock's writer's relock, a join of itself and a condition wait on
/// an unheld mutex, and to take another thread's unlock of an owned mutex for a release.
#[test]
fn lock_misuse_gets_the_error_codes_of_glibc() {
    let scratch = Scratch::new("owner-errors");
    for (cc, opt) in builds() {
        let bin = compile(&scratch, &source("owner_errors.c"), cc, &[opt]);
        let native = std::process::Command::new(&bin).status().unwrap();
        assert!(
            native.success(),
            "owner_errors.c {cc} {opt} natively: {native}"
        );
        let want = [(OK, Some((4, 4))); 4];
        expect_every_model(&bin, want, &format!("owner_errors.c {cc} {opt}"));
    }
}
