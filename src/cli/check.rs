//! A check of one program: `smc-run [OPTIONS] PROGRAM [-- ARGS...]`, and `--replay` of a saved
//! schedule.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Parser;
use smc_run::engine::parallel::{self, Jobs, Shard};
use smc_run::engine::{self, ExecError};
use smc_run::report::{self, schedule::Schedule, Symbolizer};
use smc_run::supervisor::{self, NativeTarget, Options, TempDir};
use smc_run::{channel, model, program, results};

use super::{exit_status, Bounds, EngineChoice, UsageError, EXIT_OK};

/// Stateless model checker for compiled pthreads programs: explores every inequivalent
/// interleaving of the program's threads and reports an assertion failure, crash, deadlock
/// or hang with the interleaving that leads to it.
///
/// Exit status: 0 no error is reachable; 1 an error was found; 2 usage or input error;
/// 3 no error found but some executions were cut by a bound; 4 nothing was checked (every
/// execution was dropped by an assumption).
///
/// Litmus tests: `smc-run litmus --help`. Shards of a check: `smc-run combine --help`.
#[derive(Parser, Debug)]
#[command(name = "smc-run", version, about, long_about)]
pub(crate) struct Cli {
    /// The program: an x86-64 ELF executable (dynamically linked, PIE or not, stripped or
    /// not), or a C file, compiled first with `cc -g -O2 -pthread` (a C++ file, .cpp .cc .cxx,
    /// with `c++ -std=gnu++20 -g -O2 -pthread`).
    #[arg(required_unless_present = "verifier_dir")]
    program: Option<PathBuf>,

    /// Arguments passed to the program.
    #[arg(last = true)]
    args: Vec<OsString>,

    /// Memory model: tso (total store order, what x86-64 runs; the default for x86-64
    /// programs), pso (partial store order: stores to different locations may also be
    /// reordered), sc (sequential consistency), ra (release/acquire) or power (what POWER runs,
    /// herd7's model; the default for ppc64le programs). With --replay: the schedule's model.
    #[arg(short, long)]
    model: Option<String>,

    #[command(flatten)]
    bounds: Bounds,

    #[command(flatten)]
    engine: EngineChoice,

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

    /// C compiler used for a .c PROGRAM (default: cc; with --arch ppc64le,
    /// powerpc64le-linux-gnu-gcc).
    #[arg(long)]
    cc: Option<String>,

    /// The instruction set a .c or .cpp PROGRAM is compiled for: x86_64 (this machine's) or
    /// ppc64le (cross-compiled, run under qemu-user). A binary PROGRAM says its own.
    #[arg(long, value_enum, default_value = "x86_64")]
    arch: ArchChoice,

    /// Where to save the failing schedule (default: smc-run-out/NAME.MODEL.schedule under the
    /// current directory; with --keep-going, further distinct errors get `.2`, `.3`...).
    #[arg(long, value_name = "FILE")]
    schedule: Option<PathBuf>,

    /// Re-run PROGRAM forced along a saved schedule, then show the program's own output,
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

/// `--arch`: what a source PROGRAM is compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum ArchChoice {
    #[value(name = "x86_64", alias = "x86-64")]
    X86_64,
    Ppc64le,
}

fn write_verifier_files(dir: &Path, arch: ArchChoice) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("smc_verifier.h"), supervisor::VERIFIER_HEADER)?;
    let stub = match arch {
        ArchChoice::X86_64 => supervisor::VERIFIER_STUB,
        ArchChoice::Ppc64le => supervisor::VERIFIER_STUB_PPC64LE,
    };
    std::fs::write(dir.join("libsmc_verifier.so"), stub)
}

/// The compiler (and its language flags) for a source file given as PROGRAM: a C file with
/// `--cc` (or the arch's C compiler), a C++ file with the arch's C++ compiler (the system
/// `c++`; C++20, for latches, barriers and atomic waits).
fn source_compiler(cli: &Cli, path: &Path) -> Option<(String, &'static [&'static str])> {
    let cross = cli.arch == ArchChoice::Ppc64le;
    match path.extension()?.to_str()? {
        "c" => Some((
            cli.cc.clone().unwrap_or_else(|| {
                if cross {
                    "powerpc64le-linux-gnu-gcc"
                } else {
                    "cc"
                }
                .to_string()
            }),
            &[],
        )),
        "cpp" | "cc" | "cxx" | "C" => Some((
            if cross {
                "powerpc64le-linux-gnu-g++"
            } else {
                "c++"
            }
            .to_string(),
            &["-std=gnu++20"],
        )),
        _ => None,
    }
}

/// Compile a C or C++ file the way the README says, into `dir`.
fn compile_c(
    (cc, lang): (&str, &[&str]),
    arch: ArchChoice,
    src: &Path,
    dir: &Path,
) -> Result<PathBuf, UsageError> {
    if !src.is_file() {
        return Err(UsageError(format!("{}: no such file", src.display())));
    }
    if arch == ArchChoice::Ppc64le {
        supervisor::ppc64le_built().map_err(UsageError)?;
    }
    write_verifier_files(dir, arch)
        .map_err(|e| UsageError(format!("cannot write to {}: {e}", dir.display())))?;
    let out = dir.join("program");
    let d = dir.display();
    let result = std::process::Command::new(cc)
        .args(lang)
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
        .map_err(|e| {
            let hint = if arch == ArchChoice::Ppc64le {
                format!(
                    " (Debian: apt-get install {})",
                    supervisor::PPC64LE_PACKAGES
                )
            } else {
                String::new()
            };
            UsageError(format!("cannot run the compiler `{cc}`: {e}{hint}"))
        })?;
    if !result.status.success() {
        let _ = std::io::stderr().write_all(&result.stderr);
        return Err(UsageError(format!("{}: compilation failed", src.display())));
    }
    Ok(out)
}

/// Write the SV-COMP files when asked; `Some(status)` when that was all there was to do.
fn verifier_only(cli: &Cli) -> Result<Option<u8>, UsageError> {
    let Some(dir) = &cli.verifier_dir else {
        return Ok(None);
    };
    write_verifier_files(dir, cli.arch)
        .map_err(|e| UsageError(format!("cannot write to {}: {e}", dir.display())))?;
    if cli.program.is_some() {
        return Ok(None);
    }
    say!(
        "wrote {0}/smc_verifier.h and {0}/libsmc_verifier.so; build with \
         -I{0} -L{0} -lsmc_verifier -Wl,-rpath,{0}",
        dir.display()
    );
    Ok(Some(EXIT_OK))
}

fn read_schedule(f: &Path) -> Result<Schedule, UsageError> {
    let text =
        std::fs::read_to_string(f).map_err(|e| UsageError(format!("{}: {e}", f.display())))?;
    Schedule::parse(&text).map_err(|e| UsageError(format!("{}: {e}", f.display())))
}

/// What a check explored, and what it needs to report it.
struct Explored {
    program: program::Program,
    load_bias: u64,
    outcome: results::Outcome,
    part: report::Part,
    elapsed: f64,
}

pub(crate) fn run(cli: &Cli) -> Result<u8, UsageError> {
    if let Some(status) = verifier_only(cli)? {
        return Ok(status);
    }
    let replay = cli.replay.as_deref().map(read_schedule).transpose()?;
    let given = cli.program.as_ref().expect("clap requires PROGRAM");
    let args: Vec<OsString> = match &replay {
        Some(r) if cli.args.is_empty() => r.args.iter().map(OsString::from).collect(),
        _ => cli.args.clone(),
    };
    let mut _tmp = None; // the compiled program lives as long as the check
    let path = if let Some((cc, lang)) = source_compiler(cli, given) {
        let dir = TempDir::new().map_err(UsageError)?;
        let out = compile_c((&cc, lang), cli.arch, given, &dir.0)?;
        _tmp = Some(dir);
        out
    } else {
        given.clone()
    };
    // (the model of the machine the program is for: POWER's for a ppc64le program)
    let model_name = cli
        .model
        .clone()
        .or_else(|| replay.as_ref().map(|r| r.model.clone()))
        .unwrap_or_else(|| match program::arch_of(&path) {
            Some(program::Arch::Ppc64le) => "power".into(),
            _ => "tso".into(),
        });
    let buffer_bound = cli
        .bounds
        .buffer_bound
        .or(replay.as_ref().and_then(|r| r.buffer_bound));
    let model = model::named(&model_name, buffer_bound)?;
    cli.engine.graph(model.as_ref())?;
    // Stack and TLS memory shared between threads is found by exploring: each time one
    // thread is seen touching another's that was not known to be shared, the program is
    // explored again with it shared, its owner's accesses to it visible too. A thread that
    // spins past the time limit without a visible operation may be waiting on such memory
    // that no other thread got to touch yet: one more round with every stack and TLS access
    // visible looks for it (and stands as the check's answer if it finds none).
    let started = Instant::now(); // of the check, all its rounds
    let mut shared = replay.as_ref().map_or(Vec::new(), |r| r.shared.clone());
    let mut all_stacks = false;
    let mut hung: Option<Explored> = None;
    let mut rounds = 0;
    // (the first round probes for a spin on shared stack memory: its hang came sooner than
    // the full limit, so it stands only once a round with the full limit hangs too; not with
    // --keep-going, whose first round goes on past its hangs, each then costing a round
    // more)
    let probing =
        replay.is_none() && !cli.gdb && !cli.keep_going && PROBE_TIMEOUT < cli.bounds.check()?;
    // (whether the round that hung probed, and whether a round ran again with the full limit)
    let (mut hung_probed, mut looked) = (false, false);
    let x = loop {
        let probe = probing && rounds == 0;
        let Some(x) = explore(
            cli,
            &path,
            &args,
            model.as_ref(),
            replay.as_ref(),
            &model_name,
            Round {
                first: rounds == 0,
                shared: &shared,
                all_stacks,
                started,
                probe,
            },
        )?
        else {
            return Ok(EXIT_OK); // the user has seen the program in the debugger
        };
        rounds += 1;
        if replay.is_some() {
            break x;
        }
        if all_stacks && x.outcome.shared_found.is_empty() {
            if std::mem::take(&mut hung_probed) {
                // nothing shared found after a probe's hang: again, with the full limit (a
                // hang then stands)
                (all_stacks, hung, looked) = (false, None, true);
                continue;
            }
            // nothing shared found: the spin stands as it was seen (the check took its
            // rounds since)
            let mut x = hung.take().expect("a round that hung came first");
            x.elapsed = started.elapsed().as_secs_f64();
            break x;
        }
        let found = &x.outcome.shared_found;
        // (a round with every stack access visible buffers the threads' own frames too, so
        // its errors may be of its own making: the round with the memory found decides)
        let error_stands = x.outcome.error.is_some() && !cli.keep_going && !all_stacks;
        let more = supervisor::merge_shared(shared.iter().chain(found).copied());
        if !found.is_empty() && !error_stands && more != shared {
            shared = more;
            all_stacks = false;
            if !cli.quiet && !cli.json {
                say!(
                    "smc-run: note: a thread accessed another thread's stack or thread-local \
                     memory ({}): checking again with its owner's accesses to it visible",
                    describe_ranges(found)
                );
            }
            continue;
        }
        let timed_out = x
            .outcome
            .errors
            .iter()
            .any(|(cx, _)| cx.message.contains(results::TIMEOUT_HANG));
        if timed_out && hung.is_none() && !all_stacks && !looked {
            hung = Some(x);
            hung_probed = probe;
            all_stacks = true;
            if !cli.quiet && !cli.json {
                let limit = match probe {
                    true => format!("{} s", PROBE_TIMEOUT.as_secs_f64()),
                    false => "past the time limit".into(),
                };
                say!(
                    "smc-run: note: a thread ran {limit} without a visible operation: checking \
                     again with every stack and thread-local access visible, in case it waits \
                     on memory another thread shares with it"
                );
            }
            continue;
        }
        break x;
    };
    let sym = Symbolizer {
        program: &x.program,
        load_bias: x.load_bias,
    };
    let saved = match &replay {
        Some(_) => Vec::new(),
        None => {
            let args: Vec<String> = args
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            let run = SavedRun {
                program: given,
                binary: &x.program.identity,
                shared: &shared,
                args: &args,
                model: &model_name,
                buffer_bound,
            };
            save_schedules(cli.schedule.as_deref(), &run, &x.outcome)?
        }
    };
    if let (Some(f), Some(cx)) = (&cli.dot, &x.outcome.error) {
        std::fs::write(f, report::dot::graph(&sym, cx))
            .map_err(|e| UsageError(format!("cannot write {}: {e}", f.display())))?;
    }
    if !cli.quiet {
        print_errors(cli, &sym, &x.outcome, &saved, given);
        if let Some(r) = &replay {
            let same = x
                .outcome
                .error
                .as_ref()
                .is_some_and(|cx| cx.kind.name() == r.kind && cx.message == r.message);
            if same {
                say!("replay: reproduced the saved error");
            } else {
                say!(
                    "replay: did NOT reproduce the saved error ({}: {})",
                    r.kind,
                    r.message
                );
            }
        }
    }
    if !cli.json || !cli.quiet {
        let summary = report::summary_text(&model_name, &x.outcome, x.elapsed, x.part);
        if cli.quiet || cli.json {
            say_part!(
                "{}",
                summary
                    .lines()
                    .last()
                    .map(|l| format!("{l}\n"))
                    .unwrap_or_default()
            );
        } else {
            say_part!("{summary}");
        }
    }
    if cli.json {
        say!(
            "{}",
            report::json(&sym, &model_name, &x.outcome, x.elapsed, &saved, x.part)
        );
    }
    let verdict = match report::verdict(&x.outcome) {
        // a shard's part may hold no execution: `combine` judges the whole
        "vacuous" if cli.shard.is_some() => "ok",
        v => v,
    };
    Ok(exit_status(verdict))
}

/// One exploration of a check: whether it is the first, which stack and TLS memory it treats as shared, whether it sees
/// every stack access, and when the check started.
struct Round<'a> {
    /// The check's first: it says what it checks.
    first: bool,
    shared: &'a [(u64, u64)],
    all_stacks: bool,
    started: Instant,
    /// A thread is taken as hung after [`PROBE_TIMEOUT`] (if shorter than `--exec-timeout`):
    /// the first round without `--keep-going`, whose hang most often is a spin on a stack
    /// variable another thread writes, which the round that sees every stack access finds.
    probe: bool,
}

/// How long a thread may run without a visible operation in the first round before the check
/// looks at every stack access ([`Round::probe`]). A hang it reports stands only once a round
/// with the full `--exec-timeout` hangs too.
const PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// Executions of the round that looks at every stack and TLS access (after a thread spun
/// without visible operations) for memory one thread shares with another.
const LOOK_EVERYWHERE_EXECUTIONS: u64 = 64;

/// Ranges of stack memory for a note: absolute, or in the thread stacks' area.
fn describe_ranges(ranges: &[(u64, u64)]) -> String {
    let in_area = channel::SPAN_IN_STACK_AREA;
    ranges
        .iter()
        .map(|&(lo, hi)| match lo & in_area {
            0 => format!("{} bytes at {lo:#x}", hi - lo),
            _ => format!(
                "{} bytes at +{:#x} in the threads' stacks",
                hi - lo,
                lo & !in_area
            ),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Start the program and explore it (or replay the schedule), its threads' accesses to
/// `shared` stack and TLS memory visible; `None` after a `--gdb` session.
fn explore(
    cli: &Cli,
    path: &Path,
    args: &[OsString],
    model: &dyn model::Model,
    replay: Option<&Schedule>,
    model_name: &str,
    round: Round,
) -> Result<Option<Explored>, UsageError> {
    let Round {
        first,
        shared,
        all_stacks,
        started,
        probe,
    } = round;
    let exec_timeout = match cli.bounds.check()? {
        t if probe => t.min(PROBE_TIMEOUT),
        t => t,
    };
    let given = cli.program.as_ref().expect("clap requires PROGRAM");
    // One check runs on one CPU (the supervisor and its program hand over faster there);
    // worker w of -j on the w-th CPU from the one we are on.
    let cpus = supervisor::thread_cpus();
    let workers = match cli.jobs {
        _ if replay.is_some() => 1,
        Some(0) => return Err(UsageError("--jobs must be at least 1".into())),
        Some(n) => n,
        None => cpus.len().max(1),
    };
    // (a schedule with replies is a graph engine's, whichever model it was saved under)
    let graph = cli.engine.graph(model)? || replay.is_some_and(|r| !r.replies.is_empty());
    // The engine runs inside the program's worker processes, next to the program.
    let engine = (replay.is_none() && !cli.gdb)
        .then(supervisor::engine_library)
        .flatten();
    let opts = Options {
        args: args.to_vec(),
        exec_timeout,
        fences_visible: model.fences_visible(),
        buffered: model.buffers().is_some(),
        program_output: cli.gdb,
        debuggable: cli.gdb,
        engine,
        shared: shared.to_vec(),
        all_stacks,
        graph,
    };
    let here = supervisor::current_cpu()
        .and_then(|c| cpus.iter().position(|&x| x == c))
        .unwrap_or(0);
    let pin = |w: usize| {
        if !cpus.is_empty() {
            supervisor::pin_thread(cpus[(here + w) % cpus.len()]);
        }
    };
    pin(0);
    let (mut program, mut target) = supervisor::launch(path, &opts)?;
    if model.uses_dependencies() && program.arch != program::Arch::Ppc64le {
        return Err(UsageError(format!(
            "the {} model is for ppc64le programs ({} is {})",
            model.name(),
            path.display(),
            program.arch.name()
        )));
    }
    if cli.gdb && program.arch == program::Arch::Ppc64le {
        return Err(UsageError(
            "--gdb cannot attach to a ppc64le program (it runs under qemu-user, which gdb \
             sees as an x86-64 process); replay it without --gdb"
                .into(),
        ));
    }
    if let Some((cc, _)) = source_compiler(cli, given) {
        // Compiled into a new temporary directory each time, whose path the binary holds:
        // the source and the compiler name the build.
        let source = std::fs::read(given).unwrap_or_default();
        let cc_and_source = [cc.as_bytes(), &[0], &source].concat();
        program.identity = format!("c-source:fnv64:{:016x}", program::fnv64(&cc_and_source));
    }
    if let Some(saved) = replay.and_then(|r| r.binary.as_deref()) {
        if saved != program.identity {
            return Err(UsageError(format!(
                "{}: the schedule was saved for another build of the program ({saved}; this one \
                 is {}): check the program again to get a schedule for this build",
                cli.replay
                    .as_ref()
                    .map_or(String::new(), |f| f.display().to_string()),
                program.identity
            )));
        }
    }
    // from the check's start, as `elapsed` is (earlier rounds and the engine library's memfd
    // are preparation too)
    let startup_s = started.elapsed().as_secs_f64();
    let nsites = target.sites();
    if !cli.quiet && !cli.json && first {
        let what = if replay.is_some() {
            "replaying"
        } else {
            "checking"
        };
        say!(
            "smc-run: {what} {} under {model_name} ({nsites} instrumented instructions)",
            given.display(),
        );
        if !program.has_line_info {
            say!(
                "smc-run: note: {} has no debug information; build it with -g to see file:line \
                 in counterexamples",
                given.display()
            );
        }
        if !program.unseen_libraries.is_empty() {
            let does = if program.unseen_libraries.len() == 1 {
                "does"
            } else {
                "do"
            };
            say!(
                "smc-run: note: only the executable's code is checked: what {} {does} to \
                 shared memory is not explored",
                program.unseen_libraries.join(", ")
            );
        }
    }
    let cfg = engine::Config {
        max_steps: cli.bounds.max_steps,
        keep_going: cli.keep_going && !all_stacks,
        allow_exit_status: cli.allow_exit_status,
        max_executions: all_stacks.then_some(LOOK_EVERYWHERE_EXECUTIONS),
        spurious_wakeups: cli.bounds.spurious_wakeups,
        nondet_values: cli.bounds.nondet_values,
        graph,
        fair_after: engine::DEFAULT_FAIR_AFTER,
    };
    // (the executions explored so far, for the message of an interrupted check)
    let explored = std::sync::atomic::AtomicU64::new(0);
    let result = match replay {
        Some(r) => engine::replay(&mut target, model, &cfg, &r.followed(), cli.gdb),
        None => {
            let bar = report::progress::Bar::new(!cli.quiet && !cli.json);
            let progress = |s: &results::Stats| {
                explored.store(s.executions, std::sync::atomic::Ordering::Relaxed);
                bar.update(s, started.elapsed());
                !supervisor::interrupted()
            };
            let plan = target.plan().clone();
            let start = |w: usize| {
                pin(w);
                NativeTarget::start(path, plan.clone(), &opts).map_err(ExecError::Fatal)
            };
            let jobs = Jobs {
                workers,
                shard: cli.shard,
                after: parallel::AFTER,
                leaves: parallel::LEAVES,
            };
            let r = parallel::explore_jobs(&mut target, &start, jobs, model, &cfg, &progress);
            bar.finish();
            r
        }
    };
    let elapsed = started.elapsed().as_secs_f64();
    let stopped = || {
        let n = explored.load(std::sync::atomic::Ordering::Relaxed);
        UsageError(format!(
            "interrupted after {n} executions in {elapsed:.1} s, before the exploration ended: \
             no verdict"
        ))
    };
    let mut outcome = match result {
        Ok(o) => o,
        // (each engine reports a time-out as a hang: this would be an internal error)
        Err(ExecError::Timeout { .. }) => {
            return Err(UsageError(
                "internal error: an execution timed out that was not reported as a hang".into(),
            ))
        }
        Err(ExecError::Interrupted) => return Err(stopped()),
        Err(ExecError::Fatal(msg)) => return Err(UsageError(msg)),
    };
    if let Some(r) = replay.filter(|r| !r.replies.is_empty()) {
        // a graph engine's replay: which write each read read, as the exploration chose it
        let cxs = outcome.errors.iter_mut().map(|(cx, _)| cx);
        for cx in cxs.chain(outcome.error.as_mut()) {
            cx.sources = r.sources.clone();
            cx.coherence = r.coherence.clone();
        }
    }
    if replay.is_some() && !cli.gdb {
        // the program's own output, captured (its messages are read from it) and shown
        use std::io::Write;
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(&target.captured_output());
        let _ = err.flush();
    }
    let executor = target.executor();
    let engine = target.engine_placement();
    let load_bias = target.load_bias;
    drop(target);
    if cli.gdb {
        return Ok(None);
    }
    if supervisor::interrupted() {
        return Err(stopped());
    }
    let part = report::Part {
        jobs: workers,
        shard: cli.shard.map(|s| (s.index + 1, s.count)),
        executor,
        engine,
        worker_rss_kib: supervisor::in_worker::worker_peak_kib().filter(|_| engine == "worker"),
        startup_s,
    };
    Ok(Some(Explored {
        program,
        load_bias,
        outcome,
        part,
        elapsed,
    }))
}

/// Each distinct error's counterexample, and where its schedule was saved.
fn print_errors(
    cli: &Cli,
    sym: &Symbolizer,
    outcome: &results::Outcome,
    saved: &[PathBuf],
    given: &Path,
) {
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
        say!("error: {}: {}{count}", cx.kind.name(), cx.message);
        say_part!("{}", report::counterexample_text(sym, cx));
        if let Some(f) = saved.get(k) {
            let args: String = cli
                .args
                .iter()
                .map(|a| format!(" {}", shell_word(&a.to_string_lossy())))
                .collect();
            let args = if args.is_empty() {
                args
            } else {
                format!(" --{args}")
            };
            say!(
                "schedule saved to {}; replay it with: smc-run --replay {} {}{args}",
                f.display(),
                shell_word(&f.to_string_lossy()),
                shell_word(&given.to_string_lossy())
            );
        }
    }
}

/// `word` as a shell reads it back: as it is where it holds no character the shell would
/// take for something else, else in single quotes.
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./=:,+-@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// What a saved schedule records besides the steps.
struct SavedRun<'a> {
    program: &'a Path,
    binary: &'a str,
    shared: &'a [(u64, u64)],
    args: &'a [String],
    model: &'a str,
    buffer_bound: Option<usize>,
}

/// Save the schedule of each distinct error; the files written.
fn save_schedules(
    chosen: Option<&Path>,
    run: &SavedRun,
    outcome: &results::Outcome,
) -> Result<Vec<PathBuf>, UsageError> {
    let mut saved = Vec::new();
    for (k, (cx, _)) in outcome.errors.iter().enumerate() {
        let file = schedule_path(chosen, run.program, run.model, k);
        if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                UsageError(format!(
                    "cannot create {} for the schedule: {e}",
                    dir.display()
                ))
            })?;
        }
        let s = Schedule::new(
            cx,
            &run.program.display().to_string(),
            run.binary,
            run.shared,
            run.args,
            run.model,
            run.buffer_bound,
        );
        std::fs::write(&file, format!("{}\n", s.to_json())).map_err(|e| {
            UsageError(format!(
                "cannot save the schedule to {}: {e}",
                file.display()
            ))
        })?;
        saved.push(file);
    }
    Ok(saved)
}

/// Where schedules go unless `--schedule` says: this directory under the current one.
pub(crate) const SCHEDULE_DIR: &str = "smc-run-out";

/// Where the k-th distinct error's schedule goes: `--schedule FILE` (then FILE.2, FILE.3...),
/// or `smc-run-out/NAME.MODEL.schedule` (then `NAME.MODEL.2.schedule`...), so that checks of
/// one program under different models keep their schedules apart.
fn schedule_path(chosen: Option<&Path>, program: &Path, model: &str, k: usize) -> PathBuf {
    match chosen {
        Some(f) if k == 0 => f.to_path_buf(),
        Some(f) => PathBuf::from(format!("{}.{}", f.display(), k + 1)),
        None => {
            let stem = program
                .file_stem()
                .map_or("program".into(), |s| s.to_string_lossy().into_owned());
            let name = match k {
                0 => format!("{stem}.{model}.schedule"),
                _ => format!("{stem}.{model}.{}.schedule", k + 1),
            };
            Path::new(SCHEDULE_DIR).join(name)
        }
    }
}
