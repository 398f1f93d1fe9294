//! Running litmus tests: generate the program, compile it with the system C compiler, and
//! model-check the binary under each requested model. Tests run in parallel on `jobs` threads;
//! results come back in input order.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::{generate, parse, LitmusError, Test, Verdict};
use crate::engine::{self, ExecError};
use crate::supervisor::{self, TempDir};

#[derive(Clone, Debug)]
pub struct Options {
    /// The C compiler for every test, else each architecture's ([`super::Isa::compiler`]).
    pub cc: Option<String>,
    pub exec_timeout: Duration,
    pub max_steps: usize,
    pub buffer_bound: Option<usize>,
    /// Keep the generated C file and binary here instead of a temporary directory.
    pub keep_dir: Option<PathBuf>,
    /// Explore with the graph engine (as every model that has only that one does).
    pub graph: bool,
}

/// The result of one test under one model.
#[derive(Clone, Debug)]
pub struct Checked {
    pub model: String,
    pub verdict: Verdict,
    /// Complete executions explored (herd's Positive + Negative when the counts agree).
    pub executions: u64,
    /// Executions abandoned by the exploration (sleep-set blocked); not part of the count.
    pub blocked: u64,
    pub seconds: f64,
}

/// One litmus file and what came of it.
#[derive(Debug)]
pub struct TestRun {
    pub path: PathBuf,
    /// The parsed test, or why it could not be parsed, generated or compiled.
    pub test: Result<Test, LitmusError>,
    /// Per requested model, in order: the result, or why the check failed.
    pub results: Vec<Result<Checked, String>>,
}

/// The generated program compiled into `dir`.
pub fn compile(test: &Test, cc: Option<&str>, dir: &Path) -> Result<PathBuf, LitmusError> {
    let isa = crate::targets::litmus_isa(&test.arch)
        .ok_or_else(|| LitmusError(format!("architecture `{}` is not supported", test.arch)))?;
    let cc = cc.unwrap_or(isa.compiler());
    let source = generate(test, isa)?;
    let c = dir.join(format!("{}.c", file_stem(&test.name)));
    let exe = dir.join(file_stem(&test.name));
    std::fs::write(&c, source)
        .map_err(|e| LitmusError(format!("cannot write {}: {e}", c.display())))?;
    let out = std::process::Command::new(cc)
        .args(["-O1", "-g", "-w", "-pthread"])
        .arg(&c)
        .arg("-o")
        .arg(&exe)
        .output()
        .map_err(|e| LitmusError(format!("cannot run the C compiler `{cc}`: {e}")))?;
    if !out.status.success() {
        let msg = String::from_utf8_lossy(&out.stderr);
        let first = msg.lines().find(|l| l.contains("error")).unwrap_or("");
        return Err(LitmusError(format!(
            "the generated program does not compile: {first}"
        )));
    }
    Ok(exe)
}

/// A file name for a test name (herd names contain `+` and `.`, which are fine).
fn file_stem(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "+.-_".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Model-check a compiled test under one model.
pub fn check(test: &Test, exe: &Path, model_name: &str, opts: &Options) -> Result<Checked, String> {
    let model = crate::model::named(model_name, opts.buffer_bound)?;
    if model.uses_dependencies() && test.arch != "PPC" {
        return Err(format!("the {model_name} model is for PPC tests"));
    }
    let started = Instant::now();
    let topts = supervisor::Options {
        shared: Vec::new(),
        all_stacks: false,
        engine: None,
        args: Vec::new(),
        exec_timeout: opts.exec_timeout,
        fences_visible: model.fences_visible(),
        buffered: model.buffers().is_some(),
        program_output: false,
        debuggable: false,
        graph: opts.graph || model.graph_only(),
    };
    let (_, mut native) = supervisor::launch(exe, &topts)?;
    let cfg = engine::Config {
        max_steps: opts.max_steps,
        keep_going: false,
        allow_exit_status: false,
        max_executions: None,
        spurious_wakeups: 0,
        nondet_values: engine::DEFAULT_NONDET_VALUES,
        graph: opts.graph || model.graph_only(),
        fair_after: engine::DEFAULT_FAIR_AFTER,
    };
    let mut progress = |_: &crate::results::Stats| !supervisor::interrupted();
    let outcome = match engine::explore(&mut native, model.as_ref(), &cfg, &mut progress) {
        Ok(o) => o,
        Err(ExecError::Interrupted) => return Err("interrupted".into()),
        Err(ExecError::Fatal(msg)) => return Err(msg),
        Err(ExecError::Timeout { .. }) => return Err("time-out".into()),
    };
    drop(native);
    if supervisor::interrupted() {
        return Err("interrupted".into());
    }
    if let Some(cx) = &outcome.error {
        return Err(format!("{}: {}", cx.kind.name(), cx.message));
    }
    if !outcome.shared_found.is_empty() {
        // the generated programs share globals only; a stack access would need a second round
        return Err("a thread accessed another thread's stack".into());
    }
    if outcome.stats.bounded > 0 {
        return Err(format!(
            "{} executions cut at --max-steps",
            outcome.stats.bounded
        ));
    }
    let verdict = Verdict::new(test, &outcome.observations).map_err(|e| e.0)?;
    let recorded = verdict.positive + verdict.negative;
    if recorded != outcome.stats.executions {
        return Err(format!(
            "{} executions but {recorded} final states recorded",
            outcome.stats.executions
        ));
    }
    Ok(Checked {
        model: model_name.to_string(),
        verdict,
        executions: outcome.stats.executions,
        blocked: outcome.stats.blocked,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Parse, compile and check one file under every model.
pub fn run_file(path: &Path, models: &[String], opts: &Options) -> TestRun {
    let fail = |e: LitmusError| TestRun {
        path: path.to_path_buf(),
        test: Err(e),
        results: Vec::new(),
    };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => return fail(LitmusError(format!("cannot read: {e}"))),
    };
    let test = match parse(&text) {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    let tmp;
    let dir = match &opts.keep_dir {
        Some(d) => d.clone(),
        None => match TempDir::new() {
            Ok(d) => {
                tmp = d;
                tmp.0.clone()
            }
            Err(e) => return fail(LitmusError(e)),
        },
    };
    let exe = match compile(&test, opts.cc.as_deref(), &dir) {
        Ok(e) => e,
        Err(e) => return fail(e),
    };
    let results = models.iter().map(|m| check(&test, &exe, m, opts)).collect();
    TestRun {
        path: path.to_path_buf(),
        test: Ok(test),
        results,
    }
}

/// Run every file on `jobs` threads; `each` gets the runs in input order as they complete.
/// Stops starting new tests once the checker is interrupted.
pub fn run_files(
    paths: &[PathBuf],
    models: &[String],
    opts: &Options,
    jobs: usize,
    each: &mut dyn FnMut(TestRun),
) {
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, TestRun)>();
    let cpus = supervisor::thread_cpus();
    std::thread::scope(|s| {
        for k in 0..jobs.clamp(1, paths.len().max(1)) {
            let tx = tx.clone();
            let (next, cpus) = (&next, &cpus);
            // Each worker owns its targets for their whole life: PR_SET_PDEATHSIG fires when
            // the thread that started a process exits. It runs them on a CPU of its own.
            s.spawn(move || {
                if let Some(&cpu) = cpus.get(k % cpus.len().max(1)) {
                    supervisor::pin_thread(cpu);
                }
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= paths.len() || supervisor::interrupted() {
                        break;
                    }
                    if tx.send((i, run_file(&paths[i], models, opts))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut pending = std::collections::BTreeMap::new();
        let mut want = 0;
        for (i, run) in rx {
            pending.insert(i, run);
            while let Some(run) = pending.remove(&want) {
                each(run);
                want += 1;
            }
        }
    });
}

/// The `.litmus` files of `path` (a file, or a directory searched recursively), sorted.
pub fn collect(path: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()?;
        entries.sort();
        for e in entries {
            if e.is_dir() || e.extension().is_some_and(|x| x == "litmus") {
                collect(&e, out)?;
            }
        }
        Ok(())
    } else if path.exists() {
        out.push(path.to_path_buf());
        Ok(())
    } else {
        Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("{}: no such file or directory", path.display()),
        ))
    }
}
