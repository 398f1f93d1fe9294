//! `smc-run combine`: the `--json` results of the N shards of one check (`--shard K/N`) added up
//! into one verdict. Every shard must be there exactly once, for the same program and model.

use serde_json::{json, Value};

use super::JSON_SCHEMA;

/// One shard's result as its `--json` line gave it.
pub struct ShardResult {
    /// Where it came from, for messages.
    pub source: String,
    pub value: Value,
}

/// The last non-empty line of `text` as a JSON object (`--json` ends stdout with it, and the
/// text report may come before).
pub fn parse(source: &str, text: &str) -> Result<ShardResult, String> {
    let line = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .ok_or_else(|| format!("{source}: empty, not the --json output of a shard"))?;
    let value: Value = serde_json::from_str(line)
        .map_err(|e| format!("{source}: its last line is not JSON ({e})"))?;
    if value["schema"] != json!(JSON_SCHEMA) {
        return Err(format!(
            "{source}: not a result of this smc-run (JSON schema {JSON_SCHEMA} expected)"
        ));
    }
    Ok(ShardResult {
        source: source.to_string(),
        value,
    })
}

/// The combined result: a JSON object like one run's, with `shards` and each error's shard.
pub fn combine(results: &[ShardResult]) -> Result<Value, String> {
    let first = results.first().ok_or("no results to combine")?;
    let shard_of = |r: &ShardResult| -> Result<(u64, u64), String> {
        let s = r.value["shard"].as_str().unwrap_or_default();
        s.split_once('/')
            .and_then(|(k, n)| Some((k.parse().ok()?, n.parse().ok()?)))
            .filter(|&(k, n)| 1 <= k && k <= n)
            .ok_or_else(|| format!("{}: not the result of a --shard run", r.source))
    };
    let count = shard_of(first)?.1;
    let mut seen = vec![None::<&str>; count as usize];
    for r in results {
        let (k, n) = shard_of(r)?;
        for field in ["program", "model"] {
            if r.value[field] != first.value[field] {
                return Err(format!(
                    "{} and {} are results of different checks ({field} {} and {})",
                    first.source, r.source, first.value[field], r.value[field]
                ));
            }
        }
        if n != count {
            return Err(format!(
                "{} is shard {k}/{n}, {} one of {count}",
                r.source, first.source
            ));
        }
        if let Some(other) = seen[k as usize - 1].replace(&r.source) {
            return Err(format!(
                "shard {k}/{n} is given twice ({other}, {})",
                r.source
            ));
        }
    }
    let missing: Vec<String> = (1..=count)
        .filter(|k| seen[*k as usize - 1].is_none())
        .map(|k| format!("{k}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "shard {} missing: the verdict needs every shard",
            missing.join(", ")
        ));
    }
    // Shards that ran to their end must have walked the same top of the tree; if the program
    // behaved differently in their first executions, their parts need not add up to the whole.
    if results.iter().all(|r| !r.value["error"].is_object()) {
        if let Some(other) = results
            .iter()
            .find(|r| r.value["top"] != first.value["top"])
        {
            return Err(format!(
                "{} and {} split the exploration differently (top {} and {}): the program's \
                 first executions are not deterministic, so the shards may not cover every \
                 execution; check it in one run (-j) instead",
                first.source, other.source, first.value["top"], other.value["top"]
            ));
        }
    }
    let total =
        |field: &str| -> u64 { results.iter().filter_map(|r| r.value[field].as_u64()).sum() };
    let mut ordered: Vec<&ShardResult> = results.iter().collect();
    ordered.sort_by_key(|r| shard_of(r).map(|s| s.0).unwrap_or(0));
    let mut errors = Vec::new();
    for r in &ordered {
        for e in r.value["errors"].as_array().into_iter().flatten() {
            let mut e = e.clone();
            e["shard"] = r.value["shard"].clone();
            errors.push(e);
        }
    }
    let error = ordered
        .iter()
        .find(|r| r.value["error"].is_object())
        .map(|r| {
            let mut e = r.value["error"].clone();
            e["shard"] = r.value["shard"].clone();
            e
        });
    let bounded = total("bounded");
    let verdict = super::verdict_of(error.is_some(), bounded, total("executions"));
    let elapsed: f64 = results
        .iter()
        .filter_map(|r| r.value["elapsed_s"].as_f64())
        .sum();
    let mut o = json!({
        "schema": JSON_SCHEMA,
        "verdict": verdict,
        "model": first.value["model"],
        "program": first.value["program"],
        "executions": total("executions"),
        "blocked": total("blocked"),
        "bounded": bounded,
        "events": total("events"),
        "elapsed_s": (elapsed * 1e6).round() / 1e6,
        "shards": count,
    });
    if !errors.is_empty() {
        o["errors"] = json!(errors);
    }
    if let Some(e) = error {
        o["error"] = e;
    }
    Ok(o)
}

/// The combined result as text: the totals, each shard's errors, the verdict.
pub fn text(o: &Value) -> String {
    let mut out = format!(
        "combined {} shards of {} under {}\nexecutions: {}  blocked: {}  cut at the step bound: {}  \
         time: {:.2}s of checking in all\n",
        o["shards"],
        o["program"].as_str().unwrap_or("?"),
        o["model"].as_str().unwrap_or("?"),
        o["executions"],
        o["blocked"],
        o["bounded"],
        o["elapsed_s"].as_f64().unwrap_or(0.0)
    );
    for e in o["errors"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "  shard {}: {}: {}{}\n",
            e["shard"].as_str().unwrap_or("?"),
            e["kind"].as_str().unwrap_or("?"),
            e["message"].as_str().unwrap_or("?"),
            e["schedule_file"]
                .as_str()
                .map(|f| format!(" (schedule {f})"))
                .unwrap_or_default()
        ));
    }
    let error = o["error"].is_object().then(|| {
        (
            o["error"]["kind"].as_str().unwrap_or("?"),
            o["error"]["message"].as_str().unwrap_or("?"),
        )
    });
    out.push_str(&super::verdict_line(
        o["model"].as_str().unwrap_or("?"),
        error,
        o["bounded"].as_u64().unwrap_or(0),
        o["executions"].as_u64().unwrap_or(0),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shard(k: u64, n: u64, executions: u64, error: Option<&str>) -> ShardResult {
        let mut v = json!({
            "schema": JSON_SCHEMA, "verdict": "ok", "model": "tso", "program": "a.out",
            "executions": executions, "blocked": 1, "bounded": 0, "events": 10,
            "elapsed_s": 0.5, "jobs": 2, "shard": format!("{k}/{n}"),
            "top": {"leaves": 40, "hash": "00000000deadbeef"},
        });
        if let Some(m) = error {
            let e = json!({"kind": "assertion", "message": m, "count": 1});
            v["verdict"] = json!("error");
            v["errors"] = json!([e.clone()]);
            v["error"] = e;
        }
        let text = format!("some report text\n{v}\n");
        parse(&format!("shard{k}.json"), &text).unwrap()
    }

    #[test]
    fn adds_up_every_shard() {
        let o = combine(&[
            shard(2, 3, 5, None),
            shard(1, 3, 7, None),
            shard(3, 3, 1, None),
        ])
        .unwrap();
        assert_eq!(o["verdict"], "ok");
        assert_eq!(o["executions"], 13);
        assert_eq!(o["blocked"], 3);
        assert_eq!(o["shards"], 3);
        assert!(text(&o).contains("verdict: OK"));
    }

    #[test]
    fn one_error_makes_the_verdict() {
        let o = combine(&[shard(1, 2, 5, None), shard(2, 2, 3, Some("boom"))]).unwrap();
        assert_eq!(o["verdict"], "error");
        assert_eq!(o["error"]["shard"], "2/2");
        assert!(text(&o).contains("shard 2/2: assertion: boom"));
    }

    #[test]
    fn missing_twice_and_mixed_shards_are_refused() {
        let err = |rs: &[ShardResult]| combine(rs).unwrap_err();
        assert!(err(&[shard(1, 3, 1, None), shard(3, 3, 1, None)]).contains("shard 2/3 missing"));
        assert!(err(&[shard(1, 2, 1, None), shard(1, 2, 1, None)]).contains("given twice"));
        assert!(err(&[shard(1, 2, 1, None), shard(2, 3, 1, None)]).contains("one of 2"));
        let mut other = shard(2, 2, 1, None);
        other.value["model"] = json!("sc");
        assert!(err(&[shard(1, 2, 1, None), other]).contains("different checks"));
        let mut other = shard(2, 2, 1, None);
        other.value["top"]["leaves"] = json!(41);
        assert!(err(&[shard(1, 2, 1, None), other]).contains("split the exploration differently"));
        // an error found is real whatever the top: no complaint then
        let mut other = shard(2, 2, 1, Some("boom"));
        other.value["top"]["leaves"] = json!(41);
        assert!(combine(&[shard(1, 2, 1, None), other]).is_ok());
        assert!(parse("x", "not json\n").is_err());
        assert!(parse("x", "").is_err());
    }
}
