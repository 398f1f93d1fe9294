//! `smc-run`: the command line.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;

use smc_run::engine::parallel::{self, Jobs, Shard};
use smc_run::engine::{self, ExecError};
use smc_run::litmus::{self, expect::Expectations};
use smc_run::model;
use smc_run::report::{self, schedule::Schedule, Symbolizer};
use smc_run::target::{self, NativeTarget, Options, TempDir};

const EXIT_OK: u8 = 0;
const EXIT_ERROR_FOUND: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_BOUNDED: u8 = 3;
const EXIT_INTERRUPTED: u8 = 130;

/// Stateless model checker for compiled pthreads programs: explores every inequivalent
/// interleaving of the program's threads and reports an assertion failure, crash, deadlock
/// or hang with the interleaving that leads to it.
///
/// Exit status: 0 no error is reachable; 1 an error was found; 2 usage or input error;
/// 3 no error found but some executions were cut by a bound.
///
/// Litmus tests: `smc-run litmus --help`. Shards of a check: `smc-run combine --help`.
#[derive(Parser, Debug)]
#[command(name = "smc-run", version, about, long_about)]
struct Cli {
    /// The program: an x86-64 ELF executable (dynamically linked, PIE or not, stripped or
    /// not), or a C file, compiled first with `cc -g -O2 -pthread`.
    #[arg(required_unless_present = "verifier_dir")]
    program: Option<PathBuf>,

    /// Arguments passed to the program.
    #[arg(last = true)]
    args: Vec<OsString>,

    /// Memory model: tso (total store order, what x86-64 runs; the default), pso (partial store
    /// order: stores to different locations may also be reordered), or sc (sequential
    /// consistency). With --replay: the schedule's model.
    #[arg(short, long)]
    model: Option<String>,

    #[command(flatten)]
    bounds: Bounds,

    /// Do not stop at the first error: explore every execution and report each distinct error
    /// once, with how many executions end in it, and the first counterexample.
    #[arg(long)]
    keep_going: bool,

    /// An execution whose process exits with a non-zero status is not an error (by default it
    /// is one, of kind "exit").
    #[arg(long)]
    allow_exit_status: bool,

    /// Workers exploring in parallel, each with its own process of the program on a CPU of its
    /// own (default: every CPU this process may use). The executions counted are the same for
    /// any N; with N > 1 which counterexample is found first may differ between runs.
    #[arg(short = 'j', long, value_name = "N")]
    jobs: Option<usize>,

    /// Explore part K of N (K = 1..N) of the exploration, for running one check on N machines
    /// (CI matrix, Slurm array, GNU parallel); `smc-run combine` adds up their --json results
    /// into one verdict.
    #[arg(long, value_name = "K/N", value_parser = parse_shard, conflicts_with = "replay")]
    shard: Option<Shard>,

    /// Print one JSON object (schema in README.md) as the last line of stdout.
    #[arg(long)]
    json: bool,

    /// Print only the verdict line (and the JSON object with --json).
    #[arg(short, long)]
    quiet: bool,

    /// C compiler used for a .c PROGRAM.
    #[arg(long, default_value = "cc")]
    cc: String,

    /// Where to save the failing schedule (default: PROGRAM's name with `.schedule`, in the
    /// current directory; with --keep-going, further distinct errors get `.2`, `.3`...).
    #[arg(long, value_name = "FILE")]
    schedule: Option<PathBuf>,

    /// Re-run PROGRAM forced along a saved schedule, with the program's own output visible,
    /// and report the error again.
    #[arg(long, value_name = "FILE")]
    replay: Option<PathBuf>,

    /// With --replay: stop the program just before its failing event and attach gdb to it
    /// (or print the gdb command when gdb is not installed).
    #[arg(long, requires = "replay")]
    gdb: bool,

    /// Write the failing execution as a Graphviz graph to FILE (render: dot -Tsvg FILE).
    #[arg(long, value_name = "FILE")]
    dot: Option<PathBuf>,

    /// Write the SV-COMP header (smc_verifier.h) and stub library (libsmc_verifier.so) to DIR
    /// and exit.
    #[arg(long, value_name = "DIR")]
    verifier_dir: Option<PathBuf>,
}

fn parse_shard(s: &str) -> Result<Shard, String> {
    let bad = || format!("`{s}` is not K/N with 1 <= K <= N");
    let (k, n) = s.split_once('/').ok_or_else(bad)?;
    let (k, n): (u64, u64) = (k.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
    if k == 0 || k > n {
        return Err(bad());
    }
    Ok(Shard {
        index: k - 1,
        count: n,
    })
}

/// A one-line error for the user, with exit status 2.
struct UsageError(String);

impl From<String> for UsageError {
    fn from(s: String) -> Self {
        UsageError(s)
    }
}

/// Bounds of the exploration, shared by programs and litmus tests.
#[derive(clap::Args, Debug)]
struct Bounds {
    /// At most N pending stores per store buffer (tso, pso); a store into a full buffer waits
    /// for the oldest to reach memory. 0 is sequential consistency. Default: unbounded.
    #[arg(long, value_name = "N")]
    buffer_bound: Option<usize>,

    /// Visible events per execution before the execution is cut (a program's verdict then says
    /// "bounded" unless an error is found; a litmus test is an error).
    #[arg(long, default_value_t = engine::DEFAULT_MAX_STEPS)]
    max_steps: usize,

    /// Wall-clock seconds a thread may run without reaching a visible operation (a shared
    /// access or a pthread call); longer is reported as a hang.
    #[arg(long, default_value_t = 10.0)]
    exec_timeout: f64,
}

impl Bounds {
    fn check(&self) -> Result<Duration, UsageError> {
        if !(self.exec_timeout > 0.0 && self.exec_timeout.is_finite()) {
            return Err(UsageError(
                "--exec-timeout must be a positive number of seconds".into(),
            ));
        }
        if self.max_steps == 0 {
            return Err(UsageError("--max-steps must be at least 1".into()));
        }
        Ok(Duration::from_secs_f64(self.exec_timeout))
    }
}

/// Run litmus tests (herd format): generate a C program from each test, compile it, and
/// model-check the binary; print herd7's verdict (final states, Ok/No, the Observation line).
///
/// Exit status: 0 every test was checked (and agrees with --expect); 1 some result differs
/// from --expect; 2 usage error, or some test could not be parsed, compiled or checked.
#[derive(Parser, Debug)]
#[command(name = "smc-run litmus", version, about, long_about)]
struct LitmusCli {
    /// Litmus files, or directories searched for *.litmus files.
    #[arg(required = true)]
    files: Vec<PathBuf>,

    /// Memory models, comma-separated (sc, tso, pso); each test is checked under each.
    #[arg(short, long, default_value = "tso", value_delimiter = ',')]
    model: Vec<String>,

    /// Compare with reference results: a tab-separated table with columns test, model,
    /// observation, positive, negative (and states), such as herd7's in ../shared/litmus.
    #[arg(long, value_name = "TSV")]
    expect: Option<PathBuf>,

    /// Tests checked in parallel (default: the number of cores).
    #[arg(short, long, value_name = "N")]
    jobs: Option<usize>,

    #[command(flatten)]
    bounds: Bounds,

    /// C compiler for the generated programs.
    #[arg(long, default_value = "cc")]
    cc: String,

    /// Keep the generated C files and binaries in DIR.
    #[arg(long, value_name = "DIR")]
    keep: Option<PathBuf>,

    /// Print one JSON object with every result as the last line of stdout.
    #[arg(long)]
    json: bool,

    /// Print only mismatches, errors and the summary.
    #[arg(short, long)]
    quiet: bool,
}

/// Add up the --json results of the N shards of one check (`smc-run --shard K/N --json`) into
/// one verdict.
///
/// Exit status: as for a check (0 no error, 1 an error was found, 3 bounded); 2 when a shard is
/// missing, given twice or from another check, or a file is not a shard's --json output.
#[derive(Parser, Debug)]
#[command(name = "smc-run combine", version, about, long_about)]
struct CombineCli {
    /// The --json output of each shard (its last line is the JSON object).
    #[arg(required = true)]
    files: Vec<PathBuf>,

    /// Print the combined result as one JSON object (the schema of a check, with `shards`,
    /// and `shard` in each error).
    #[arg(long)]
    json: bool,
}

fn run_combine(cli: &CombineCli) -> Result<u8, UsageError> {
    use report::combine;
    let results = cli
        .files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f)
                .map_err(|e| UsageError(format!("{}: {e}", f.display())))?;
            Ok(combine::parse(&f.display().to_string(), &text)?)
        })
        .collect::<Result<Vec<_>, UsageError>>()?;
    let o = combine::combine(&results)?;
    if cli.json {
        println!("{o}");
    } else {
        print!("{}", combine::text(&o));
    }
    Ok(exit_status(o["verdict"].as_str().unwrap_or("")))
}

/// The exit status of a verdict (`report::verdict`).
fn exit_status(verdict: &str) -> u8 {
    match verdict {
        "error" => EXIT_ERROR_FOUND,
        "bounded" => EXIT_BOUNDED,
        _ => EXIT_OK,
    }
}

fn main() -> ExitCode {
    let sub = std::env::args_os().nth(1);
    let result = if sub.as_ref().is_some_and(|a| a == "litmus") {
        parse_args(LitmusCli::try_parse_from(std::env::args_os().skip(1))).map(|cli| {
            install_interrupt_handlers();
            run_litmus(&cli)
        })
    } else if sub.as_ref().is_some_and(|a| a == "combine") {
        parse_args(CombineCli::try_parse_from(std::env::args_os().skip(1))).map(|c| run_combine(&c))
    } else {
        parse_args(Cli::try_parse()).map(|cli| {
            install_interrupt_handlers();
            run(&cli)
        })
    };
    match result {
        Err(code) => code,
        Ok(Ok(code)) => ExitCode::from(code),
        Ok(Err(UsageError(msg))) => {
            eprintln!("smc-run: {msg}");
            ExitCode::from(if target::interrupted() {
                EXIT_INTERRUPTED
            } else {
                EXIT_USAGE
            })
        }
    }
}

/// The parsed arguments, or the exit code after clap printed help, version or an error.
fn parse_args<T>(parsed: Result<T, clap::Error>) -> Result<T, ExitCode> {
    parsed.map_err(|e| {
        if !e.use_stderr() {
            let _ = e.print(); // help or version
            return ExitCode::from(EXIT_OK);
        }
        // one line like every other input error: clap's first line, without its `error: `,
        // and the missing arguments, which clap lists on the lines after it
        use clap::error::{ContextKind, ContextValue, ErrorKind};
        let text = e.render().to_string();
        let first = text.lines().next().unwrap_or("invalid arguments");
        let first = first.strip_prefix("error: ").unwrap_or(first);
        let missing = match (e.kind(), e.get(ContextKind::InvalidArg)) {
            (ErrorKind::MissingRequiredArgument, Some(ContextValue::Strings(args))) => {
                format!(" {}", args.join(" "))
            }
            _ => String::new(),
        };
        eprintln!("smc-run: {first}{missing} (see --help)");
        ExitCode::from(EXIT_USAGE)
    })
}

extern "C" fn on_interrupt(_: libc::c_int) {
    target::interrupt();
}

fn install_interrupt_handlers() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only stores to an atomic.
        unsafe { libc::signal(sig, on_interrupt as *const () as libc::sighandler_t) };
    }
}

fn write_verifier_files(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("smc_verifier.h"), target::VERIFIER_HEADER)?;
    std::fs::write(dir.join("libsmc_verifier.so"), target::VERIFIER_STUB)
}

/// Compile a C file the way the README says, into `dir`.
fn compile_c(cc: &str, src: &Path, dir: &Path) -> Result<PathBuf, UsageError> {
    if !src.is_file() {
        return Err(UsageError(format!("{}: no such file", src.display())));
    }
    write_verifier_files(dir)
        .map_err(|e| UsageError(format!("cannot write to {}: {e}", dir.display())))?;
    let out = dir.join("program");
    let d = dir.display();
    let result = std::process::Command::new(cc)
        .args(["-g", "-O2", "-pthread", &format!("-I{d}")])
        .arg(src)
        .arg("-o")
        .arg(&out)
        .args([
            format!("-L{d}"),
            "-Wl,--as-needed".into(),
            "-lsmc_verifier".into(),
            format!("-Wl,-rpath,{d}"),
        ])
        .output()
        .map_err(|e| UsageError(format!("cannot run the C compiler `{cc}`: {e}")))?;
    if !result.status.success() {
        let _ = std::io::stderr().write_all(&result.stderr);
        return Err(UsageError(format!("{}: compilation failed", src.display())));
    }
    Ok(out)
}

fn run(cli: &Cli) -> Result<u8, UsageError> {
    if let Some(dir) = &cli.verifier_dir {
        write_verifier_files(dir)
            .map_err(|e| UsageError(format!("cannot write to {}: {e}", dir.display())))?;
        if cli.program.is_none() {
            println!(
                "wrote {0}/smc_verifier.h and {0}/libsmc_verifier.so; build with \
                 -I{0} -L{0} -lsmc_verifier -Wl,-rpath,{0}",
                dir.display()
            );
            return Ok(EXIT_OK);
        }
    }
    let replay = match &cli.replay {
        None => None,
        Some(f) => {
            let text = std::fs::read_to_string(f)
                .map_err(|e| UsageError(format!("{}: {e}", f.display())))?;
            Some(Schedule::parse(&text).map_err(|e| UsageError(format!("{}: {e}", f.display())))?)
        }
    };
    let model_name = cli
        .model
        .clone()
        .or_else(|| replay.as_ref().map(|r| r.model.clone()))
        .unwrap_or_else(|| "tso".into());
    let buffer_bound = cli
        .bounds
        .buffer_bound
        .or(replay.as_ref().and_then(|r| r.buffer_bound));
    let model = model::named(&model_name, buffer_bound)?;
    let exec_timeout = cli.bounds.check()?;
    let given = cli.program.as_ref().expect("clap requires PROGRAM");
    let args: Vec<OsString> = match &replay {
        Some(r) if cli.args.is_empty() => r.args.iter().map(OsString::from).collect(),
        _ => cli.args.clone(),
    };
    let mut tmp = None;
    let path = if given.extension().is_some_and(|e| e == "c") {
        let dir = TempDir::new().map_err(UsageError)?;
        let out = compile_c(&cli.cc, given, &dir.0)?;
        tmp = Some(dir);
        out
    } else {
        given.clone()
    };
    // One check runs on one CPU (the supervisor and its program hand over faster there);
    // worker w of -j on the w-th CPU from the one we are on.
    let cpus = target::thread_cpus();
    let workers = match cli.jobs {
        _ if replay.is_some() => 1,
        Some(0) => return Err(UsageError("--jobs must be at least 1".into())),
        Some(n) => n,
        None => cpus.len().max(1),
    };
    // The engine runs inside the program's worker processes, next to the program.
    let engine = (replay.is_none() && !cli.gdb)
        .then(worker_engine_library)
        .flatten();
    let opts = Options {
        args: args.clone(),
        exec_timeout,
        fences_visible: model.fences_visible(),
        buffered: model.buffers().is_some(),
        program_output: replay.is_some(),
        debuggable: cli.gdb,
        engine,
    };
    let here = target::current_cpu()
        .and_then(|c| cpus.iter().position(|&x| x == c))
        .unwrap_or(0);
    let pin = |w: usize| {
        if !cpus.is_empty() {
            target::pin_thread(cpus[(here + w) % cpus.len()]);
        }
    };
    pin(0);
    let started = Instant::now();
    let (program, mut target) = target::launch(&path, &opts)?;
    let startup_s = started.elapsed().as_secs_f64();
    let nsites = target.sites();
    if !cli.gdb && workers == 1 {
        drop(tmp); // the running fork server holds everything it needs (gdb needs the file)
    }
    if !cli.quiet && !cli.json {
        let what = if replay.is_some() {
            "replaying"
        } else {
            "checking"
        };
        println!(
            "smc-run: {what} {} under {model_name} ({nsites} instrumented instructions)",
            given.display(),
        );
    }
    let cfg = engine::Config {
        max_steps: cli.bounds.max_steps,
        keep_going: cli.keep_going,
        allow_exit_status: cli.allow_exit_status,
    };
    let result = match &replay {
        Some(r) => engine::replay(&mut target, model.as_ref(), &cfg, &r.steps, cli.gdb),
        None => {
            let bar = report::progress::Bar::new(!cli.quiet && !cli.json);
            let progress = |s: &engine::Stats| {
                bar.update(s, started.elapsed());
                !target::interrupted()
            };
            let plan = target.plan().clone();
            let start = |w: usize| {
                pin(w);
                NativeTarget::start(&path, plan.clone(), &opts).map_err(ExecError::Fatal)
            };
            let jobs = Jobs {
                workers,
                shard: cli.shard,
                after: parallel::AFTER,
                leaves: parallel::LEAVES,
            };
            let r =
                parallel::explore_jobs(&mut target, &start, jobs, model.as_ref(), &cfg, &progress);
            bar.finish();
            r
        }
    };
    let elapsed = started.elapsed().as_secs_f64();
    let sym = Symbolizer {
        program: &program,
        load_bias: target.load_bias,
    };
    let outcome = match result {
        Ok(o) => o,
        Err(ExecError::Timeout { .. }) => unreachable!("the engine reports time-outs as hangs"),
        Err(ExecError::Interrupted) => return Err(UsageError("interrupted".into())),
        Err(ExecError::Fatal(msg)) => return Err(UsageError(msg)),
    };
    let executor = target.executor();
    let engine = target.engine_placement();
    drop(target);
    if cli.gdb {
        return Ok(EXIT_OK); // the user has seen the program in the debugger
    }
    if target::interrupted() {
        return Err(UsageError("interrupted".into()));
    }
    let part = report::Part {
        jobs: workers,
        shard: cli.shard.map(|s| (s.index + 1, s.count)),
        executor,
        engine,
        worker_rss_kib: target::in_worker::worker_peak_kib().filter(|_| engine == "worker"),
        startup_s,
    };
    // Save the schedule of each distinct error (not when replaying one).
    let mut saved = Vec::new();
    if replay.is_none() {
        let args: Vec<String> = args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        for (k, (cx, _)) in outcome.errors.iter().enumerate() {
            let file = schedule_path(cli.schedule.as_deref(), given, k);
            let s = Schedule::new(
                cx,
                &given.display().to_string(),
                &args,
                &model_name,
                buffer_bound,
            );
            std::fs::write(&file, format!("{}\n", s.to_json())).map_err(|e| {
                UsageError(format!(
                    "cannot save the schedule to {}: {e}",
                    file.display()
                ))
            })?;
            saved.push(file);
        }
    }
    if let (Some(f), Some(cx)) = (&cli.dot, &outcome.error) {
        std::fs::write(f, report::dot::graph(&sym, cx))
            .map_err(|e| UsageError(format!("cannot write {}: {e}", f.display())))?;
    }
    if !cli.quiet {
        let shown = if cli.keep_going {
            outcome.errors.len()
        } else {
            1
        };
        for (k, (cx, n)) in outcome.errors.iter().take(shown).enumerate() {
            let count = if cli.keep_going {
                format!(" ({n} executions)")
            } else {
                String::new()
            };
            println!("error: {}: {}{count}", cx.kind.name(), cx.message);
            print!("{}", report::counterexample_text(&sym, cx));
            if let Some(f) = saved.get(k) {
                println!(
                    "schedule saved to {0}; replay it with: smc-run --replay {0} {1}",
                    f.display(),
                    given.display()
                );
            }
        }
        if let Some(r) = &replay {
            let same = outcome
                .error
                .as_ref()
                .is_some_and(|cx| cx.kind.name() == r.kind && cx.message == r.message);
            if same {
                println!("replay: reproduced the saved error");
            } else {
                println!(
                    "replay: did NOT reproduce the saved error ({}: {})",
                    r.kind, r.message
                );
            }
        }
    }
    if !cli.json || !cli.quiet {
        let summary = report::summary_text(&model_name, &outcome, elapsed, part);
        if cli.quiet || cli.json {
            print!(
                "{}",
                summary
                    .lines()
                    .last()
                    .map(|l| format!("{l}\n"))
                    .unwrap_or_default()
            );
        } else {
            print!("{summary}");
        }
    }
    if cli.json {
        println!(
            "{}",
            report::json(&sym, &model_name, &outcome, elapsed, &saved, part)
        );
    }
    Ok(exit_status(report::verdict(&outcome)))
}

/// Where the k-th distinct error's schedule goes: `--schedule FILE` (then FILE.2, FILE.3...),
/// or `NAME.schedule` (then `NAME.2.schedule`...) in the current directory.
fn schedule_path(chosen: Option<&Path>, program: &Path, k: usize) -> PathBuf {
    match chosen {
        Some(f) if k == 0 => f.to_path_buf(),
        Some(f) => PathBuf::from(format!("{}.{}", f.display(), k + 1)),
        None => {
            let stem = program
                .file_stem()
                .map_or("program".into(), |s| s.to_string_lossy().into_owned());
            match k {
                0 => PathBuf::from(format!("{stem}.schedule")),
                _ => PathBuf::from(format!("{stem}.{}.schedule", k + 1)),
            }
        }
    }
}

fn run_litmus(cli: &LitmusCli) -> Result<u8, UsageError> {
    for m in &cli.model {
        model::named(m, None)?;
    }
    let exec_timeout = cli.bounds.check()?;
    if cli.jobs == Some(0) {
        return Err(UsageError("--jobs must be at least 1".into()));
    }
    let expectations = match &cli.expect {
        None => None,
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| UsageError(format!("{}: {e}", p.display())))?;
            Some(
                Expectations::parse(&text)
                    .map_err(|e| UsageError(format!("{}: {e}", p.display())))?,
            )
        }
    };
    if let Some(dir) = &cli.keep {
        std::fs::create_dir_all(dir)
            .map_err(|e| UsageError(format!("cannot create {}: {e}", dir.display())))?;
    }
    let mut files = Vec::new();
    for f in &cli.files {
        litmus::run::collect(f, &mut files).map_err(|e| UsageError(e.to_string()))?;
    }
    if files.is_empty() {
        return Err(UsageError("no .litmus files found".into()));
    }
    let opts = litmus::run::Options {
        cc: cli.cc.clone(),
        exec_timeout,
        max_steps: cli.bounds.max_steps,
        buffer_bound: cli.bounds.buffer_bound,
        keep_dir: cli.keep.clone(),
    };
    let jobs = cli
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    // One test under one model prints herd's full output; anything more one line per result.
    let detailed = files.len() == 1 && cli.model.len() == 1 && !cli.quiet;
    let started = Instant::now();
    let (mut checked, mut errors, mut mismatches, mut unexpected) = (0, 0, Vec::new(), 0);
    let mut json_results = Vec::new();
    let mut each = |run: litmus::run::TestRun| {
        if target::interrupted() {
            return; // what is left is only "interrupted"
        }
        let file = run.path.display().to_string();
        let test = match run.test {
            Ok(t) => t,
            Err(e) => {
                errors += cli.model.len();
                eprintln!("smc-run: {file}: {e}");
                json_results.push(serde_json::json!({ "file": file, "error": e.0 }));
                return;
            }
        };
        for (m, result) in cli.model.iter().zip(run.results) {
            let c = match result {
                Ok(c) => c,
                Err(e) => {
                    errors += 1;
                    eprintln!("smc-run: {file}: {m}: {e}");
                    json_results.push(serde_json::json!({
                        "test": test.name, "file": file, "model": m, "error": e
                    }));
                    continue;
                }
            };
            checked += 1;
            let expected = expectations.as_ref().and_then(|x| x.get(&test.name, m));
            if expectations.is_some() && expected.is_none() {
                unexpected += 1;
            }
            let mismatch = expected.and_then(|e| e.mismatch(&c));
            if detailed && !cli.json {
                print!("{}", report::litmus::herd_text(&test, &c));
            }
            if (!detailed && !cli.quiet) || mismatch.is_some() {
                println!("{}", report::litmus::line(&test, &c, expected));
            }
            if let (Some(d), Some(e)) = (mismatch, expected) {
                mismatches.push(format!(
                    "{:<40} {m:<4} expected {:<28} got {} {} {} states {} ({d})",
                    test.name,
                    e.summary(),
                    c.verdict.observation(),
                    c.verdict.positive,
                    c.verdict.negative,
                    c.verdict.states.len()
                ));
            }
            if cli.json {
                json_results.push(report::litmus::json(&test, &file, &c, expected));
            }
        }
    };
    litmus::run::run_files(&files, &cli.model, &opts, jobs, &mut each);
    if target::interrupted() {
        return Err(UsageError("interrupted".into()));
    }
    let elapsed = started.elapsed().as_secs_f64();
    if !detailed || expectations.is_some() {
        if !mismatches.is_empty() {
            println!("\nmismatches ({}):", mismatches.len());
            for m in &mismatches {
                println!("  {m}");
            }
        }
        let vs = match &cli.expect {
            Some(p) => format!(
                ", {} mismatches against {}{}",
                mismatches.len(),
                p.display(),
                if unexpected > 0 {
                    format!(" ({unexpected} results have no expectation)")
                } else {
                    String::new()
                }
            ),
            None => String::new(),
        };
        println!(
            "litmus: {} tests x {} models: {checked} checked, {errors} errors{vs}; {elapsed:.1}s",
            files.len(),
            cli.model.len()
        );
    }
    if cli.json {
        println!(
            "{}",
            serde_json::json!({
                "schema": report::JSON_SCHEMA,
                "litmus": json_results,
                "summary": {
                    "tests": files.len(),
                    "models": cli.model,
                    "checked": checked,
                    "errors": errors,
                    "mismatches": mismatches.len(),
                    "seconds": elapsed,
                }
            })
        );
    }
    Ok(if errors > 0 {
        EXIT_USAGE
    } else if !mismatches.is_empty() {
        EXIT_ERROR_FOUND
    } else {
        EXIT_OK
    })
}

/// The engine library built beside the checker (runtime/engine: `cargo build` puts it beside
/// the binary, `cargo test` and `cargo bench` in deps/; the newer one, since the other may be
/// left from an older build, which the worker would refuse), unless `SMC_NO_WORKER_ENGINE` is
/// set (diagnosis, A/B).
fn worker_engine_library() -> Option<PathBuf> {
    if std::env::var_os("SMC_NO_WORKER_ENGINE").is_some() {
        return None;
    }
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    [
        dir.join("libsmc_engine.so"),
        dir.join("deps/libsmc_engine.so"),
    ]
    .into_iter()
    .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
    .max()
    .map(|(_, p)| p)
}
