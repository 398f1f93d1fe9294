//! `smc-run litmus`: herd's X86 litmus tests generated as real programs, compiled and checked,
//! and the conformance suite against herd7's results in ../shared/litmus (or $SMC_LITMUS_DIR).

mod common;

use std::collections::HashMap;
use std::path::PathBuf;

use common::{run, Scratch};
use serde_json::Value;

/// The litmus dataset: $SMC_LITMUS_DIR, or ../shared/litmus beside the checkout.
fn dataset() -> PathBuf {
    let dir = std::env::var_os("SMC_LITMUS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/litmus"));
    assert!(
        dir.join("x86/expected-rmwfix.tsv").is_file(),
        "the litmus dataset is not at {}; set SMC_LITMUS_DIR to the directory that holds \
         x86/*.litmus and x86/expected-rmwfix.tsv",
        dir.display()
    );
    dir
}

/// herd7's (observation, positive, negative, states) by (test, model).
fn expectations(tsv: &str) -> HashMap<(String, String), (String, u64, u64, u64)> {
    tsv.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let n = |i: usize| f[i].trim().parse::<u64>().unwrap();
            (
                (f[0].to_string(), f[1].to_string()),
                (f[2].to_string(), n(3), n(4), n(5)),
            )
        })
        .collect()
}

/// Every X86 test of the dataset under sc, tso and pso, compared with herd7's counts with
/// atomic read-modify-writes (expected-rmwfix.tsv): the observation (Never / Sometimes /
/// Always), Positive and Negative (so the number of complete executions explored equals
/// herd7's number of consistent executions), and the number of distinct final states.
///
/// The comparison is made here, from the JSON results, independently of the checker's own
/// --expect; every mismatch is listed. No class of tests is exempt: the engine explores one
/// execution per Mazurkiewicz trace (sc) or Shasha-Snir trace (tso, pso), and those are in
/// one-to-one correspondence with herd's consistent (rf, co) candidates, including XCHG and
/// LOCK instructions once herd's own RMW reads are made atomic (plain expected.tsv counts
/// executions in which an RMW reads from a store coherence-after its own, which no machine
/// and no interleaving produces; see ../shared/litmus/README.md).
#[test]
fn x86_conformance_with_herd7() {
    conformance(&[]);
}

/// The same with the graph engine: every consistent (rf, co) graph once, none blocked.
#[test]
fn x86_conformance_with_herd7_graph_engine() {
    conformance(&["--engine", "graph"]);
}

fn conformance(engine: &[&str]) {
    let dir = dataset();
    let x86 = dir.join("x86");
    let tsv = x86.join("expected-rmwfix.tsv");
    let expected = expectations(&std::fs::read_to_string(&tsv).unwrap());
    let mut args = vec![
        "litmus",
        "--quiet",
        "--json",
        "--model",
        "sc,tso,pso",
        "--expect",
        tsv.to_str().unwrap(),
        x86.to_str().unwrap(),
    ];
    args.extend_from_slice(engine);
    let r = run(&args);
    let json = r
        .json
        .as_ref()
        .unwrap_or_else(|| panic!("no JSON: {}\n{}", r.stdout, r.stderr));
    let results = json["litmus"].as_array().unwrap();
    let mut mismatches = Vec::new();
    let mut seen = 0;
    for res in results {
        let test = res["test"].as_str().unwrap_or("?");
        let Some(model) = res["model"].as_str() else {
            mismatches.push(format!("{:<40} error: {}", res["file"], res["error"]));
            continue;
        };
        if let Some(e) = res.get("error") {
            mismatches.push(format!("{test:<40} {model:<4} error: {e}"));
            continue;
        }
        seen += 1;
        let Some((obs, pos, neg, states)) = expected.get(&(test.to_string(), model.to_string()))
        else {
            mismatches.push(format!("{test:<40} {model:<4} no expectation"));
            continue;
        };
        let got = (
            res["observation"].as_str().unwrap().to_string(),
            res["positive"].as_u64().unwrap(),
            res["negative"].as_u64().unwrap(),
            res["states"].as_array().unwrap().len() as u64,
        );
        let executions = res["executions"].as_u64().unwrap();
        let blocked = res["blocked"].as_u64().unwrap();
        if got != (obs.clone(), *pos, *neg, *states)
            || executions != pos + neg
            || (!engine.is_empty() && blocked > 0)
        {
            mismatches.push(format!(
                "{test:<40} {model:<4} herd7 {obs} {pos} {neg} ({states} states)  smc-run {} {} {} \
                 ({} states, {executions} executions, {blocked} blocked)",
                got.0, got.1, got.2, got.3
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} results differ from herd7:\n{}",
        mismatches.len(),
        results.len(),
        mismatches.join("\n")
    );
    assert_eq!(seen, 1091 * 3, "every test under every model");
    assert_eq!(seen, expected.len(), "every expectation was checked");
    assert_eq!(json["summary"]["mismatches"], 0);
    assert_eq!(r.status, 0, "{}", r.stderr);
}

/// Release/acquire (`--model ra`, weak traces) against herd7 with `ra.cat` on every X86 test
/// without MFENCE (expected-ra.tsv): the observation and the distinct final states (herd
/// counts candidates with their coherence order, so its counts are not comparable), and no
/// execution blocked.
#[test]
fn x86_release_acquire_with_herd7() {
    let dir = dataset();
    let x86 = dir.join("x86");
    let tsv = x86.join("expected-ra.tsv");
    let expected = expectations(&std::fs::read_to_string(&tsv).unwrap());
    let r = run(&[
        "litmus",
        "--quiet",
        "--json",
        "--model",
        "ra",
        "--expect",
        tsv.to_str().unwrap(),
        x86.to_str().unwrap(),
    ]);
    let json = r
        .json
        .as_ref()
        .unwrap_or_else(|| panic!("no JSON: {}\n{}", r.stdout, r.stderr));
    let mut mismatches = Vec::new();
    let mut seen = 0;
    for res in json["litmus"].as_array().unwrap() {
        let test = res["test"].as_str().unwrap_or("?");
        if let Some(e) = res.get("error") {
            mismatches.push(format!("{test:<40} error: {e}"));
            continue;
        }
        let Some((obs, _, _, states)) = expected.get(&(test.to_string(), "ra".to_string())) else {
            continue; // a test with MFENCE: RA has no counterpart
        };
        seen += 1;
        let got_obs = res["observation"].as_str().unwrap();
        let got_states = res["states"].as_array().unwrap().len() as u64;
        let blocked = res["blocked"].as_u64().unwrap();
        if (got_obs, got_states, blocked) != (obs.as_str(), *states, 0) {
            mismatches.push(format!(
                "{test:<40} herd7 {obs} ({states} states)  smc-run {got_obs} ({got_states} \
                 states, {blocked} blocked)"
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} results differ from herd7:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    assert_eq!(seen, 464, "every test of expected-ra.tsv");
    assert_eq!(seen, expected.len());
    assert_eq!(json["summary"]["mismatches"], 0);
    assert_eq!(r.status, 0, "{}", r.stderr);
}

fn write(scratch: &Scratch, name: &str, text: &str) -> String {
    let p = scratch.0.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

/// One test and one model print herd7's output, with the executions behind each final state.
#[test]
fn one_test_prints_herd_output() {
    let sb = dataset().join("x86/SB.litmus");
    let r = run(&["litmus", sb.to_str().unwrap()]);
    assert_eq!(r.status, 0, "{}{}", r.stdout, r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        lines[..10],
        [
            "Test SB Allowed",
            "States 4",
            "1     *>0:EAX=0; 1:EAX=0;",
            "1     :>0:EAX=0; 1:EAX=1;",
            "1     :>0:EAX=1; 1:EAX=0;",
            "1     :>0:EAX=1; 1:EAX=1;",
            "Ok",
            "Witnesses",
            "Positive: 1 Negative: 3",
            "Condition exists (0:EAX=0 /\\ 1:EAX=0)",
        ]
    );
    assert_eq!(lines[10], "Observation SB Sometimes 1 3");
    assert!(lines[12].starts_with("Executions SB 4 (blocked 0) model tso"));
    let r = run(&["litmus", "--model", "sc", sb.to_str().unwrap()]);
    assert!(r.stdout.contains("\nNo\n"), "{}", r.stdout);
    assert!(
        r.stdout.contains("Observation SB Never 0 3"),
        "{}",
        r.stdout
    );
}

/// Initial values of memory and registers, stores of registers, memory in the condition,
/// `locations`, `forall` and `~exists`: final states counted per execution.
#[test]
fn initial_state_registers_and_quantifiers() {
    let scratch = Scratch::new("litmus-init");
    // P0 publishes its register (initially 5) to y after x; P1 reads y then x. Under sc and
    // tso y=5 implies x=3; pso lets the two stores become visible out of order.
    let mp = write(
        &scratch,
        "mp-init.litmus",
        "X86 MP+init\n\"hand-written\"\n{ x=1; 0:EBX=5; y=0; }\n\
         P0          | P1          ;\n\
         MOV [x],$3  | MOV EAX,[y] ;\n\
         MOV [y],EBX | MOV ECX,[x] ;\n\
         locations [x;]\n\
         ~exists (1:EAX=5 /\\ 1:ECX=1)\n",
    );
    let r = run(&["litmus", "--json", "-m", "sc,tso,pso", &mp]);
    assert_eq!(r.status, 0, "{}{}", r.stdout, r.stderr);
    let res = r.json.as_ref().unwrap()["litmus"]
        .as_array()
        .unwrap()
        .clone();
    let by_model: HashMap<&str, &Value> = res
        .iter()
        .map(|v| (v["model"].as_str().unwrap(), v))
        .collect();
    for (model, obs, pos, neg, ok) in [
        ("sc", "Never", 0, 3, true),
        ("tso", "Never", 0, 3, true),
        ("pso", "Sometimes", 1, 3, false),
    ] {
        let v = by_model[model];
        assert_eq!(v["observation"], obs, "{model}: {v}");
        assert_eq!(
            (v["positive"].as_u64(), v["negative"].as_u64()),
            (Some(pos), Some(neg))
        );
        assert_eq!(v["ok"], ok, "{model}");
        // Final x is always 3 (shown through `locations`).
        for s in v["states"].as_array().unwrap() {
            assert_eq!(s["values"]["[x]"], 3, "{s}");
        }
    }
    // Two locked increments from 1: always 3 in the end.
    let inc = write(
        &scratch,
        "inc.litmus",
        "X86 INC\n{ x=1; }\n P0 | P1 ;\n LOCK INC [x] | LOCK INC [x] ;\nforall (x=3)\n",
    );
    let r = run(&["litmus", "-m", "tso", &inc]);
    assert!(
        r.stdout.contains("Observation INC Always 2 0"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("\nOk\n"), "{}", r.stdout);
}

/// Several files: one line each and a summary; --expect reports mismatches and exit 1.
#[test]
fn many_tests_and_expectations() {
    let scratch = Scratch::new("litmus-many");
    let x86 = dataset().join("x86");
    let files: Vec<String> = ["SB", "MP", "IRIW"]
        .iter()
        .map(|t| {
            x86.join(format!("{t}.litmus"))
                .to_str()
                .unwrap()
                .to_string()
        })
        .collect();
    // A wrong expectation: MP under tso is Never with 3 executions.
    let tsv = write(
        &scratch,
        "exp.tsv",
        "test\tmodel\tobservation\tpositive\tnegative\tstates\n\
         SB\ttso\tSometimes\t1\t3\t4\nMP\ttso\tSometimes\t1\t3\t4\nIRIW\ttso\tNever\t0\t15\t15\n",
    );
    let mut args = vec!["litmus", "--expect", &tsv];
    args.extend(files.iter().map(String::as_str));
    let r = run(&args);
    assert_eq!(r.status, 1, "{}{}", r.stdout, r.stderr);
    let line = |name: &str| {
        r.stdout
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no line for {name}: {}", r.stdout))
            .to_string()
    };
    assert!(line("SB").contains("as expected"), "{}", line("SB"));
    assert!(line("IRIW").contains("15 executions"), "{}", line("IRIW"));
    assert!(line("MP").contains("MISMATCH (observation, executions, positive/negative, states"));
    assert!(r.stdout.contains("mismatches (1):"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("3 tests x 1 models: 3 checked, 0 errors, 1 mismatches"),
        "{}",
        r.stdout
    );
}

/// A test outside the supported subset is a one-line error naming the construct, status 2.
#[test]
fn unsupported_constructs_are_named() {
    let scratch = Scratch::new("litmus-bad");
    let cases = [
        (
            "X86 A\n{}\n P0 ;\n ADD [x],$1 ;\nexists ([x]=1)\n",
            "`ADD [x],$1`",
        ),
        (
            "X86 B\n{}\n P0 ;\n MOV EAX,[EBX] ;\nexists (0:EAX=1)\n",
            "`[EBX]`",
        ),
        (
            "X86 C\n{ 0:EAX=x; }\n P0 ;\n MOV [x],$1 ;\nexists ([x]=1)\n",
            "`0:EAX=x`",
        ),
        (
            "ARM D\n{}\n P0 ;\n MOV R0,#1 ;\nexists (0:R0=1)\n",
            "architecture `ARM`",
        ),
        (
            "PPC F\n{}\n P0 ;\n dcbf r0,r2 ;\nexists (0:r1=1)\n",
            "`dcbf r0,r2`",
        ),
        ("X86 E\n{}\n P0 ;\n MOV [x],$1 ;\n", "no final condition"),
    ];
    for (i, (text, construct)) in cases.iter().enumerate() {
        let f = write(&scratch, &format!("t{i}.litmus"), text);
        let r = run(&["litmus", &f]);
        assert_eq!(r.status, 2, "{text}: {}{}", r.stdout, r.stderr);
        assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
        assert!(r.stderr.contains(construct), "{construct}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    }
    let r = run(&["litmus", "/nonexistent.litmus"]);
    assert_eq!(r.status, 2);
    assert!(r.stderr.contains("no such file"), "{}", r.stderr);
    let r = run(&[
        "litmus",
        "--model",
        "arm",
        &write(&scratch, "ok.litmus", cases[0].0),
    ]);
    assert_eq!(r.status, 2);
    assert!(r.stderr.contains("unknown model `arm`"), "{}", r.stderr);
}

/// The generated program is an ordinary program: kept with --keep, it runs on its own and
/// prints one final state.
#[test]
fn generated_program_runs_standalone() {
    let scratch = Scratch::new("litmus-keep");
    let keep = scratch.0.join("gen");
    let sb = dataset().join("x86/SB.litmus");
    let r = run(&[
        "litmus",
        "--keep",
        keep.to_str().unwrap(),
        sb.to_str().unwrap(),
    ]);
    assert_eq!(r.status, 0, "{}", r.stderr);
    let c = std::fs::read_to_string(keep.join("SB.c")).unwrap();
    assert!(c.contains("movl $1, litmus_x(%%rip)"), "{c}");
    let out = std::process::Command::new(keep.join("SB"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    // the threads print in whatever order they end
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].starts_with("0=") && lines[1].starts_with("1="),
        "{text}"
    );
}

/// A fixed sample of herd's POWER tests (every 10th of ../shared/litmus/ppc, every 4th of
/// ppc-deps, by name), lowered to ppc64le, cross-compiled and run under qemu-user with sc:
/// each compiles and runs, and what it observes is consistent with herd7's power result
/// (every sc execution is one of power's: a condition power never satisfies is never
/// satisfied, one it always satisfies always is). The only tests that may not run are those
/// written with what the lowering does not support, named as such: herd's symbolic
/// registers (`%t0`) and the old `final` syntax. The full run is `smc-run litmus -q -m sc
/// --expect DIR/expected.tsv DIR` (README, "Litmus tests").
#[test]
fn ppc_sample_consistent_with_herd7_power() {
    let dir = dataset();
    for (sub, every) in [("ppc", 10), ("ppc-deps", 4)] {
        let tests = dir.join(sub);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&tests)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "litmus"))
            .collect();
        files.sort();
        let sample: Vec<String> = files
            .iter()
            .step_by(every)
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        let tsv = tests.join("expected.tsv");
        let expected = expectations(&std::fs::read_to_string(&tsv).unwrap());
        let mut args = vec!["litmus", "--quiet", "--json", "--model", "sc", "--expect"];
        args.push(tsv.to_str().unwrap());
        args.extend(sample.iter().map(String::as_str));
        let r = run(&args);
        let json = r
            .json
            .as_ref()
            .unwrap_or_else(|| panic!("no JSON: {}\n{}", r.stdout, r.stderr));
        let mut problems = Vec::new();
        let mut checked = 0;
        for res in json["litmus"].as_array().unwrap() {
            let test = res["test"].as_str().unwrap_or("?").to_string();
            if let Some(e) = res.get("error") {
                let text = std::fs::read_to_string(res["file"].as_str().unwrap()).unwrap();
                let unsupported =
                    text.contains("%t0") || text.contains("%x0") || text.contains("\nfinal");
                if !(unsupported && e.as_str().is_some_and(|e| e.contains("unsupported"))) {
                    problems.push(format!("{} error: {e}", res["file"]));
                }
                continue;
            }
            checked += 1;
            let Some((obs, ..)) = expected.get(&(test.clone(), "power".to_string())) else {
                problems.push(format!("{test}: no power expectation"));
                continue;
            };
            let (pos, neg) = (
                res["positive"].as_u64().unwrap(),
                res["negative"].as_u64().unwrap(),
            );
            if (obs == "Never" && pos > 0) || (obs == "Always" && neg > 0) || pos + neg == 0 {
                problems.push(format!(
                    "{test}: herd7 power {obs}, smc-run sc {} {pos} {neg}",
                    res["observation"]
                ));
            }
        }
        assert!(problems.is_empty(), "{sub}:\n{}", problems.join("\n"));
        assert!(
            checked * 10 >= sample.len() * 9,
            "{sub}: {checked} of {}",
            sample.len()
        );
        assert_eq!(json["summary"]["mismatches"], 0, "{sub}: {}", r.stdout);
    }
}

/// The POWER model against herd7's `ppc.cat`, exactly: the observation and the executions
/// (herd's Positive + Negative), and no execution that ends blocked (an optimal exploration
/// has none). Load buffering, lwarx/stwcx. pairs that may fail, every fence and dependency
/// (found in the compiled binaries). Every test with dependencies (220), and a fixed quarter
/// of the others (every fourth by name: 202 of 806; README gives the command for all of them,
/// about 2.5 minutes on two cores with a release build).
#[test]
fn power_model_matches_herd7_on_the_ppc_tests() {
    let dir = dataset();
    let scratch = Scratch::new("litmus-power");
    for (sub, every) in [("ppc", 4), ("ppc-deps", 1)] {
        let tsv = dir.join(sub).join("expected.tsv");
        let mut files: Vec<String> = std::fs::read_dir(dir.join(sub))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "litmus"))
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        files.sort();
        let files: Vec<String> = files.into_iter().step_by(every).collect();
        let mut args = vec!["litmus", "--quiet", "--model", "power", "--expect"];
        args.push(tsv.to_str().unwrap());
        args.extend(files.iter().map(String::as_str));
        let r = common::run_in(&scratch.0, &args);
        assert_eq!(r.status, 0, "{sub}:\n{}{}", r.stdout, r.stderr);
        let n = files.len();
        let summary = format!("{n} tests x 1 models: {n} checked, 0 errors, 0 mismatches");
        assert!(
            r.stdout.contains(&summary) && !r.stdout.contains("blocked"),
            "{sub}:\n{}{}",
            r.stdout,
            r.stderr
        );
    }
}
