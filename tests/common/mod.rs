//! Shared helpers of the integration tests: build C programs at test time, run the checker,
//! read its JSON.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

pub fn checker() -> &'static str {
    env!("CARGO_BIN_EXE_smc-run")
}

/// A test program (`tests/programs/NAME`), or an example when NAME starts with `examples/`.
pub fn source(name: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    match name.strip_prefix("examples/") {
        Some(n) => example(n),
        None => root.join("tests/programs").join(name),
    }
}

pub fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name)
}

/// A scratch directory for one test, removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(test: &str) -> Scratch {
        // one flat directory whatever the name holds (`examples/peterson` must not nest)
        let test: String = test
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let dir = std::env::temp_dir().join(format!("smc-run-test-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The compilers and flag sets every program is checked under: gcc and clang, at -O0 and -O2.
/// Both are needed (`.ci/setup` installs them): a missing one fails the test that compiles
/// with it, never skips it.
pub fn builds() -> Vec<(&'static str, &'static str)> {
    vec![
        ("gcc", "-O0"),
        ("gcc", "-O2"),
        ("clang", "-O0"),
        ("clang", "-O2"),
    ]
}

pub fn compile(scratch: &Scratch, src: &Path, cc: &str, flags: &[&str]) -> PathBuf {
    compile_in(&scratch.0, src, cc, flags)
}

/// Compile into `dir` (named by source, compiler and flags), with -g -pthread.
pub fn compile_in(dir: &Path, src: &Path, cc: &str, flags: &[&str]) -> PathBuf {
    let stem = src.file_stem().unwrap().to_string_lossy();
    let out = dir.join(format!("{stem}-{cc}{}", flags.join("")));
    let status = Command::new(cc)
        .args(flags)
        .args(["-g", "-pthread"])
        .arg(src)
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap_or_else(|e| {
            panic!("cannot run {cc}: {e} (.ci/setup installs what the tests need)")
        });
    assert!(status.success(), "{cc} {flags:?} {} failed", src.display());
    out
}

/// What one run of the checker said.
pub struct Run {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
    pub json: Option<Value>,
    pub command: String,
}

impl Run {
    pub fn verdict(&self) -> &str {
        self.json
            .as_ref()
            .and_then(|j| j["verdict"].as_str())
            .unwrap_or("<no json>")
    }
    pub fn executions(&self) -> u64 {
        self.json
            .as_ref()
            .and_then(|j| j["executions"].as_u64())
            .unwrap_or(u64::MAX)
    }
    pub fn blocked(&self) -> u64 {
        self.json
            .as_ref()
            .and_then(|j| j["blocked"].as_u64())
            .unwrap_or(u64::MAX)
    }
    /// Executions cut at the step bound.
    pub fn bounded(&self) -> u64 {
        self.json
            .as_ref()
            .and_then(|j| j["bounded"].as_u64())
            .unwrap_or(u64::MAX)
    }
    pub fn error_kind(&self) -> Option<&str> {
        self.json.as_ref().and_then(|j| j["error"]["kind"].as_str())
    }
    /// The first error's message (empty without one).
    pub fn error_message(&self) -> String {
        self.json
            .as_ref()
            .and_then(|j| j["error"]["message"].as_str())
            .unwrap_or("")
            .to_string()
    }
    /// How many executions ended in an error (`--keep-going`: each distinct error's count).
    pub fn error_executions(&self) -> u64 {
        self.json
            .as_ref()
            .and_then(|j| j["errors"].as_array())
            .map(|e| e.iter().filter_map(|e| e["count"].as_u64()).sum())
            .unwrap_or(0)
    }
    /// The kinds of every distinct error found (`--keep-going`), sorted.
    pub fn error_kinds(&self) -> Vec<&str> {
        let mut kinds: Vec<&str> = self
            .json
            .as_ref()
            .and_then(|j| j["errors"].as_array())
            .map(|e| e.iter().filter_map(|e| e["kind"].as_str()).collect())
            .unwrap_or_default();
        kinds.sort();
        kinds
    }
}

/// Run the checker in a directory of its own (removed afterwards), so the schedules it saves
/// by default do not land in the source tree. Paths in `args` must be absolute.
pub fn run(args: &[&str]) -> Run {
    run_in(&Scratch::new(&format!("run-{}", next_run())).0, args)
}

fn next_run() -> usize {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    RUNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
}

/// Run the checker with `dir` as its current directory.
pub fn run_in(dir: &Path, args: &[&str]) -> Run {
    run_env(dir, args, &[])
}

/// Run the checker with `dir` as its current directory and `env` added to its environment.
pub fn run_env(dir: &Path, args: &[&str], env: &[(&str, &Path)]) -> Run {
    let out = Command::new(checker())
        .args(args)
        .current_dir(dir)
        .envs(env.iter().copied())
        .output()
        .expect("cannot run smc-run");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let json = stdout
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok());
    Run {
        status: out.status.code().unwrap_or(-1),
        stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        json,
        command: format!("{} {}", checker(), args.join(" ")),
    }
}

/// Check `binary` under `model` with --json.
pub fn check(binary: &Path, model: &str, extra: &[&str]) -> Run {
    let mut args = vec!["--json", "--model", model];
    args.extend_from_slice(extra);
    let b = binary.to_str().unwrap();
    args.push(b);
    run(&args)
}

/// Check `binary` under sc, tso and pso (with `extra` arguments), expecting `want` (verdict,
/// executions) under each; `context` names the build in a failure.
pub fn check_every_model(binary: &Path, extra: &[&str], want: (&str, u64), context: &str) {
    for model in ["sc", "tso", "pso"] {
        let r = check(binary, model, extra);
        assert_eq!(
            (r.verdict(), r.executions()),
            want,
            "{context} {model}\n{}{}",
            r.stdout,
            r.stderr
        );
    }
}

/// Verdict under one model, and the executions where they are fixed: (interleaving engine,
/// graph engine).
pub type Expect = (&'static str, Option<(u64, u64)>);

/// Check `bin` under sc, tso and pso with both engines, and under ra (graph engine only):
/// the verdict, no execution cut at the step bound, and the executions where given.
pub fn expect_every_model(bin: &std::path::Path, want: [Expect; 4], ctx: &str) {
    let mut failures = Vec::new();
    let runs = ["sc", "tso", "pso", "ra"].into_iter().zip(want);
    for (model, (verdict, executions)) in runs {
        let engines: &[&str] = if model == "ra" {
            &["graph"]
        } else {
            &["interleaving", "graph"]
        };
        for engine in engines {
            let r = check(bin, model, &["--keep-going", "--engine", engine]);
            let n = executions.map(|(interleaving, graph)| {
                if *engine == "graph" {
                    graph
                } else {
                    interleaving
                }
            });
            let ok =
                r.verdict() == verdict && r.bounded() == 0 && n.is_none_or(|n| n == r.executions());
            if !ok {
                failures.push(format!(
                    "{ctx} {model} {engine}: {} with {} executions, {} cut; expected {verdict} \
                     with {n:?}\n{}{}",
                    r.verdict(),
                    r.executions(),
                    r.bounded(),
                    r.stdout,
                    r.stderr
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// PIDs of live processes running `exe`.
pub fn processes_of(exe: &std::path::Path) -> Vec<u32> {
    let mut v = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if std::fs::read_link(entry.path().join("exe")).is_ok_and(|p| p == exe) {
            v.push(pid);
        }
    }
    v
}

/// Build the Rust test program `name` (`tests/programs/NAME`) with rustc -O into `scratch`.
pub fn rustc(scratch: &Scratch, name: &str) -> PathBuf {
    let out = scratch.0.join(name.trim_end_matches(".rs"));
    let status = Command::new("rustc")
        .args(["-O", "-g", "--edition", "2021"])
        .arg(source(name))
        .arg("-o")
        .arg(&out)
        .status()
        .expect("rustc runs");
    assert!(status.success(), "rustc {name} failed");
    out
}

/// A small random C program: two or three threads, each a few statements over three
/// shared words — loads into locals, stores of constants or of what was loaded, branches on a
/// loaded value decided inline, in a called function or through a stack variable, a store
/// made by a called function, an atomic increment — each thread recording its locals, main
/// the final memory, with `__smc_observe`.
pub fn random_program(seed: u64) -> String {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let vars = ["x", "y", "z"];
    let threads = 2 + next(2) as usize;
    let mut text = String::from(
        "#include <pthread.h>\n\
         extern void __smc_observe(unsigned, unsigned long long) __attribute__((weak));\n\
         volatile int x, y, z;\n\
         int seen[3][3];\n\
         __attribute__((noinline)) static int is(int v, int c) { return v == c; }\n\
         __attribute__((noinline)) static void put(volatile int *p, int v) { *p = v; }\n",
    );
    for t in 0..threads {
        text.push_str(&format!(
            "static void *t{t}(void *arg) {{\n    int r0 = 0, r1 = 0, r2 = 0;\n"
        ));
        for _ in 0..2 + next(3) {
            let (v, r, c, c2) = (vars[next(3) as usize], next(3), 1 + next(2), 1 + next(2));
            let stmt = match next(8) {
                0 | 1 => format!("r{r} = {v};"),
                2 => format!("{v} = {c};"),
                3 => format!("{v} = r{r} + {c};"),
                4 => format!("if (r{r} == {c}) {v} = {c2};"),
                5 => format!("if (is(r{r}, {c})) {v} = {c2};"),
                6 => format!("{{ volatile int s = r{r}; if (s == {c}) put(&{v}, {c2}); }}"),
                _ => format!("r{r} = __atomic_fetch_add(&{v}, 1, __ATOMIC_RELAXED);"),
            };
            text.push_str(&format!("    {stmt}\n"));
        }
        text.push_str(&format!(
            "    seen[{t}][0] = r0; seen[{t}][1] = r1; seen[{t}][2] = r2;\n    return arg;\n}}\n"
        ));
    }
    text.push_str(&format!(
        "int main(void) {{\n    pthread_t t[{threads}];\n    void *(*f[])(void *) = {{{}}};\n\
         \x20   for (int i = 0; i < {threads}; i++) pthread_create(&t[i], 0, f[i], 0);\n\
         \x20   for (int i = 0; i < {threads}; i++) pthread_join(t[i], 0);\n\
         \x20   for (int i = 0; i < 9; i++) __smc_observe(i, seen[i / 3][i % 3]);\n\
         \x20   __smc_observe(9, x); __smc_observe(10, y); __smc_observe(11, z);\n\
         \x20   return 0;\n}}\n",
        (0..threads)
            .map(|t| format!("t{t}"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    text
}

/// The final states a program's executions end in (`observations` of `--json`).
pub fn outcomes(r: &Run) -> std::collections::BTreeSet<String> {
    let json = r.json.as_ref().expect("a JSON result");
    json["observations"]
        .as_array()
        .expect("observations")
        .iter()
        .map(|o| o["values"].to_string())
        .collect()
}
