//! `-j N` and `--shard K/N` on real programs: the workers of one check, and the shards of one
//! check combined, count exactly the executions one worker counts, and find the same errors.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{check, checker, compile, processes_of, run_env, run_in, Scratch};

/// SV-COMP's fib_bench with NUM=2 (main checks without joining; its exit comes last): 140
/// executions under sc, 153 under tso, as many as with the joins after the check.
fn fib(scratch: &Scratch, flags: &[&str]) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/programs/fib.c");
    let mut all = vec!["-O2", "-DNUM=2"];
    all.extend_from_slice(flags);
    compile(scratch, &src, "gcc", &all)
}

/// Run every shard of `binary` (each with two workers), save each one's output, and combine them.
fn shards(scratch: &Scratch, binary: &Path, model: &str, n: u32) -> (Vec<u64>, common::Run) {
    shards_with(scratch, binary, model, n, &[])
}

fn shards_with(
    scratch: &Scratch,
    binary: &Path,
    model: &str,
    n: u32,
    extra: &[&str],
) -> (Vec<u64>, common::Run) {
    let mut files = Vec::new();
    let mut executions = Vec::new();
    for k in 1..=n {
        let shard = format!("{k}/{n}");
        let mut args = vec!["-j", "2", "--shard", &shard];
        args.extend_from_slice(extra);
        let r = check(binary, model, &args);
        assert!(
            r.status == 0 || r.status == 1,
            "{}: {}",
            r.command,
            r.stderr
        );
        assert_eq!(r.json.as_ref().unwrap()["shard"], shard.as_str());
        executions.push(r.executions());
        let file = scratch.0.join(format!("shard{k}.json"));
        std::fs::write(&file, &r.stdout).unwrap();
        files.push(file.to_str().unwrap().to_string());
    }
    let mut args = vec!["combine", "--json"];
    args.extend(files.iter().map(String::as_str));
    (executions, run_in(&scratch.0, &args))
}

#[test]
fn workers_and_shards_count_what_one_worker_counts() {
    let scratch = Scratch::new("parallel-count");
    let binary = fib(&scratch, &[]);
    // the engine inside each worker process (claims through the checker), and in the checker
    let engines: [(&str, &[(&str, &Path)]); 2] = [
        ("worker", &[]),
        ("checker", &[("SMC_NO_WORKER_ENGINE", Path::new("1"))]),
    ];
    for (model, expected) in [("sc", 140), ("tso", 153)] {
        for (engine, env) in engines {
            for jobs in ["1", "2"] {
                let b = binary.to_str().unwrap();
                let r = run_env(
                    &scratch.0,
                    &["--json", "--model", model, "-j", jobs, b],
                    env,
                );
                assert_eq!((r.status, r.verdict()), (0, "ok"), "{}", r.stderr);
                assert_eq!(r.executions(), expected, "{}", r.command);
                let json = r.json.as_ref().unwrap();
                assert_eq!(json["jobs"], jobs.parse::<u64>().unwrap());
                assert_eq!(json["engine"], engine, "{}", r.command);
            }
        }
    }
    let (parts, combined) = shards(&scratch, &binary, "tso", 3);
    assert_eq!(combined.status, 0, "{}", combined.stderr);
    assert_eq!(combined.verdict(), "ok");
    assert_eq!(combined.executions(), 153);
    assert_eq!(parts.iter().sum::<u64>(), 153);
    assert!(
        parts.iter().all(|&p| p > 0),
        "every shard has a part: {parts:?}"
    );
    assert!(processes_of(&binary).is_empty());
}

/// The graph engine's shards: every shard visits the top of the tree of visits (the first
/// counts it), the graphs at the split depth are dealt round them; combined, they count what
/// one worker counts (one execution per graph), each shard some.
#[test]
fn graph_engine_shards_count_what_one_worker_counts() {
    let scratch = Scratch::new("parallel-graph-shards");
    let binary = fib(&scratch, &[]);
    for (model, extra, expected) in [("tso", &["--engine", "graph"][..], 153), ("ra", &[][..], 0)] {
        let one = check(&binary, model, extra);
        assert_eq!(one.verdict(), "ok", "{}{}", one.stdout, one.stderr);
        if expected > 0 {
            assert_eq!(one.executions(), expected, "{}", one.command);
        }
        let (parts, combined) = shards_with(&scratch, &binary, model, 3, extra);
        assert_eq!(combined.status, 0, "{}", combined.stderr);
        assert_eq!(combined.verdict(), "ok");
        assert_eq!(combined.executions(), one.executions(), "{model} {parts:?}");
        assert!(
            parts.iter().all(|&p| p > 0),
            "every shard has a part: {parts:?}"
        );
    }
    assert!(processes_of(&binary).is_empty());
    // a larger tree: sigma N=7, 7! weak traces under ra, in parts of which none is half
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/programs/sigma.c");
    let sigma = compile(&scratch, &src, "gcc", &["-O2", "-DN=7"]);
    let (parts, combined) = shards_with(&scratch, &sigma, "ra", 3, &[]);
    assert_eq!(combined.executions(), 5040, "{parts:?}");
    assert!(parts.iter().all(|&p| p < 5040 / 2), "{parts:?}");
}

#[test]
fn the_counterexample_does_not_depend_on_timing() {
    // 160 of 257 executions fail, below several leaves of the split top; which worker meets
    // one first depends on timing (before the errors were ordered by where the exploration
    // meets them, 2 of 6 runs here reported another counterexample). (One worker counts 239
    // and 142: with errors cut short above the split, -j 2 counts 18 of them twice; a known
    // defect of the split, see ARCHITECTURE. Failing executions are many: the threads that
    // main's failure cuts off also run ahead of it.)
    let scratch = Scratch::new("parallel-order");
    let binary = fib(&scratch, &["-DBOUND=4"]);
    let traces: Vec<String> = (0..6)
        .map(|_| {
            let r = check(&binary, "sc", &["-j", "2", "--keep-going"]);
            let j = r.json.as_ref().unwrap();
            assert_eq!(
                (r.executions(), j["errors"][0]["count"].as_u64()),
                (257, Some(160)),
                "{}",
                r.command
            );
            assert_eq!(
                j["errors"][0]["trace"], j["error"]["trace"],
                "{}",
                r.command
            );
            j["error"]["trace"].to_string()
        })
        .collect();
    assert!(traces.iter().all(|t| *t == traces[0]), "{traces:#?}");
}

#[test]
fn workers_and_shards_find_the_error() {
    let scratch = Scratch::new("parallel-error");
    // 8 = F(6) is reached in few interleavings only: a bound of 7 fails there
    let binary = fib(&scratch, &["-DBOUND=7"]);
    let two = check(&binary, "sc", &["-j", "2"]);
    assert_eq!(two.status, 1, "{}", two.stderr);
    assert_eq!(two.error_kind(), Some("assertion"));
    // every execution, and every failing one, once
    let failing = |r: &common::Run| r.json.as_ref().unwrap()["errors"][0]["count"].as_u64();
    let one = check(&binary, "sc", &["-j", "1", "--keep-going"]);
    let two = check(&binary, "sc", &["-j", "2", "--keep-going"]);
    assert_eq!(one.executions(), 146, "{}", one.command);
    assert_eq!(failing(&one), Some(10), "{}", one.command);
    assert_eq!(two.executions(), 146, "{}", two.command);
    assert_eq!(failing(&two), Some(10), "{}", two.command);
    let (_, combined) = shards(&scratch, &binary, "sc", 2);
    assert_eq!(combined.status, 1, "{}", combined.stderr);
    assert_eq!(combined.verdict(), "error");
    let error = &combined.json.as_ref().unwrap()["error"];
    assert!(error["message"].as_str().unwrap().contains("Assertion"));
    assert!(error["shard"].as_str().unwrap().ends_with("/2"));
    assert!(processes_of(&binary).is_empty());
}

#[test]
fn combine_needs_every_shard_once() {
    let scratch = Scratch::new("parallel-combine");
    let binary = fib(&scratch, &["-DJOIN"]);
    let r = check(&binary, "sc", &["--shard", "2/2"]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("verdict of shard 2/2 only"),
        "{}",
        r.stdout
    );
    let file = scratch.0.join("two.json");
    std::fs::write(&file, &r.stdout).unwrap();
    let f = file.to_str().unwrap();
    let missing = run_in(&scratch.0, &["combine", f]);
    assert_eq!(missing.status, 2);
    assert!(
        missing.stderr.contains("shard 1/2 missing"),
        "{}",
        missing.stderr
    );
    let twice = run_in(&scratch.0, &["combine", f, f]);
    assert_eq!(twice.status, 2);
    assert!(twice.stderr.contains("given twice"), "{}", twice.stderr);
    let not_json = run_in(&scratch.0, &["combine", binary.to_str().unwrap()]);
    assert_eq!(not_json.status, 2);
    assert_eq!(not_json.stderr.lines().count(), 1, "{}", not_json.stderr);
}

#[test]
fn interrupting_the_workers_leaves_nothing() {
    let scratch = Scratch::new("parallel-interrupt");
    let tmp = scratch.0.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    // 18263 executions under sc: long enough for the second worker to start
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/programs/fib.c");
    let bin = compile(&scratch, &src, "gcc", &["-O2", "-DNUM=3"]);
    let mut child = Command::new(checker())
        .args(["-j", "2", "--model", "sc"])
        .arg(&bin)
        .current_dir(&scratch.0)
        .env("TMPDIR", &tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // both fork servers and an execution of one of them
    let deadline = Instant::now() + Duration::from_secs(60);
    while processes_of(&bin).len() < 3 {
        assert!(Instant::now() < deadline, "the second worker never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: signalling the checker we started, by its PID.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let deadline = Instant::now() + Duration::from_secs(5);
    while !processes_of(&bin).is_empty() {
        assert!(
            Instant::now() < deadline,
            "left behind: {:?}",
            processes_of(&bin)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        std::fs::read_dir(&tmp).unwrap().count(),
        0,
        "files left in TMPDIR"
    );
}
