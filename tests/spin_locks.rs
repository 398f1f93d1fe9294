//! Test-and-set spin locks written the usual ways (C11 `atomic_exchange` and `atomic_flag`,
//! C++ `std::atomic_flag`, Rust `AtomicBool::swap`): a failed attempt writes back the value it
//! found, so a thread that spins on one waits as in any await loop instead of running to the
//! step bound. Verdicts and exact executions under every model and both engines, with
//! `--keep-going` so that a count covers the whole exploration.

mod common;

use common::{builds, compile, expect_every_model, rustc, source, Expect, Scratch};

const OK: &str = "ok";
const ERROR: &str = "error";

/// Two threads take an `xchg` lock once each: each first, its rival failing once before the
/// unlock or not at all (4); the graph engine, whose failed attempt reads the write it
/// repeats, one execution per order (2). At -O0 the first failed attempt keeps its result on
/// the stack, so the second is in another state and the third repeats it: one more iteration
/// each way, and only the verdicts are fixed. The unlock is a release store, a plain `mov`:
/// under pso the counter's store may reach memory after it, and an increment is lost. With
/// `atomic_flag` (seq_cst: its clear is an `xchg`) every model is correct.
#[test]
fn test_and_set_locks_in_c() {
    let scratch = Scratch::new("tas-c");
    let cases: &[(&[&str], [Expect; 4])] = &[
        (
            &[],
            [
                (OK, Some((4, 2))),
                (OK, Some((4, 2))),
                (ERROR, Some((12, 6))),
                (OK, Some((2, 2))),
            ],
        ),
        (
            &["-DFLAG"],
            [
                (OK, Some((4, 2))),
                (OK, Some((4, 2))),
                (OK, Some((4, 2))),
                (OK, Some((2, 2))),
            ],
        ),
        (
            &["-DRACY"],
            [
                (ERROR, Some((4, 4))),
                (ERROR, Some((4, 4))),
                (ERROR, Some((4, 4))),
                (ERROR, Some((4, 4))),
            ],
        ),
    ];
    for (cc, opt) in builds() {
        for (defines, want) in cases {
            let mut flags = vec![opt];
            flags.extend_from_slice(defines);
            let bin = compile(&scratch, &source("tas_lock.c"), cc, &flags);
            let want = if opt == "-O0" {
                want.map(|(verdict, _)| (verdict, None))
            } else {
                *want
            };
            expect_every_model(&bin, want, &format!("tas_lock.c {cc} {flags:?}"));
        }
    }
}

/// Three threads take an `atomic_flag` lock twice each: the graph engine has one execution
/// per order of the six critical sections, 6!/(2!·2!·2!) = 90; the interleaving engine also
/// tells apart where the failed attempts fall among the other threads' operations.
#[test]
fn three_threads_taking_a_test_and_set_lock_twice() {
    let scratch = Scratch::new("tas-three");
    let bin = compile(
        &scratch,
        &source("tas_lock.c"),
        "gcc",
        &["-O2", "-DFLAG", "-DTHREADS=3", "-DROUNDS=2"],
    );
    let ok = (OK, Some((63000, 90)));
    expect_every_model(
        &bin,
        [ok, ok, ok, (OK, Some((90, 90)))],
        "tas_lock.c three threads",
    );
}

/// The lock of C++ and of Rust: verdicts (the counts depend on what the compiler leaves in the
/// registers before the first attempt).
const RELEASE_STORE_UNLOCK: [Expect; 4] = [(OK, None), (OK, None), (ERROR, None), (OK, None)];

#[test]
fn test_and_set_lock_in_cpp() {
    let scratch = Scratch::new("tas-cpp");
    for cxx in ["g++", "clang++"] {
        let bin = compile(
            &scratch,
            &source("cpp_tas_lock.cpp"),
            cxx,
            &["-std=c++20", "-O2"],
        );
        expect_every_model(
            &bin,
            RELEASE_STORE_UNLOCK,
            &format!("cpp_tas_lock.cpp {cxx}"),
        );
    }
}

#[test]
fn swap_lock_in_rust() {
    let scratch = Scratch::new("tas-rust");
    let bin = rustc(&scratch, "rust_swap_lock.rs");
    expect_every_model(&bin, RELEASE_STORE_UNLOCK, "rust_swap_lock.rs");
}

/// A loop of trylocks (a mutex's, a spin lock's, a rwlock's read and write locks, a semaphore's
/// trywait) until the holder lets go: a try that failed, repeated in the same state of its
/// caller (callee-saved registers and stack), waits for another thread to change the object,
/// as a load's await loop waits for a store, so the check ends. The mutex at -O2: main first,
/// the holder first and main's try failing once, or not at all (3); the graph engine ends the
/// one with a failed try blocked (2). With a count of failed tries that gives up after one,
/// each try is in another state: no await loop, and the assertion fails under every model.
#[test]
fn try_lock_loops_wait_as_await_loops() {
    let scratch = Scratch::new("try-loops");
    for (cc, opt) in builds() {
        for kind in 0..5 {
            let define = format!("-DKIND={kind}");
            let bin = compile(&scratch, &source("try_loops.c"), cc, &[opt, &define]);
            let counts = (kind == 0 && opt == "-O2").then_some((3, 2));
            let want = [(OK, counts); 4];
            expect_every_model(&bin, want, &format!("try_loops.c {cc} {opt} {define}"));
            let counted = compile(
                &scratch,
                &source("try_loops.c"),
                cc,
                &[opt, &define, "-DCOUNTED"],
            );
            let want = [(ERROR, None); 4];
            expect_every_model(
                &counted,
                want,
                &format!("try_loops.c {cc} {opt} {define} -DCOUNTED"),
            );
        }
    }
}
