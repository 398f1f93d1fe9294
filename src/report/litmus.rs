//! Litmus results as herd7 prints them (one test), as one line per test and model, and as
//! JSON.

use serde_json::{json, Value};

use crate::litmus::expect::Expected;
use crate::litmus::run::Checked;
use crate::litmus::{Quantifier, Test};

fn state_text(test: &Test, values: &[i64]) -> String {
    test.observed()
        .iter()
        .zip(values)
        .map(|(l, v)| format!("{l}={v};"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// herd7's output for one test, with the number of executions reaching each final state in
/// front of it (`*>` marks the states satisfying the proposition, as litmus7 does).
pub fn herd_text(test: &Test, c: &Checked) -> String {
    let v = &c.verdict;
    let mut s = format!(
        "Test {} {}\nStates {}\n",
        test.name,
        test.quantifier.expectation(),
        v.states.len()
    );
    for (values, count, sat) in &v.states {
        let mark = if *sat { "*>" } else { ":>" };
        s.push_str(&format!("{count:<6}{mark}{}\n", state_text(test, values)));
    }
    // herd counts the witnesses of `~exists` against the negated proposition.
    let (pos, neg) = match test.quantifier {
        Quantifier::NotExists => (v.negative, v.positive),
        _ => (v.positive, v.negative),
    };
    s.push_str(&format!(
        "{}\nWitnesses\nPositive: {pos} Negative: {neg}\nCondition {} {}\n\
         Observation {} {} {} {}\nTime {} {:.2}\n\
         Executions {} {} (blocked {}) model {}\n",
        if v.ok(test.quantifier) { "Ok" } else { "No" },
        test.quantifier.keyword(),
        test.prop,
        test.name,
        v.observation(),
        v.positive,
        v.negative,
        test.name,
        c.seconds,
        test.name,
        c.executions,
        c.blocked,
        c.model,
    ));
    s
}

/// One line: name, model, observation, Positive Negative, Ok/No, executions, time, and the
/// comparison with the expectation if there is one.
pub fn line(test: &Test, c: &Checked, expected: Option<&Expected>) -> String {
    let v = &c.verdict;
    let cmp = match expected {
        None => String::new(),
        Some(e) => match e.mismatch(c) {
            None => "  as expected".into(),
            Some(d) => format!("  MISMATCH ({d}; expected {})", e.summary()),
        },
    };
    format!(
        "{:<40} {:<4} {:<9} {:>3} {:>3}  {:<2}  {:>3} executions  {:.2}s{cmp}",
        test.name,
        c.model,
        v.observation(),
        v.positive,
        v.negative,
        if v.ok(test.quantifier) { "Ok" } else { "No" },
        c.executions,
        c.seconds,
    )
}

pub fn json(test: &Test, file: &str, c: &Checked, expected: Option<&Expected>) -> Value {
    let v = &c.verdict;
    let locs = test.observed();
    let states: Vec<Value> = v
        .states
        .iter()
        .map(|(values, count, sat)| {
            let vals: serde_json::Map<String, Value> = locs
                .iter()
                .zip(values)
                .map(|(l, x)| (l.to_string(), json!(x)))
                .collect();
            json!({ "values": vals, "count": count, "satisfies": sat })
        })
        .collect();
    json!({
        "test": test.name,
        "file": file,
        "model": c.model,
        "condition": format!("{} {}", test.quantifier.keyword(), test.prop),
        "states": states,
        "positive": v.positive,
        "negative": v.negative,
        "observation": v.observation(),
        "ok": v.ok(test.quantifier),
        "executions": c.executions,
        "blocked": c.blocked,
        "seconds": c.seconds,
        "expected": expected.map(|e| json!({
            "observation": e.observation,
            "positive": e.positive,
            "negative": e.negative,
            "states": e.states,
        })),
        "mismatch": expected.and_then(|e| e.mismatch(c)),
    })
}
