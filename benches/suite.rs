//! The benchmark suite: `cargo bench` (see BENCHMARKS.md).
//!
//! Builds each program with gcc -O2 (a few also -O0; C++ with g++, Rust with rustc -O), runs the release checker on it under each model with
//! `--json`, and prints program, model, verdict, executions, blocked, wall time, executions/s,
//! wall time per visible event, the start-up (until the program stands at main), executions
//! per second of the exploration after it, the checker's peak RSS and that of the worker
//! process that ran the engine. The table is also written as JSON (`target/bench/latest.json`, or
//! `--json FILE`) so that two commits can be compared: `--compare FILE` adds a column with the
//! speed-up in executions/s over that earlier run.
//!
//!     cargo bench -- [--full] [--json FILE] [--compare FILE] [--repeat N] [--against CHECKER]
//!                       [FILTER...]
//!
//! FILTERs keep the rows whose name contains one of them (none matching is an error, and the
//! results file is left as it was). `--full` adds the long rows (the
//! scaling families' largest members). `--repeat N` measures each row N times, the models (and
//! CHECKER) taking turns run by run, and prints the run of median wall time with the median
//! `explore/s`: this VM's host has quiet and busy phases of minutes, in which the same build's
//! rates differ up to 2× (BENCHMARKS.md), so two builds compare only when measured alternately.
//! `--against CHECKER` (another build's smc-run: a copy of its binary; builds from before the
//! engine library was embedded need their libsmc_engine.so beside it) is measured
//! the same way and adds a column: this build's median `explore/s` over CHECKER's.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{json, Value};

const MODELS: [&str; 3] = ["sc", "tso", "pso"];

/// One program of the suite: a source, its -D flags, the verdict expected under sc/tso/pso
/// (None: not checked), whether only `--full` runs it, and the checker's workers (`-j`; 1 for
/// the figures of one core).
struct Program {
    group: &'static str,
    source: &'static str,
    defines: Vec<String>,
    expect: Option<Vec<&'static str>>,
    full: bool,
    jobs: usize,
    /// The models it is checked under (`MODELS` unless a row says otherwise).
    models: &'static [&'static str],
    /// Built for ppc64le with the cross compiler, checked under qemu-user.
    ppc64le: bool,
    /// `--engine` (the model's own engine unless a row says otherwise).
    engine: Option<&'static str>,
    /// Built at -O0 (a C program), as programs are while they are debugged: every local in
    /// memory, through the frame pointer.
    unoptimised: bool,
}

fn program(group: &'static str, source: &'static str, defines: &[&str]) -> Program {
    Program {
        group,
        source,
        defines: defines.iter().map(|d| d.to_string()).collect(),
        expect: None,
        full: false,
        jobs: 1,
        models: &MODELS,
        ppc64le: false,
        engine: None,
        unoptimised: false,
    }
}

impl Program {
    fn expect<const N: usize>(mut self, v: [&'static str; N]) -> Program {
        self.expect = Some(v.to_vec());
        self
    }
    fn models(mut self, models: &'static [&'static str]) -> Program {
        self.models = models;
        self
    }
    fn full_only(mut self, full: bool) -> Program {
        self.full = full;
        self
    }
    fn jobs(mut self, jobs: usize) -> Program {
        self.jobs = jobs;
        self
    }
    fn ppc64le(mut self) -> Program {
        self.ppc64le = true;
        self
    }
    fn engine(mut self, engine: &'static str) -> Program {
        self.engine = Some(engine);
        self
    }
    fn unoptimised(mut self) -> Program {
        self.unoptimised = true;
        self
    }
    fn name(&self) -> String {
        let stem = Path::new(self.source)
            .file_stem()
            .unwrap()
            .to_string_lossy();
        let defs: Vec<String> = self
            .defines
            .iter()
            .map(|d| d.trim_start_matches("-D").to_lowercase())
            .collect();
        let jobs = match self.jobs {
            1 => String::new(),
            j => format!(" -j{j}"),
        };
        let jobs = if self.ppc64le {
            format!("{jobs} ppc64le")
        } else {
            jobs
        };
        let jobs = match self.engine {
            Some(e) => format!("{jobs} {e}"),
            None => jobs,
        };
        let jobs = match self.unoptimised {
            true => format!("{jobs} -O0"),
            false => jobs,
        };
        if defs.is_empty() {
            format!("{stem}{jobs}")
        } else {
            format!("{stem}[{}]{jobs}", defs.join(","))
        }
    }
}

const OK: &str = "ok";
const ERR: &str = "error";

fn suite() -> Vec<Program> {
    let mut v = vec![
        // litmus-size programs of the tests
        program("litmus", "tests/programs/sb.c", &[]).expect([OK, ERR, ERR]),
        program("litmus", "tests/programs/sb.c", &["-DFENCES"]).expect([OK, OK, OK]),
        program("litmus", "tests/programs/mp.c", &[]).expect([OK, OK, ERR]),
        program("litmus", "tests/programs/cas_counter.c", &[]).expect([OK, OK, OK]),
        program("litmus", "tests/programs/mutex_counter.c", &[]).expect([OK, OK, OK]),
        program("litmus", "tests/programs/racy_counter.c", &[]).expect([ERR, ERR, ERR]),
        // the standard libraries' threads, locks and condition variables
        program("c++", "tests/programs/cpp_mutex_condvar.cpp", &[]).expect([OK, OK, OK]),
        program("rust", "tests/programs/rust_mutex_condvar.rs", &[]).expect([OK, OK, OK]),
        // the TACAS'15 algorithms, without and with their fences
        program("tacas", "examples/dekker.c", &[]).expect([OK, ERR, ERR]),
        program("tacas", "examples/dekker.c", &["-DFENCES"]).expect([OK, OK, OK]),
        program("tacas", "examples/peterson.c", &[]).expect([OK, ERR, ERR]),
        program("tacas", "examples/peterson.c", &["-DFENCES"]).expect([OK, OK, OK]),
        program("tacas", "examples/lamport.c", &[]).expect([OK, ERR, ERR]),
        program("tacas", "examples/lamport.c", &["-DFENCES"]).expect([OK, OK, OK]),
        program("tacas", "examples/szymanski.c", &[]).expect([OK, ERR, ERR]),
        program("tacas", "examples/szymanski.c", &["-DFENCES"]).expect([OK, OK, OK]),
        program("tacas", "examples/parker.c", &[]).expect([OK, ERR, ERR]),
        program("tacas", "examples/parker.c", &["-DFENCES"]).expect([OK, OK, OK]),
        program("tacas", "examples/pgsql_latch.c", &[]).expect([OK, OK, ERR]),
        program("tacas", "examples/pgsql_latch.c", &["-DFENCES"]).expect([OK, OK, OK]),
        program("tacas", "examples/dcl_singleton.c", &[]).expect([OK, OK, ERR]),
        program("tacas", "examples/dcl_singleton.c", &["-DFENCES"]).expect([OK, OK, OK]),
        program("tacas", "examples/indexer.c", &[]).expect([OK, OK, OK]),
        program("tacas", "examples/stack_safe.c", &[]).expect([OK, OK, OK]),
        program("tacas", "examples/stack_unsafe.c", &[]).expect([ERR, ERR, ERR]),
        program("tacas", "benches/programs/fib.c", &["-DNUM=2", "-DJOIN"]).expect([OK, OK, OK]),
        program("tacas", "benches/programs/fib.c", &["-DNUM=3", "-DJOIN"]).expect([OK, OK, OK]),
        program("tacas", "benches/programs/fib.c", &["-DNUM=2"]).expect([OK, OK, OK]),
        // without join the exit comes last: as many executions as joining after the check
        program("tacas", "benches/programs/fib.c", &["-DNUM=3"]).expect([OK, OK, OK]),
        program("tacas", "benches/programs/fib.c", &["-DNUM=4"])
            .expect([OK, OK, OK])
            .full_only(true),
        // parallel: the same exploration on two workers (compare with the row above)
        program("parallel", "benches/programs/fib.c", &["-DNUM=4"])
            .expect([OK, OK, OK])
            .jobs(2)
            .full_only(true),
    ];
    // five threads of loads and stores: executions the interleaving engine ends blocked, and
    // the graph engine's same count with none
    for engine in ["interleaving", "graph"] {
        v.push(
            program("blocked", "benches/programs/five_threads.c", &[])
                .expect([OK, OK, OK])
                .engine(engine),
        );
    }
    // the graph engine's workers on it (compare with the graph row)
    v.push(
        program("parallel", "benches/programs/five_threads.c", &[])
            .expect([OK, OK, OK])
            .engine("graph")
            .jobs(2)
            .full_only(true),
    );
    // scaling: how time grows with executions and events
    for n in 2..=8 {
        let d = format!("-DN={n}");
        v.push(program("scaling", "benches/programs/writers.c", &[&d]).full_only(n > 4));
    }
    // release/acquire (the graph engine over weak traces): Tracer's families
    for n in 2..=8 {
        let d = format!("-DN={n}");
        v.push(
            program("ra", "tests/programs/ra/writers.c", &[&d])
                .models(&["ra"])
                .expect([OK])
                .full_only(n > 5),
        );
    }
    for n in [2, 5, 10, 20] {
        let d = format!("-DN={n}");
        v.push(
            program("ra", "tests/programs/ra/two_writers.c", &[&d])
                .models(&["ra"])
                .expect([OK])
                .full_only(n > 5),
        );
    }
    for n in [4, 6, 7, 8] {
        let d = format!("-DN={n}");
        v.push(
            program("ra", "benches/programs/sigma.c", &[&d])
                .models(&["ra"])
                .expect([OK])
                .full_only(n > 6),
        );
    }
    // built -O0: locals through the frame pointer, which are the thread's own stack
    v.push(
        program("ra", "benches/programs/sigma.c", &["-DN=6"])
            .models(&["ra"])
            .expect([OK])
            .unoptimised(),
    );
    v.push(
        program("scaling", "benches/programs/writers.c", &["-DN=4"])
            .expect([OK, OK, OK])
            .unoptimised(),
    );
    // the graph engine's workers: each visits the top, and claims graphs below it
    v.push(
        program("parallel", "benches/programs/sigma.c", &["-DN=8"])
            .models(&["ra"])
            .expect([OK])
            .jobs(2)
            .full_only(true),
    );
    // ~20,000 events an execution, most on words one thread writes: the work per event
    v.push(
        program("ra", "tests/programs/ra/long_loops.c", &[])
            .models(&["ra"])
            .expect([OK]),
    );
    // long executions of locked increments, each on a word one thread touches: the graph
    // engine's work per update
    v.push(
        program("updates", "benches/programs/increments.c", &["-DN=3000"])
            .expect([OK, OK, OK])
            .engine("graph"),
    );
    v.push(
        program("updates", "benches/programs/increments.c", &["-DN=3000"])
            .models(&["ra"])
            .expect([OK]),
    );
    v.push(
        program("ra", "tests/programs/tso/iriw.c", &[])
            .models(&["ra"])
            .expect([ERR]),
    );
    // ppc64le binaries under qemu-user (coroutine worker, the engine in the checker)
    v.push(
        program("ppc64le", "tests/programs/sb.c", &[])
            .ppc64le()
            .expect([OK, ERR, ERR]),
    );
    v.push(
        program("ppc64le", "tests/programs/mp.c", &[])
            .ppc64le()
            .expect([OK, OK, ERR]),
    );
    v.push(
        program("ppc64le", "tests/programs/cas_counter.c", &[])
            .ppc64le()
            .expect([OK, OK, OK]),
    );
    v.push(
        program("ppc64le", "benches/programs/fib.c", &["-DNUM=2", "-DJOIN"])
            .ppc64le()
            .models(&["sc"])
            .expect([OK]),
    );
    // long enough for a sustained rate (the first executions translate the code)
    v.push(
        program("ppc64le", "benches/programs/writers.c", &["-DN=5"])
            .ppc64le()
            .models(&["sc", "tso"])
            .expect([OK, OK]),
    );
    v.push(
        program("ppc64le", "benches/programs/fib.c", &["-DNUM=4"])
            .ppc64le()
            .models(&["sc"])
            .expect([OK])
            .full_only(true),
    );
    // the POWER model (the graph engine, the binary's dependencies); RSMC's SB+10W
    v.push(
        program("power", "tests/programs/sb.c", &[])
            .ppc64le()
            .models(&["power"])
            .expect([ERR]),
    );
    v.push(
        program("power", "benches/programs/sb10w.c", &["-DSYNCS"])
            .ppc64le()
            .models(&["power"])
            .expect([OK]),
    );
    for stores in [2, 4] {
        let d = format!("-DSTORES={stores}");
        v.push(
            program("power", "benches/programs/sb10w.c", &[&d])
                .ppc64le()
                .models(&["power"])
                .expect([OK]),
        );
    }
    v.push(
        program("power", "benches/programs/sb10w.c", &[])
            .ppc64le()
            .models(&["power"])
            .expect([OK])
            .full_only(true),
    );
    // the default on this machine's two cores (RSMC's 161 s was one)
    v.push(
        program("power", "benches/programs/sb10w.c", &[])
            .ppc64le()
            .models(&["power"])
            .expect([OK])
            .jobs(2)
            .full_only(true),
    );
    for t in 10..=16 {
        let d = format!("-DTHREADS={t}");
        v.push(
            program("scaling", "examples/indexer.c", &[&d])
                .expect([OK, OK, OK])
                .full_only(t > 12),
        );
    }
    v
}

/// One measured row: the run of median wall time, and the figures of all its runs.
struct Row {
    name: String,
    group: &'static str,
    model: &'static str,
    verdict: String,
    expected: Option<&'static str>,
    executions: u64,
    blocked: u64,
    events: u64,
    wall_s: f64,
    /// The checker's own figures: its time until the program stood at main, and in all.
    startup_s: f64,
    elapsed_s: f64,
    peak_rss_kib: i64,
    /// The peak of the program's worker process that ran the engine (none with the engine in
    /// the checker).
    worker_rss_kib: Option<u64>,
    /// Every run's wall time and exploration rate (one each without `--repeat`).
    wall_runs: Vec<f64>,
    explore_runs: Vec<f64>,
    /// The same row's exploration rates with `--against`'s checker.
    against_runs: Vec<f64>,
}

impl Row {
    fn key(&self) -> String {
        format!("{} {}", self.name, self.model)
    }
    fn rate(&self) -> f64 {
        self.executions as f64 / self.wall_s.max(1e-9)
    }
    /// Executions per second of the exploration (the start-up left out): the median of the runs.
    fn explore_rate(&self) -> f64 {
        median(&self.explore_runs)
    }
    /// Wall time per visible event, start-up included (the per-event target in BENCHMARKS.md).
    fn us_per_event(&self) -> f64 {
        self.wall_s * 1e6 / (self.events.max(1) as f64)
    }
    fn json(&self) -> Value {
        json!({
            "name": self.name, "group": self.group, "model": self.model,
            "verdict": self.verdict, "expected": self.expected,
            "executions": self.executions, "blocked": self.blocked, "events": self.events,
            "wall_s": self.wall_s, "executions_per_s": self.rate(),
            "us_per_event": self.us_per_event(),
            "startup_s": self.startup_s, "elapsed_s": self.elapsed_s,
            "explore_executions_per_s": self.explore_rate(),
            "peak_rss_kib": self.peak_rss_kib,
            "worker_peak_rss_kib": self.worker_rss_kib,
            "runs": self.wall_runs.len(),
            "wall_s_runs": self.wall_runs,
            "explore_executions_per_s_runs": self.explore_runs,
            "against_explore_executions_per_s_runs": self.against_runs,
        })
    }
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// A run's figures as a row of program `p` under `p.models[m]` (`wall`, `rss`: from wait4).
fn row_of(p: &Program, m: usize, report: &Value, wall: f64, rss: i64) -> Row {
    let executions = report["executions"].as_u64().unwrap_or(0);
    let startup_s = report["startup_s"].as_f64().unwrap_or(0.0);
    let elapsed_s = report["elapsed_s"].as_f64().unwrap_or(wall);
    Row {
        name: p.name(),
        group: p.group,
        model: p.models[m],
        verdict: report["verdict"].as_str().unwrap_or("?").to_string(),
        expected: p.expect.as_ref().map(|e| e[m]),
        executions,
        blocked: report["blocked"].as_u64().unwrap_or(0),
        events: report["events"].as_u64().unwrap_or(0),
        wall_s: wall,
        startup_s,
        elapsed_s,
        peak_rss_kib: rss,
        worker_rss_kib: report["worker_peak_rss_kib"].as_u64(),
        wall_runs: vec![wall],
        explore_runs: vec![executions as f64 / (elapsed_s - startup_s).max(1e-9)],
        against_runs: Vec::new(),
    }
}

/// One row from its runs: the run of median wall time, with every run's figures; None when
/// the runs disagree on the verdict or the number of executions (a nondeterministic checker).
fn combine(mut runs: Vec<Row>, against: Vec<f64>) -> Option<Row> {
    let same = runs
        .iter()
        .all(|r| r.verdict == runs[0].verdict && r.executions == runs[0].executions);
    let walls: Vec<f64> = runs.iter().map(|r| r.wall_s).collect();
    let explores: Vec<f64> = runs.iter().flat_map(|r| r.explore_runs.clone()).collect();
    runs.sort_by(|a, b| a.wall_s.total_cmp(&b.wall_s));
    let mut row = runs.swap_remove(runs.len() / 2);
    row.wall_runs = walls;
    row.explore_runs = explores;
    row.against_runs = against;
    same.then_some(row)
}

/// The processor the figures come from: a VM of the same name may run on another one from day
/// to day (three times slower on one day here), and figures are comparable only on one.
fn machine() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        info.lines()
            .find(|l| l.split(':').next().is_some_and(|k| k.trim() == name))
            .and_then(|l| l.split_once(':'))
            .map_or("?", |(_, v)| v.trim())
    };
    let flags: Vec<&str> = field("flags").split_whitespace().collect();
    let vector = ["avx512f", "avx2"]
        .into_iter()
        .find(|f| flags.contains(f))
        .unwrap_or("sse2");
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!(
        "{} (family {}, model {}), {vector}, {cpus} CPUs",
        field("model name"),
        field("cpu family"),
        field("model")
    )
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Build with gcc -O2 (C; -O0 where the row says), g++ -O2 -std=c++20 (C++) or rustc -O
/// (Rust).
fn build(p: &Program, dir: &Path) -> Result<PathBuf, String> {
    let out = dir.join(p.name().replace(['[', ']', ',', '=', ' '], "_"));
    let (compiler, flags): (&str, &[&str]) = match Path::new(p.source).extension() {
        Some(e) if e == "cpp" => ("g++", &["-O2", "-g", "-pthread", "-std=c++20"]),
        Some(e) if e == "rs" => ("rustc", &["-O", "-g", "--edition", "2021"]),
        _ if p.ppc64le => ("powerpc64le-linux-gnu-gcc", &["-O2", "-g", "-pthread"]),
        _ if p.unoptimised => ("gcc", &["-O0", "-g", "-pthread"]),
        _ => ("gcc", &["-O2", "-g", "-pthread"]),
    };
    let st = Command::new(compiler)
        .args(flags)
        .args(&p.defines)
        .arg(root().join(p.source))
        .arg("-o")
        .arg(&out)
        .status()
        .map_err(|e| format!("cannot run {compiler}: {e}"))?;
    if !st.success() {
        return Err(format!("{compiler} failed on {}", p.source));
    }
    Ok(out)
}

/// Run the checker once; wall time and peak RSS come from wait4 on it. It gets descriptors
/// 0-2 only, as from a shell: whatever else this process inherited (some sandboxes pass
/// descriptors such as 251 to every process) is closed at exec, since the worker's restore
/// after each execution closes the descriptors it opened with close_range, whose cost grows
/// with the highest descriptor open.
fn measure(
    checker: &Path,
    bin: &Path,
    model: &str,
    p: &Program,
) -> Result<(Value, f64, i64), String> {
    use std::os::unix::process::CommandExt;
    let started = Instant::now();
    let mut command = Command::new(checker);
    // SAFETY: one async-signal-safe system call between fork and exec.
    unsafe {
        command.pre_exec(|| {
            libc::syscall(
                libc::SYS_close_range,
                3u32,
                u32::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            );
            Ok(())
        });
    }
    let mut child = command
        .args([
            "--json",
            "--quiet",
            "--model",
            model,
            "-j",
            &p.jobs.to_string(),
        ])
        .args(p.engine.iter().flat_map(|e| ["--engine", e]))
        .arg(bin)
        .current_dir(bin.parent().unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run smc-run: {e}"))?;
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .map_err(|e| e.to_string())?;
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it for our own child, by its PID.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    let wall = started.elapsed().as_secs_f64();
    if pid < 0 {
        return Err(format!("wait4: {}", std::io::Error::last_os_error()));
    }
    let report: Value = out
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .ok_or_else(|| format!("no JSON report (exit status {status:#x})"))?;
    Ok((report, wall, usage.ru_maxrss))
}

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let (mut full, mut json_out, mut compare, mut filters) = (false, None, None, Vec::new());
    let (mut repeat, mut against) = (1usize, None::<PathBuf>);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--full" => full = true,
            "--json" => json_out = args.next().map(PathBuf::from),
            "--compare" => compare = args.next().map(PathBuf::from),
            "--repeat" => {
                repeat = match args.next().and_then(|n| n.parse().ok()) {
                    Some(n) if n >= 1 => n,
                    _ => {
                        eprintln!("--repeat wants a number of runs, at least 1");
                        std::process::exit(2);
                    }
                }
            }
            "--against" => against = args.next().map(PathBuf::from),
            _ => filters.push(a),
        }
    }
    if let Some(c) = against.as_ref().filter(|c| !c.is_file()) {
        eprintln!("--against: no checker at {}", c.display());
        std::process::exit(2);
    }
    let checker = PathBuf::from(env!("CARGO_BIN_EXE_smc-run"));
    let machine = machine();
    println!("machine: {machine}");
    let before: HashMap<String, f64> = compare
        .map(|p| {
            let text =
                std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let v: Value = serde_json::from_str(&text).expect("a results file of this harness");
            if let Some(other) = v["machine"].as_str().filter(|m| *m != machine) {
                println!(
                    "note: {} was measured on another machine: {other}",
                    p.display()
                );
            }
            v["rows"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|r| {
                    (
                        format!(
                            "{} {}",
                            r["name"].as_str().unwrap_or(""),
                            r["model"].as_str().unwrap_or("")
                        ),
                        r["executions_per_s"].as_f64().unwrap_or(0.0),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let dir = root().join("target/bench");
    let bins = dir.join("bin");
    std::fs::create_dir_all(&bins).unwrap();
    let programs: Vec<Program> = suite()
        .into_iter()
        .filter(|p| full || !p.full)
        .filter(|p| filters.is_empty() || filters.iter().any(|f| p.name().contains(f.as_str())))
        .collect();
    if programs.is_empty() {
        // nothing measured: say so, and leave the last results file as it was
        let hint = if full {
            ""
        } else {
            " (rows of --full included?)"
        };
        eprintln!("no benchmark row matches {filters:?}{hint}");
        std::process::exit(2);
    }
    if repeat > 1 || against.is_some() {
        println!(
            "each row: the run of median wall time of {repeat}, median explore/s{}",
            if against.is_some() {
                "; vs: over the median explore/s of the --against checker, run alternately"
            } else {
                ""
            }
        );
    }
    println!(
        "{:<30} {:<5} {:<8} {:>9} {:>7} {:>9} {:>10} {:>8} {:>8} {:>10} {:>9} {:>10}{}{}",
        "program",
        "model",
        "verdict",
        "execs",
        "blocked",
        "wall s",
        "execs/s",
        "us/event",
        "start ms",
        "explore/s",
        "RSS KiB",
        "worker KiB",
        if before.is_empty() { "" } else { "   speed-up" },
        if against.is_some() { "        vs" } else { "" }
    );
    let mut rows = Vec::new();
    let mut mismatches = 0;
    let total = Instant::now();
    for p in &programs {
        let bin = match build(p, &bins) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("{}: {e}", p.name());
                std::process::exit(2);
            }
        };
        let run = |checker: &Path, model: &str| match measure(checker, &bin, model, p) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("{} under {model} ({}): {e}", p.name(), checker.display());
                std::process::exit(2);
            }
        };
        // the models, and the other checker, take turns run by run
        let mut runs: Vec<Vec<Row>> = p.models.iter().map(|_| Vec::new()).collect();
        let mut other: Vec<Vec<f64>> = vec![Vec::new(); p.models.len()];
        // what the other checker counted (a rate compares like with like only if equal)
        let mut other_counts: Vec<Option<(u64, u64)>> = vec![None; p.models.len()];
        for _ in 0..repeat {
            for (m, model) in p.models.iter().enumerate() {
                let (report, wall, rss) = run(&checker, model);
                runs[m].push(row_of(p, m, &report, wall, rss));
                if let Some(c) = &against {
                    let (report, wall, rss) = run(c, model);
                    let o = row_of(p, m, &report, wall, rss);
                    other_counts[m] = Some((o.executions, o.blocked));
                    other[m].extend(o.explore_runs);
                }
            }
        }
        for (m, (runs, other)) in runs.into_iter().zip(other).enumerate() {
            let counts = other_counts[m];
            let Some(row) = combine(runs, other) else {
                eprintln!(
                    "{} under {}: runs differ in verdict or executions",
                    p.name(),
                    p.models[m]
                );
                std::process::exit(1);
            };
            let wrong = row.expected.is_some_and(|e| e != row.verdict);
            mismatches += wrong as usize;
            let speedup = before
                .get(&row.key())
                .map(|b| format!("   {:>7.2}x", row.rate() / b.max(1e-9)))
                .unwrap_or_default();
            let versus = if row.against_runs.is_empty() {
                String::new()
            } else {
                let differ = counts
                    .filter(|&c| c != (row.executions, row.blocked))
                    .map(|(e, b)| format!(" (against: {e} executions, {b} blocked)"))
                    .unwrap_or_default();
                format!(
                    "   {:>6.2}x{differ}",
                    row.explore_rate() / median(&row.against_runs).max(1e-9)
                )
            };
            println!(
                "{:<30} {:<5} {:<8} {:>9} {:>7} {:>9.3} {:>10.0} {:>8.2} {:>8.2} {:>10.0} {:>9} {:>10}{speedup}{versus}{}",
                row.name,
                row.model,
                row.verdict,
                row.executions,
                row.blocked,
                row.wall_s,
                row.rate(),
                row.us_per_event(),
                row.startup_s * 1e3,
                row.explore_rate(),
                row.peak_rss_kib,
                row.worker_rss_kib
                    .map_or_else(|| "-".to_string(), |k| k.to_string()),
                if wrong { "   WRONG VERDICT" } else { "" }
            );
            rows.push(row);
        }
    }
    let execs: u64 = rows.iter().map(|r| r.executions).sum();
    let events: u64 = rows.iter().map(|r| r.events).sum();
    let wall: f64 = rows.iter().map(|r| r.wall_s).sum();
    let startup: f64 = rows.iter().map(|r| r.startup_s).sum();
    println!(
        "{} rows, {execs} executions ({events} events) in {wall:.1} s of checking ({:.0} executions/s, {:.2} us/event overall; start-ups {:.2} s, {:.1} ms each), {:.1} s in all",
        rows.len(),
        execs as f64 / wall.max(1e-9),
        wall * 1e6 / events.max(1) as f64,
        startup,
        startup * 1e3 / rows.len().max(1) as f64,
        total.elapsed().as_secs_f64()
    );
    let commit = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(root())
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let doc = json!({
        "commit": commit,
        "machine": machine,
        "rows": rows.iter().map(Row::json).collect::<Vec<_>>(),
    });
    let out = json_out.unwrap_or_else(|| dir.join("latest.json"));
    std::fs::write(&out, serde_json::to_string_pretty(&doc).unwrap() + "\n").unwrap();
    println!("results: {}", out.display());
    if mismatches > 0 {
        eprintln!("{mismatches} verdict(s) differ from the expected ones");
        std::process::exit(1);
    }
}
