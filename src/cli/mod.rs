//! The command line of `smc-run`: a check of one program (`check`), litmus tests (`litmus`) and
//! the sum of a sharded check's parts (`combine`). Everything here is the binary's; the
//! library (engine, supervisor, report...) knows nothing of flags or exit statuses.

use std::process::ExitCode;
use std::time::Duration;

use smc_run::{engine, supervisor};

/// `println!` to stdout, where a reader that went away (`smc-run … | head`) is not an error:
/// the check goes on and ends with its verdict's exit status.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// `print!` as [`say!`].
macro_rules! say_part {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($arg)*);
    }};
}

mod check;
mod combine;
mod litmus;

pub(crate) const EXIT_OK: u8 = 0;
pub(crate) const EXIT_ERROR_FOUND: u8 = 1;
pub(crate) const EXIT_USAGE: u8 = 2;
pub(crate) const EXIT_BOUNDED: u8 = 3;
pub(crate) const EXIT_NOTHING_CHECKED: u8 = 4;
pub(crate) const EXIT_INTERRUPTED: u8 = 130;

/// A one-line error for the user, with exit status 2.
pub(crate) struct UsageError(pub(crate) String);

impl From<String> for UsageError {
    fn from(s: String) -> Self {
        UsageError(s)
    }
}

/// Bounds of the exploration, shared by programs and litmus tests.
#[derive(clap::Args, Debug)]
pub(crate) struct Bounds {
    /// At most N pending stores per store buffer (tso, pso); a store into a full buffer waits
    /// for the oldest to reach memory. 0 is sequential consistency. Default: unbounded.
    #[arg(long, value_name = "N")]
    pub(crate) buffer_bound: Option<usize>,

    /// Visible events per execution before the execution is cut (a program's verdict then says
    /// "bounded" unless an error is found; a litmus test is an error).
    #[arg(long, default_value_t = engine::DEFAULT_MAX_STEPS)]
    pub(crate) max_steps: usize,

    /// Wall-clock seconds a thread may run without reaching a visible operation (a shared
    /// access or a pthread call); longer is reported as a hang. (Without --keep-going, the
    /// check's first round looks for a spin on shared stack memory after 1 s.)
    #[arg(long, default_value_t = 10.0)]
    pub(crate) exec_timeout: f64,

    /// Spurious wake-ups each thread may have from pthread_cond_wait in an execution (POSIX
    /// allows a wait to return without a signal). 0, the default, misses a wait guarded by
    /// `if` instead of `while`; 1 finds it, with more executions for every program that waits.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub(crate) spurious_wakeups: u32,

    /// Values each __VERIFIER_nondet_* call may return, each explored: 0, 1, -1, 2, -2 ... for
    /// signed types, 0, 1, 2 ... for unsigned ones, at most 2 for _Bool. Values outside are not
    /// checked.
    #[arg(long, value_name = "N", default_value_t = engine::DEFAULT_NONDET_VALUES)]
    pub(crate) nondet_values: u32,
}

/// Which exploration engine, shared by programs and litmus tests.
#[derive(clap::Args, Debug)]
pub(crate) struct EngineChoice {
    /// Exploration engine: `interleaving` (source-DPOR over interleavings with store buffers;
    /// the default for sc, tso and pso) or `graph` (optimal exploration of execution graphs;
    /// the only one for ra). Both give the same verdicts and counts but where the README
    /// says (spin loops are counted differently; an aligned 16-byte SSE access is one event
    /// to the interleaving engine, to the graph engine two 8-byte pieces where another access
    /// takes 8 bytes of it): the choice is for comparison.
    #[arg(long, value_name = "ENGINE", value_parser = ["interleaving", "graph"])]
    pub(crate) engine: Option<String>,
}

impl EngineChoice {
    /// Does `model` explore with the graph engine?
    pub(crate) fn graph(&self, model: &dyn smc_run::model::Model) -> Result<bool, UsageError> {
        match self.engine.as_deref() {
            Some("interleaving") if model.graph_only() => Err(UsageError(format!(
                "the {} model is explored with the graph engine only",
                model.name()
            ))),
            Some(e) => Ok(e == "graph"),
            None => Ok(model.graph_only()),
        }
    }
}

impl Bounds {
    pub(crate) fn check(&self) -> Result<Duration, UsageError> {
        if !(self.exec_timeout > 0.0 && self.exec_timeout.is_finite()) {
            return Err(UsageError(
                "--exec-timeout must be a positive number of seconds".into(),
            ));
        }
        if self.nondet_values == 0 {
            return Err(UsageError("--nondet-values must be at least 1".into()));
        }
        if self.max_steps == 0 {
            return Err(UsageError("--max-steps must be at least 1".into()));
        }
        Ok(Duration::from_secs_f64(self.exec_timeout))
    }
}

/// The exit status of a verdict (`report::verdict`).
pub(crate) fn exit_status(verdict: &str) -> u8 {
    match verdict {
        "error" => EXIT_ERROR_FOUND,
        "bounded" => EXIT_BOUNDED,
        "vacuous" => EXIT_NOTHING_CHECKED,
        _ => EXIT_OK,
    }
}

/// Parse the command line, run what it asks, and say how it ended.
pub(crate) fn main() -> ExitCode {
    let sub = std::env::args_os().nth(1);
    let result = if sub.as_ref().is_some_and(|a| a == "litmus") {
        parse_args(<litmus::LitmusCli as clap::Parser>::try_parse_from(
            std::env::args_os().skip(1),
        ))
        .map(|cli| {
            install_interrupt_handlers();
            litmus::run(&cli)
        })
    } else if sub.as_ref().is_some_and(|a| a == "combine") {
        parse_args(<combine::CombineCli as clap::Parser>::try_parse_from(
            std::env::args_os().skip(1),
        ))
        .map(|c| combine::run(&c))
    } else {
        parse_args(<check::Cli as clap::Parser>::try_parse()).map(|cli| {
            install_interrupt_handlers();
            check::run(&cli)
        })
    };
    match result {
        Err(code) => code,
        Ok(Ok(code)) => ExitCode::from(code),
        Ok(Err(UsageError(msg))) => {
            eprintln!("smc-run: {msg}");
            ExitCode::from(if supervisor::interrupted() {
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
    supervisor::interrupt();
}

fn install_interrupt_handlers() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only stores to an atomic.
        unsafe { libc::signal(sig, on_interrupt as *const () as libc::sighandler_t) };
    }
}
