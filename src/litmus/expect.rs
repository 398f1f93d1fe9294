//! Reference results to compare with: a tab-separated table with the columns `test`, `model`,
//! `observation`, `positive`, `negative` and optionally `states` (herd7's numbers, as in
//! ../shared/litmus/x86/expected.tsv).

use std::collections::HashMap;

use super::run::Checked;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expected {
    pub observation: String,
    pub positive: u64,
    pub negative: u64,
    pub states: Option<u64>,
}

impl Expected {
    pub fn summary(&self) -> String {
        let states = self
            .states
            .map(|s| format!(" states {s}"))
            .unwrap_or_default();
        format!(
            "{} {} {}{states}",
            self.observation, self.positive, self.negative
        )
    }

    /// What differs between this expectation and a result, if anything.
    pub fn mismatch(&self, got: &Checked) -> Option<String> {
        let v = &got.verdict;
        let mut diffs = Vec::new();
        if self.observation != v.observation() {
            diffs.push("observation");
        }
        // herd counts candidate executions with their coherence order; a model explored over
        // weak traces (ra) counts fewer, so only its verdict and final states compare
        let counted = crate::model::named(&got.model, None).is_ok_and(|m| m.enumerates_coherence());
        if counted && self.positive + self.negative != got.executions {
            diffs.push("executions");
        }
        if counted && (self.positive, self.negative) != (v.positive, v.negative) {
            diffs.push("positive/negative");
        }
        if self.states.is_some_and(|s| s != v.states.len() as u64) {
            diffs.push("states");
        }
        (!diffs.is_empty()).then(|| diffs.join(", "))
    }
}

/// The model whose expectations bound a model that has none of its own: `power` for POWER
/// tests checked under the stronger sc, tso and pso.
pub fn weaker_model(model: &str) -> Option<&'static str> {
    matches!(model, "sc" | "tso" | "pso").then_some("power")
}

impl Expected {
    /// What a result under a stronger model contradicts in this expectation of a weaker one:
    /// the condition holds in an execution where the weaker model never lets it, or fails in
    /// one where the weaker model always holds it (every execution of the stronger model is
    /// one of the weaker's).
    pub fn contradiction(&self, got: &Checked) -> Option<String> {
        let v = &got.verdict;
        match self.observation.as_str() {
            "Never" if v.positive > 0 => Some("a state the weaker model never reaches".into()),
            "Always" if v.negative > 0 => Some("a state the weaker model never reaches".into()),
            _ => None,
        }
    }
}

/// Expectations by (test name, model).
#[derive(Debug, Default)]
pub struct Expectations(HashMap<(String, String), Expected>);

impl Expectations {
    pub fn parse(text: &str) -> Result<Expectations, String> {
        let mut lines = text.lines().enumerate();
        let header: Vec<&str> = match lines.next() {
            Some((_, h)) => h.split('\t').collect(),
            None => return Err("empty expectation file".into()),
        };
        let col = |name: &str| header.iter().position(|h| h.trim() == name);
        let need =
            |name: &str| col(name).ok_or_else(|| format!("the header has no `{name}` column"));
        let (test, model, obs, pos, neg) = (
            need("test")?,
            need("model")?,
            need("observation")?,
            need("positive")?,
            need("negative")?,
        );
        let states = col("states");
        let mut map = HashMap::new();
        for (n, line) in lines {
            if line.trim().is_empty() {
                continue;
            }
            let f: Vec<&str> = line.split('\t').map(str::trim).collect();
            let bad = || format!("line {}: malformed row", n + 1);
            let get = |i: usize| f.get(i).copied().ok_or_else(bad);
            let num = |i: usize| get(i)?.parse::<u64>().map_err(|_| bad());
            let e = Expected {
                observation: get(obs)?.to_string(),
                positive: num(pos)?,
                negative: num(neg)?,
                states: states.map(num).transpose()?,
            };
            if !["Never", "Sometimes", "Always"].contains(&e.observation.as_str()) {
                return Err(format!(
                    "line {}: unknown observation `{}`",
                    n + 1,
                    e.observation
                ));
            }
            map.insert((get(test)?.to_string(), get(model)?.to_string()), e);
        }
        Ok(Expectations(map))
    }

    pub fn get(&self, test: &str, model: &str) -> Option<&Expected> {
        self.0.get(&(test.to_string(), model.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_herd_tables() {
        let e = Expectations::parse(
            "test\tmodel\tobservation\tpositive\tnegative\tstates\nSB\ttso\tSometimes\t1\t3\t4\n",
        )
        .unwrap();
        assert_eq!(
            e.get("SB", "tso"),
            Some(&Expected {
                observation: "Sometimes".into(),
                positive: 1,
                negative: 3,
                states: Some(4)
            })
        );
        assert_eq!(e.get("SB", "sc"), None);
        assert!(Expectations::parse("test\tmodel\n")
            .unwrap_err()
            .contains("observation"));
        assert!(Expectations::parse(
            "test\tmodel\tobservation\tpositive\tnegative\nSB\tsc\tNever\tx\t3\n"
        )
        .unwrap_err()
        .contains("line 2"));
    }

    /// A result under a stronger model within a weaker one's expectation, or against it.
    #[test]
    fn weaker_expectations_bound_results() {
        use super::super::Verdict;
        let result = |positive, negative| Checked {
            model: "sc".into(),
            verdict: Verdict {
                states: Vec::new(),
                positive,
                negative,
            },
            executions: positive + negative,
            blocked: 0,
            seconds: 0.0,
        };
        let power = |observation: &str| Expected {
            observation: observation.into(),
            positive: 1,
            negative: 1,
            states: None,
        };
        assert_eq!(weaker_model("tso"), Some("power"));
        assert_eq!(weaker_model("ra"), None);
        // fewer behaviours: never a contradiction
        assert_eq!(power("Sometimes").contradiction(&result(0, 3)), None);
        assert_eq!(power("Never").contradiction(&result(0, 3)), None);
        assert_eq!(power("Always").contradiction(&result(2, 0)), None);
        // a behaviour power does not have
        assert!(power("Never").contradiction(&result(1, 2)).is_some());
        assert!(power("Always").contradiction(&result(1, 2)).is_some());
    }
}
