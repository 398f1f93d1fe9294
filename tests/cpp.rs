//! C++ programs built on the standard library's threads, locks, condition variables and
//! atomics (libstdc++), with g++ and clang++: libstdc++ starts a `std::thread` with
//! pthread_create and blocks in its atomic waits, latches and barriers with the futex system
//! call, both visible to the checker.

mod common;

use common::{check, compile, source, Scratch};
use smc_run::program::Program;

const OK: &str = "ok";
const ERROR: &str = "error";

/// Under one model: the verdict, and the executions when no error (the count at an error
/// depends on the search order), or the error's kind.
type Expect = (&'static str, u64, &'static str);

/// (program, [sc, tso, pso])
const CASES: &[(&str, [Expect; 3])] = &[
    (
        "cpp_store_buffering.cpp",
        [
            (OK, 3, ""),
            (ERROR, 0, "assertion"),
            (ERROR, 0, "assertion"),
        ],
    ),
    (
        "cpp_mutex_condvar.cpp",
        [(OK, 7, ""), (OK, 7, ""), (OK, 7, "")],
    ),
    // libstdc++'s notify_one skips the futex wake when it sees no waiter, and its load of the
    // waiter count may pass the flag's store still in the store buffer (tso): the waiter,
    // having counted itself in, finds the flag still 0 and sleeps for good
    (
        "cpp_atomic_wait.cpp",
        [
            (OK, 37, ""),
            (ERROR, 0, "deadlock"),
            (ERROR, 0, "assertion"),
        ],
    ),
    (
        "cpp_sync_objects.cpp",
        [(OK, 4, ""), (OK, 4, ""), (OK, 4, "")],
    ),
    // a shared_ptr's count is atomic once a thread exists (libstdc++ asks glibc's
    // __libc_single_threaded, which the first pthread_create clears): a plain increment
    // would lose one
    (
        "cpp_shared_ptr.cpp",
        [(OK, 16, ""), (OK, 16, ""), (OK, 16, "")],
    ),
    // an exception thrown and caught in each thread: its handler is a landing pad, which no
    // patch may cover
    (
        "cpp_exceptions.cpp",
        [(OK, 10, ""), (OK, 10, ""), (OK, 10, "")],
    ),
];

#[test]
fn cpp_programs_have_exact_verdicts_per_model() {
    let scratch = Scratch::new("cpp");
    let mut failures = Vec::new();
    for (program, expect) in CASES {
        for cxx in ["g++", "clang++"] {
            let bin = compile(&scratch, &source(program), cxx, &["-std=c++20", "-O2"]);
            for (model, &(verdict, executions, kind)) in ["sc", "tso", "pso"].iter().zip(expect) {
                let r = check(&bin, model, &[]);
                let got = (
                    r.verdict().to_string(),
                    if verdict == OK { r.executions() } else { 0 },
                    r.error_kind().unwrap_or("").to_string(),
                );
                if got != (verdict.to_string(), executions, kind.to_string()) {
                    failures.push(format!(
                        "{program} {cxx} {model}: {got:?}, expected {:?}\n{}{}",
                        (verdict, executions, kind),
                        r.stdout,
                        r.stderr
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Two threads that both see the flag clear both throw: a handler's count that expects one
/// catch fails under every model, the exceptions caught in instrumented code.
#[test]
fn exceptions_caught_in_every_thread_are_explored() {
    let scratch = Scratch::new("cpp-exceptions");
    for cxx in ["g++", "clang++"] {
        let flags = ["-std=c++20", "-O2", "-DONE_CATCH"];
        let bin = compile(&scratch, &source("cpp_exceptions.cpp"), cxx, &flags);
        for model in ["sc", "tso", "pso", "ra"] {
            let r = check(&bin, model, &[]);
            assert_eq!(
                r.error_kind(),
                Some("assertion"),
                "{cxx} {model}: {}{}",
                r.stdout,
                r.stderr
            );
        }
    }
}

/// The landing pads read from the exception tables of g++ and clang++ builds are where an
/// instruction of a function of the symbol table begins, and the function that catches has
/// one.
#[test]
fn exception_tables_give_landing_pads_at_instructions() {
    use iced_x86::{Decoder, DecoderOptions};
    let scratch = Scratch::new("cpp-landing-pads");
    for cxx in ["g++", "clang++"] {
        let bin = compile(&scratch, &source("cpp_exceptions.cpp"), cxx, &["-O2"]);
        let program = Program::parse(&bin, &std::fs::read(&bin).unwrap()).unwrap();
        // (with its cold part, where g++ puts the handler)
        let work = program.functions_prefixed("_ZL4worki");
        assert!(!work.is_empty(), "{cxx}: no symbol for work()");
        let mut in_work = 0;
        for section in &program.code {
            assert!(!section.functions.is_empty(), "{cxx}: tables not read");
            for &pad in &section.landing_pads {
                let f = section.symbols.partition_point(|f| f.0 <= pad);
                let (lo, hi) = section.symbols[f - 1];
                assert!(pad < hi, "{cxx}: pad {pad:#x} outside its function");
                let from = (lo - section.addr) as usize;
                let to = (hi - section.addr) as usize;
                let mut decoder =
                    Decoder::with_ip(64, &section.bytes[from..to], lo, DecoderOptions::NONE);
                let starts = decoder.iter().any(|i| i.ip() == pad);
                assert!(starts, "{cxx}: pad {pad:#x} inside an instruction");
                in_work += usize::from(work.iter().any(|&(lo, hi)| pad >= lo && pad < hi));
            }
        }
        assert!(in_work > 0, "{cxx}: work() catches, yet has no landing pad");
    }
}

/// An exception nothing catches ends the program through std::terminate: a crash whose message
/// says what was thrown. A .cpp file given as PROGRAM is compiled with the system c++.
#[test]
fn uncaught_exception_is_named() {
    // under tso and pso the type's name is demangled into a block whose bytes the thread's
    // buffer still holds when libstdc++ prints it
    for model in ["sc", "tso", "pso"] {
        let r = check(&source("cpp_uncaught_exception.cpp"), model, &[]);
        assert_eq!(
            r.error_kind(),
            Some("crash"),
            "{model}: {}{}",
            r.stdout,
            r.stderr
        );
        let message = r.error_message();
        assert_eq!(
            message, "uncaught exception std::runtime_error: boom (std::terminate)",
            "{model}"
        );
    }
}

/// A record copied whole between threads under a mutex (accesses of several sizes to the same
/// memory): the same verdict under the graph engine (sc, ra) as under the interleaving engine,
/// and the same executions where it holds; setting a field after the unlock fails everywhere.
#[test]
fn records_copied_between_threads_under_the_graph_engine() {
    let scratch = Scratch::new("cpp-records");
    for (defines, verdict) in [(&[][..], OK), (&["-DLATE_ID"][..], ERROR)] {
        for cxx in ["g++", "clang++"] {
            let mut flags = vec!["-std=c++20", "-O2"];
            flags.extend_from_slice(defines);
            let bin = compile(&scratch, &source("cpp_message_queue.cpp"), cxx, &flags);
            let interleaving = check(&bin, "sc", &[]);
            let graph = check(&bin, "sc", &["--engine", "graph"]);
            let ra = check(&bin, "ra", &[]);
            let ctx = format!(
                "{cxx} {defines:?}: {}{}{}",
                graph.stdout, graph.stderr, ra.stderr
            );
            assert_eq!(interleaving.verdict(), verdict, "{ctx}");
            assert_eq!(graph.verdict(), verdict, "{ctx}");
            assert_eq!(ra.verdict(), verdict, "{ctx}");
            if verdict == OK {
                assert_eq!(graph.executions(), interleaving.executions(), "{ctx}");
            }
        }
    }
}
