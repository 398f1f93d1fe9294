//! `smc-run combine`: the --json results of a sharded check's parts added up into one verdict.

use std::path::PathBuf;

use clap::Parser;
use smc_run::report;

use super::{exit_status, UsageError};

/// Add up the --json results of the N shards of one check (`smc-run --shard K/N --json`) into
/// one verdict.
///
/// Exit status: as for a check (0 no error, 1 an error was found, 3 bounded); 2 when a shard is
/// missing, given twice or from another check, or a file is not a shard's --json output.
#[derive(Parser, Debug)]
#[command(name = "smc-run combine", version, about, long_about)]
pub(crate) struct CombineCli {
    /// The --json output of each shard (its last line is the JSON object).
    #[arg(required = true)]
    files: Vec<PathBuf>,

    /// Print the combined result as one JSON object (the schema of a check, with `shards`,
    /// and `shard` in each error).
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(cli: &CombineCli) -> Result<u8, UsageError> {
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
        say!("{o}");
    } else {
        say_part!("{}", combine::text(&o));
    }
    Ok(exit_status(o["verdict"].as_str().unwrap_or("")))
}
