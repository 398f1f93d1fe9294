//! `smc-run litmus`: herd-format litmus tests compiled to C and checked, with herd7's output.

use std::path::PathBuf;
use std::time::Instant;

use clap::Parser;
use smc_run::litmus::{self, expect::Expectations};
use smc_run::{model, report, supervisor};

use super::{Bounds, EngineChoice, UsageError, EXIT_ERROR_FOUND, EXIT_OK, EXIT_USAGE};

/// Run litmus tests (herd format): generate a C program from each test, compile it, and
/// model-check the binary; print herd7's verdict (final states, Ok/No, the Observation line).
///
/// Exit status: 0 every test was checked (and agrees with --expect); 1 some result differs
/// from --expect; 2 usage error, or some test could not be parsed, compiled or checked.
#[derive(Parser, Debug)]
#[command(name = "smc-run litmus", version, about, long_about)]
pub(crate) struct LitmusCli {
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

    #[command(flatten)]
    engine: EngineChoice,

    /// C compiler for the generated programs (default: cc for X86 tests,
    /// powerpc64le-linux-gnu-gcc for PPC tests, which run under qemu-user).
    #[arg(long)]
    cc: Option<String>,

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

pub(crate) fn run(cli: &LitmusCli) -> Result<u8, UsageError> {
    for m in &cli.model {
        cli.engine.graph(model::named(m, None)?.as_ref())?;
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
        graph: cli.engine.engine.as_deref() == Some("graph"),
    };
    let jobs = cli
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    // One test under one model prints herd's full output; anything more one line per result.
    let detailed = files.len() == 1 && cli.model.len() == 1 && !cli.quiet;
    let started = Instant::now();
    let (mut checked, mut errors, mut mismatches, mut unexpected) = (0, 0, Vec::new(), 0);
    let mut blocked = 0;
    let mut json_results = Vec::new();
    let mut each = |run: litmus::run::TestRun| {
        if supervisor::interrupted() {
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
            blocked += c.blocked;
            let expected = expectations.as_ref().and_then(|x| x.get(&test.name, m));
            // else a weaker model's, which bounds what this one may see
            let bound = expectations.as_ref().and_then(|x| {
                let weaker = litmus::expect::weaker_model(m)?;
                x.get(&test.name, weaker).filter(|_| expected.is_none())
            });
            if expectations.is_some() && expected.is_none() && bound.is_none() {
                unexpected += 1;
            }
            let mismatch = match (expected, bound) {
                (Some(e), _) => e.mismatch(&c),
                (None, Some(b)) => b.contradiction(&c).map(|d| format!("{d} (power)")),
                (None, None) => None,
            };
            if detailed && !cli.json {
                say_part!("{}", report::litmus::herd_text(&test, &c));
            }
            // (a weaker model's result is a bound, not what this one must give)
            if (!detailed && !cli.quiet) || mismatch.is_some() {
                say!("{}", report::litmus::line(&test, &c, expected));
            }
            if let (Some(d), Some(e)) = (mismatch, expected.or(bound)) {
                let expected = if expected.is_some() {
                    "expected"
                } else {
                    "power"
                };
                mismatches.push(format!(
                    "{:<40} {m:<4} {expected} {:<28} got {} {} {} states {} ({d})",
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
    if supervisor::interrupted() {
        return Err(UsageError("interrupted".into()));
    }
    let elapsed = started.elapsed().as_secs_f64();
    if !detailed || expectations.is_some() {
        if !mismatches.is_empty() {
            say!("\nmismatches ({}):", mismatches.len());
            for m in &mismatches {
                say!("  {m}");
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
        // (executions that end blocked are wasted work: an optimal exploration has none)
        let wasted = match blocked {
            0 => String::new(),
            n => format!(", {n} executions ended blocked"),
        };
        say!(
            "litmus: {} tests x {} models: {checked} checked, {errors} errors{vs}{wasted}; \
             {elapsed:.1}s",
            files.len(),
            cli.model.len()
        );
    }
    if cli.json {
        say!(
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
