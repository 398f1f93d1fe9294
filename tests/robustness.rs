//! The robustness corpus: inputs a user may point the checker at and programs that misbehave,
//! each with the outcome it must get. After every run: no process of the program left, nothing
//! left in the checker's temporary directory, nothing of ours in /dev/shm.

mod common;

use std::path::{Path, PathBuf};

use common::{compile, compile_in, processes_of, run_env, source, Scratch};

/// What the checker is pointed at.
enum Subject {
    /// A program of tests/robustness/, compiled with gcc -O1 -g and these extra flags.
    Program(&'static str, &'static [&'static str]),
    /// A file made in the scratch directory from a sample binary (a small threaded program).
    Input(&'static str, fn(&Path, &Path) -> PathBuf),
}

/// One corpus entry: what is checked with which arguments, the exit status, and a text the
/// output (stdout or stderr) contains.
struct Case {
    subject: Subject,
    args: &'static [&'static str],
    status: i32,
    says: &'static str,
}

use Subject::{Input, Program};

const fn case(
    subject: Subject,
    args: &'static [&'static str],
    status: i32,
    says: &'static str,
) -> Case {
    Case {
        subject,
        args,
        status,
        says,
    }
}

/// A copy of the sample binary with `patch` applied at `offset`.
fn patched(dir: &Path, sample: &Path, name: &str, offset: usize, patch: &[u8]) -> PathBuf {
    let mut bytes = std::fs::read(sample).unwrap();
    bytes[offset..offset + patch.len()].copy_from_slice(patch);
    write_exe(dir, name, &bytes)
}

fn write_exe(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// A minimal ELF32 i386 executable header: the checker must refuse it before anything else.
fn elf32(dir: &Path, _: &Path) -> PathBuf {
    let mut h = vec![0u8; 52];
    h[..7].copy_from_slice(b"\x7fELF\x01\x01\x01");
    h[16] = 2; // ET_EXEC
    h[18] = 3; // EM_386
    h[20] = 1; // EV_CURRENT
    h[40] = 52; // e_ehsize
    write_exe(dir, "elf32", &h)
}

fn sample(_: &Path, sample: &Path) -> PathBuf {
    sample.to_path_buf()
}

fn missing(dir: &Path, _: &Path) -> PathBuf {
    dir.join("no-such-program")
}

fn directory(dir: &Path, _: &Path) -> PathBuf {
    let d = dir.join("a-directory");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn text(dir: &Path, _: &Path) -> PathBuf {
    write_exe(dir, "notes.txt", b"hello\n")
}

fn empty(dir: &Path, _: &Path) -> PathBuf {
    write_exe(dir, "empty", b"")
}

fn script(dir: &Path, _: &Path) -> PathBuf {
    write_exe(dir, "run.sh", b"#!/bin/sh\necho hi\n")
}

fn truncated(dir: &Path, sample: &Path) -> PathBuf {
    write_exe(dir, "truncated", &std::fs::read(sample).unwrap()[..40])
}

fn cut_after_headers(dir: &Path, sample: &Path) -> PathBuf {
    write_exe(dir, "cut", &std::fs::read(sample).unwrap()[..4096])
}

fn aarch64(dir: &Path, sample: &Path) -> PathBuf {
    patched(dir, sample, "aarch64", 18, &183u16.to_le_bytes())
}

fn ppc64le(dir: &Path, sample: &Path) -> PathBuf {
    patched(dir, sample, "ppc64le", 18, &21u16.to_le_bytes())
}

fn big_endian(dir: &Path, sample: &Path) -> PathBuf {
    patched(dir, sample, "big-endian", 5, &[2])
}

fn not_executable(dir: &Path, sample: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join("not-executable");
    std::fs::copy(sample, &p).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
    p
}

fn shared_library(dir: &Path, _: &Path) -> PathBuf {
    compile_in(dir, &source("sb.c"), "gcc", &["-shared", "-fPIC"])
}

fn c_file(dir: &Path, name: &str, text: &str, flags: &[&str]) -> PathBuf {
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, text).unwrap();
    compile_in(dir, &src, "gcc", flags)
}

fn without_threads(dir: &Path, _: &Path) -> PathBuf {
    c_file(dir, "single", "int main(void) { return 0; }\n", &["-O2"])
}

/// Statically linked, if this machine has a static libc; otherwise a stand-in with the same
/// verdict (an ELF without an interpreter), so the case never silently passes.
fn static_executable(dir: &Path, _: &Path) -> PathBuf {
    let src = dir.join("static.c");
    std::fs::write(&src, "#include <pthread.h>\nint main(void) { return 0; }\n").unwrap();
    let out = dir.join("static");
    let built = std::process::Command::new("gcc")
        .args(["-static", "-O2", "-pthread"])
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .output()
        .is_ok_and(|o| o.status.success());
    if built {
        out
    } else {
        c_file(
            dir,
            "nostdlib",
            "void _start(void) { for (;;) {} }\n",
            &["-static", "-nostdlib"],
        )
    }
}

fn uncompilable_source(dir: &Path, _: &Path) -> PathBuf {
    let p = dir.join("broken.c");
    std::fs::write(&p, "int main(void) { return }\n").unwrap();
    p
}

const CORPUS: &[Case] = &[
    // files that are not programs the checker can run
    case(Input("missing", missing), &[], 2, "no such file"),
    case(Input("directory", directory), &[], 2, "is a directory"),
    case(Input("text", text), &[], 2, "is not an ELF"),
    case(Input("empty", empty), &[], 2, "is not an ELF"),
    case(Input("script", script), &[], 2, "is a script"),
    case(Input("truncated", truncated), &[], 2, "malformed ELF"),
    case(Input("cut", cut_after_headers), &[], 2, "malformed"),
    case(Input("elf32", elf32), &[], 2, "is a 32-bit program"),
    case(Input("aarch64", aarch64), &[], 2, "is built for AARCH64"),
    case(
        Input("ppc64le", ppc64le),
        &[],
        2,
        "Invalid ELF image for this architecture",
    ),
    case(Input("big-endian", big_endian), &[], 2, "malformed ELF"),
    case(
        Input("not-executable", not_executable),
        &[],
        2,
        "Permission denied",
    ),
    case(
        Input("shared-library", shared_library),
        &[],
        2,
        "shared library",
    ),
    case(
        Input("static", static_executable),
        &[],
        2,
        "is statically linked",
    ),
    case(
        Input("no-threads", without_threads),
        &[],
        2,
        "does not create threads",
    ),
    case(
        Input("broken-c", uncompilable_source),
        &[],
        2,
        "compilation failed",
    ),
    // arguments that make no sense
    case(
        Input("model", sample),
        &["--model", "weird"],
        2,
        "unknown model `weird`",
    ),
    case(
        Input("timeout", sample),
        &["--exec-timeout", "soon"],
        2,
        "invalid value 'soon' for '--exec-timeout",
    ),
    case(
        Input("option", sample),
        &["--bogus"],
        2,
        "unexpected argument '--bogus'",
    ),
    case(
        Input("jobs", sample),
        &["-j", "0"],
        2,
        "--jobs must be at least 1",
    ),
    case(
        Input("shard-zero", sample),
        &["--shard", "0/3"],
        2,
        "`0/3` is not K/N with 1 <= K <= N",
    ),
    case(
        Input("shard-past", sample),
        &["--shard", "4/3"],
        2,
        "`4/3` is not K/N",
    ),
    case(
        Input("shard-text", sample),
        &["--shard", "half"],
        2,
        "`half` is not K/N",
    ),
    // programs that misbehave
    case(
        Program("exit_status", &[]),
        &[],
        1,
        "ERROR (exit): the program exited with status 3",
    ),
    case(
        Program("exit_status", &[]),
        &["--allow-exit-status"],
        0,
        "verdict: OK",
    ),
    case(
        Program("calls_fork", &[]),
        &[],
        2,
        "the program calls fork()",
    ),
    case(
        Program("calls_system", &[]),
        &[],
        2,
        "the program calls system()",
    ),
    case(
        Program("calls_exec", &[]),
        &[],
        2,
        "the program calls execl()",
    ),
    case(
        Program("own_segv_handler", &[]),
        &[],
        1,
        "ERROR (crash): SIGSEGV",
    ),
    case(
        Program("own_trap_handler", &[]),
        &[],
        1,
        "Assertion `counter == 2' failed",
    ),
    case(
        Program("blocks_signals", &[]),
        &[],
        1,
        "Assertion `counter == 2' failed",
    ),
    case(
        Program("closes_fds", &[]),
        &[],
        1,
        "Assertion `counter == 2' failed",
    ),
    case(
        Program("dup2_fds", &[]),
        &[],
        1,
        "Assertion `counter == 2' failed",
    ),
    case(
        Program("differs_each_run", &[]),
        &[],
        2,
        "the program behaved differently when replayed",
    ),
    case(
        Program("reads_stdin", &[]),
        &[],
        1,
        "Assertion `counter == 2' failed",
    ),
    case(Program("floods_output", &[]), &[], 0, "executions: 1 "),
    case(
        Program("floods_output", &[]),
        &["--model", "tso"],
        0,
        "verdict: OK",
    ),
    // the failing execution's output is in the counterexample, cut at 1 MiB
    case(
        Program("prints_then_fails", &[]),
        &[],
        1,
        // this execution's output only, from its first line
        "bytes):\n    | starting\n    | counter is 1\n",
    ),
    case(
        Program("floods_then_fails", &[]),
        &[],
        1,
        "(last 4096 of 1048576 bytes, cut there)",
    ),
    case(Program("many_threads", &[]), &[], 0, "executions: 1 "),
    case(Program("thread_local", &[]), &[], 0, "executions: 1 "),
    // five locations, each incremented atomically by two threads in either order: 2^5
    case(Program("atomic_widths", &[]), &[], 0, "executions: 32 "),
    case(
        Program("atomic_widths", &[]),
        &["--model", "pso"],
        0,
        "verdict: OK",
    ),
    // the load before or after the other thread's single vector store
    case(Program("sse_shared", &[]), &[], 0, "executions: 2 "),
    case(
        Program("sse_shared", &[]),
        &["--model", "pso"],
        0,
        "executions: 2 ",
    ),
    // registers, flags and red zone survive the hook of a visible access
    case(
        Program("keeps_registers", &[]),
        &["--model", "sc"],
        0,
        "executions: 5 ",
    ),
    case(Program("keeps_registers", &[]), &[], 0, "verdict: OK"),
    // the same without any instruction beyond SSE: the hook saves only xmm0-15 and MXCSR
    case(
        Program("keeps_registers", &["-DSSE_ONLY"]),
        &["--model", "sc"],
        0,
        "executions: 5 ",
    ),
    case(
        Program("keeps_registers", &["-DSSE_ONLY"]),
        &["--model", "tso"],
        0,
        "verdict: OK",
    ),
    case(Program("avx_shared", &["-mavx2"]), &[], 0, "executions: 2 "),
    case(
        Program("avx_shared", &["-mavx2"]),
        &["--model", "tso"],
        0,
        "executions: 2 ",
    ),
    case(Program("rep_movs", &[]), &[], 0, "executions: 1 "),
    case(
        Program("stack_overflow", &[]),
        &[],
        1,
        "ERROR (crash): the program was killed by signal 11",
    ),
    case(
        Program("stores_to_address_zero", &[]),
        &[],
        1,
        "ERROR (crash): SIGSEGV (segmentation fault) at address 0x0",
    ),
    case(
        Program("divides_by_zero", &[]),
        &[],
        1,
        "ERROR (crash): SIGFPE",
    ),
    case(
        Program("aborts_in_thread", &[]),
        &[],
        1,
        "ERROR (crash): abort() called",
    ),
    case(
        Program("kills_itself", &[]),
        &[],
        1,
        "killed by signal 9 (SIGKILL)",
    ),
    case(Program("alarm_fires", &[]), &[], 1, "killed by signal 14"),
    case(
        Program("kills_parent", &[]),
        &[],
        2,
        "fork server died during an execution",
    ),
    case(
        Program("sleeps_forever", &[]),
        &["--exec-timeout", "0.5"],
        1,
        "ERROR (hang): T1 ran past the per-execution time limit",
    ),
    // the thread's store before or after the process ends with it
    case(Program("exits_in_thread", &[]), &[], 0, "executions: 1 "),
    case(Program("main_exits_early", &[]), &[], 0, "executions: 2 "),
    case(Program("returns_while_running", &[]), &[], 0, "verdict: OK"),
    case(
        Program("scribbles_channel", &[]),
        &[],
        2,
        "channel corrupted",
    ),
];

/// Entries of /dev/shm that could be ours.
fn shm_entries() -> Vec<String> {
    std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.contains("smc"))
                .collect()
        })
        .unwrap_or_default()
}

/// Run `cases`; `extra` goes before each case's own arguments.
fn run_cases(cases: &[&Case], name: &str, extra: &[&'static str]) {
    run_cases_built_by(cases, name, extra, "gcc")
}

/// Run `cases`, their programs compiled with `cc`.
fn run_cases_built_by(cases: &[&Case], name: &str, extra: &[&'static str], cc: &str) {
    let scratch = Scratch::new(name);
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/robustness");
    let sample = compile(&scratch, &source("sb.c"), "gcc", &["-O1"]);
    let shm_before = shm_entries();
    let mut failures = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let work = scratch.0.join(format!("case{i}"));
        let tmp = work.join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let (label, subject) = match &c.subject {
            Program(name, flags) => {
                let mut f = vec!["-O1", "-g"];
                f.extend_from_slice(flags);
                (
                    name.to_string(),
                    compile(&scratch, &dir.join(format!("{name}.c")), cc, &f),
                )
            }
            Input(name, make) => (name.to_string(), make(&work, &sample)),
        };
        let mut args = extra.to_vec();
        args.extend_from_slice(c.args);
        if !args.contains(&"--model") {
            args.extend(["--model", "sc"]);
        }
        let s = subject.to_str().unwrap();
        args.push(s);
        let r = run_env(&work, &args, &[("TMPDIR", &tmp)]);
        let out = format!("{}{}", r.stdout, r.stderr);
        let label = format!("{label} {:?}", c.args);
        if r.status != c.status || !out.contains(c.says) {
            failures.push(format!(
                "{label}: status {} (want {}), output does not say `{}`:\n{}",
                r.status,
                c.status,
                c.says,
                out.lines().take(5).collect::<Vec<_>>().join("\n")
            ));
        }
        // one line of ours, last; a C file's compiler diagnostics come before it
        let ours = r
            .stderr
            .lines()
            .filter(|l| l.starts_with("smc-run: "))
            .count();
        let last_is_ours = r
            .stderr
            .lines()
            .last()
            .is_some_and(|l| l.starts_with("smc-run: "));
        let lines_ok =
            ours == 1 && last_is_ours && (s.ends_with(".c") || r.stderr.lines().count() == 1);
        if r.status == 2 && !lines_ok {
            failures.push(format!("{label}: not one line on stderr: {}", r.stderr));
        }
        if out.contains("panicked") {
            failures.push(format!("{label}: the checker panicked"));
        }
        let left = processes_of(&subject);
        if !left.is_empty() {
            failures.push(format!("{label}: processes left behind: {left:?}"));
        }
        let files: Vec<_> = std::fs::read_dir(&tmp).unwrap().flatten().collect();
        if !files.is_empty() {
            failures.push(format!("{label}: files left in TMPDIR: {files:?}"));
        }
    }
    let shm_after = shm_entries();
    if shm_after != shm_before {
        failures.push(format!("/dev/shm changed: {shm_before:?} -> {shm_after:?}"));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn corpus_is_large_enough() {
    assert!(CORPUS.len() >= 30, "{} cases", CORPUS.len());
}

#[test]
fn bad_inputs_are_one_line_and_status_2() {
    let cases: Vec<&Case> = CORPUS
        .iter()
        .filter(|c| matches!(c.subject, Input(..)))
        .collect();
    run_cases(&cases, "inputs", &[]);
}

#[test]
fn misbehaving_programs_are_reported_not_obeyed() {
    let cases: Vec<&Case> = CORPUS
        .iter()
        .filter(|c| matches!(c.subject, Program(..)))
        .collect();
    run_cases(&cases, "programs", &[]);
}

#[test]
fn misbehaving_programs_are_reported_not_obeyed_by_the_engine_in_the_worker() {
    // one job: the worker process runs the exploration, and the program shares its process
    // with the engine
    let cases: Vec<&Case> = CORPUS
        .iter()
        .filter(|c| matches!(c.subject, Program(..)) && !c.args.contains(&"-j"))
        .collect();
    run_cases(&cases, "programs-worker-engine", &["-j", "1"]);
}

/// The same programs built for ppc64le and run under qemu-user, but for those about x86-64's
/// own registers, instructions and traps.
#[test]
fn misbehaving_ppc64le_programs_are_reported_not_obeyed() {
    const X86_ONLY: &[&str] = &[
        "avx_shared",
        "sse_shared",
        "keeps_registers",
        "rep_movs",
        "differs_each_run",
        "atomic_widths",
        "divides_by_zero", // POWER's divw does not trap
    ];
    let cases: Vec<&Case> = CORPUS
        .iter()
        .filter(|c| matches!(c.subject, Program(name, _) if !X86_ONLY.contains(&name)))
        .collect();
    run_cases_built_by(&cases, "programs-ppc64le", &[], "powerpc64le-linux-gnu-gcc");
}

/// Which hook the register cases above exercise: the checker finds wide register state (AVX)
/// in keeps_registers and none in its SSE-only build, whose hooks then save less. With
/// SMC_HOOK_SCRAMBLE the hook of an SSE-only program resets that state (AVX, AVX-512, x87) on
/// its way out, as its own code might: both builds must still keep their registers (the AVX
/// one only because its hooks save everything).
#[test]
fn register_cases_take_both_hooks() {
    use smc_run::instrument::Plan;
    use smc_run::program::Program as Binary;
    use smc_run::targets::x86_64::X86_64;
    let scratch = Scratch::new("robustness-wide-state");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/robustness/keeps_registers.c");
    for (flags, wide) in [(&["-O1"][..], true), (&["-O1", "-DSSE_ONLY"][..], false)] {
        let bin = compile(&scratch, &src, "gcc", flags);
        let program = Binary::parse(&bin, &std::fs::read(&bin).unwrap()).unwrap();
        assert_eq!(
            Plan::new(&program, &X86_64, false).wide_state,
            wide,
            "{flags:?}"
        );
        for model in ["sc", "tso"] {
            let bin = bin.to_str().unwrap();
            let r = run_env(
                &scratch.0,
                &["--model", model, bin],
                &[("SMC_HOOK_SCRAMBLE", Path::new("1"))],
            );
            assert_eq!(r.status, 0, "{flags:?} {model}: {}", r.stdout);
            assert!(r.stdout.contains("verdict: OK"), "{}", r.stdout);
        }
    }
}

/// A call on a pthread object that the checker keeps but does not model stops the check with
/// one line naming it (exit 2), under either engine, rather than libc's code on a real object
/// the execution never touched (a lock taken behind the engine's back, a hang in the kernel, a
/// stale count). A barrier destroyed after use is modelled: no error.
#[test]
fn calls_the_checker_does_not_model_are_named() {
    let scratch = Scratch::new("unmodelled-calls");
    let calls = [
        (0, None),
        (1, Some("pthread_mutex_timedlock()")),
        (2, Some("sem_timedwait()")),
        (3, Some("sem_getvalue()")),
        (4, Some("pthread_cancel()")),
        (5, Some("pthread_timedjoin_np()")),
    ];
    for (call, named) in calls {
        let define = format!("-DCALL={call}");
        let bin = compile(
            &scratch,
            &source("unmodelled_calls.c"),
            "gcc",
            &["-O2", &define],
        );
        for (model, engine) in [("sc", "interleaving"), ("ra", "graph")] {
            let r = common::check(&bin, model, &["--engine", engine, "-j", "1"]);
            let ctx = format!("CALL={call} {model} {engine}: {}{}", r.stdout, r.stderr);
            match named {
                None => assert_eq!((r.status, r.verdict()), (0, "ok"), "{ctx}"),
                Some(name) => {
                    assert_eq!(r.status, 2, "{ctx}");
                    assert!(
                        r.stderr.contains(name) && r.stderr.contains("does not model this call"),
                        "{ctx}"
                    );
                    assert_eq!(r.stderr.trim().lines().count(), 1, "{ctx}");
                }
            }
        }
    }
}
