//! Saved schedules: what `--replay FILE` needs to force a program along a counterexample.
//! A JSON object:
//!
//! ```json
//! {"smc_schedule": 1, "program": "./a.out", "binary": "build-id:5f0c...", "args": [],
//!  "model": "tso", "buffer_bound": null,
//!  "error": {"kind": "assertion", "message": "..."},
//!  "steps": [{"thread": [], "alt": 0}, {"thread": [1], "alt": 0}, ...]}
//! ```
//!
//! A step names the thread that ran by its spawn-tree path (`[]` main, `[1]` its first child,
//! `[1, 2]` that thread's second child; store-buffer updaters have keys from 2^63), so the file
//! does not depend on the order the exploration met the threads. `binary` is the program's
//! `Program::identity` (absent in files saved before it was recorded): a replay against
//! another build is refused with a message saying so.

use serde_json::{json, Value};

use crate::event::{Reply, MAX_ACCESS};
use crate::results::{Counterexample, Step};

pub const SCHEDULE_SCHEMA: u64 = 1;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    pub program: String,
    /// The build of the program the schedule was saved for (`Program::identity`).
    pub binary: Option<String>,
    /// Stack and TLS memory the exploration treated as shared ([lo, hi) ranges): the replay
    /// must see the same accesses.
    pub shared: Vec<(u64, u64)>,
    pub args: Vec<String>,
    pub model: String,
    pub buffer_bound: Option<usize>,
    pub kind: String,
    pub message: String,
    pub steps: Vec<Step>,
    /// Under the graph engine: the reply of each step (a read's bytes), which the replay gives
    /// again; and what the report says of the trace (which write each read read, coherence
    /// order), which a replay cannot find out again.
    pub replies: Vec<Reply>,
    pub sources: Vec<(usize, Option<usize>)>,
    pub coherence: Vec<Vec<usize>>,
    /// The steps after which their thread hung (a replay sets it aside after a short limit
    /// instead of waiting the full one again). Absent in a file: none.
    pub hung: Vec<usize>,
}

impl Schedule {
    pub fn new(
        cx: &Counterexample,
        program: &str,
        binary: &str,
        shared: &[(u64, u64)],
        args: &[String],
        model: &str,
        buffer_bound: Option<usize>,
    ) -> Schedule {
        Schedule {
            program: program.to_string(),
            binary: Some(binary.to_string()),
            shared: shared.to_vec(),
            args: args.to_vec(),
            model: model.to_string(),
            buffer_bound,
            kind: cx.kind.name().to_string(),
            message: cx.message.clone(),
            steps: cx.schedule.clone(),
            replies: cx.replies.clone(),
            sources: cx.sources.clone(),
            coherence: cx.coherence.clone(),
            hung: cx.hung.clone(),
        }
    }

    /// What a replay of the schedule follows.
    pub fn followed(&self) -> crate::results::Schedule {
        crate::results::Schedule {
            steps: self.steps.clone(),
            replies: self.replies.clone(),
            hung: self.hung.clone(),
        }
    }

    pub fn to_json(&self) -> Value {
        json!({
            "smc_schedule": SCHEDULE_SCHEMA,
            "program": self.program,
            "binary": self.binary,
            "shared": self.shared.iter().map(|&(lo, hi)| json!([lo, hi])).collect::<Vec<_>>(),
            "args": self.args,
            "model": self.model,
            "buffer_bound": self.buffer_bound,
            "error": { "kind": self.kind, "message": self.message },
            "steps": self.steps.iter().map(|s| json!({"thread": s.thread, "alt": s.alt})).collect::<Vec<_>>(),
            "replies": self.replies.iter().map(reply_json).collect::<Vec<_>>(),
            "sources": sources_json(&self.sources),
            "coherence": self.coherence,
            "hung": self.hung,
        })
    }

    /// Read a saved schedule; the error says what is wrong with the file.
    pub fn parse(text: &str) -> Result<Schedule, String> {
        let v: Value =
            serde_json::from_str(text).map_err(|e| format!("not a schedule file: {e}"))?;
        match v["smc_schedule"].as_u64() {
            Some(SCHEDULE_SCHEMA) => {}
            Some(n) => {
                return Err(format!(
                    "schedule format {n} is not supported (this smc-run reads {SCHEDULE_SCHEMA})"
                ))
            }
            None => return Err("not a schedule file (no `smc_schedule`)".into()),
        }
        let text_of = |v: &Value, what: &str| {
            v.as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("malformed schedule: `{what}`"))
        };
        let args = v["args"]
            .as_array()
            .ok_or("malformed schedule: `args`")?
            .iter()
            .map(|a| text_of(a, "args"))
            .collect::<Result<_, _>>()?;
        let buffer_bound = match &v["buffer_bound"] {
            Value::Null => None,
            b => Some(b.as_u64().ok_or("malformed schedule: `buffer_bound`")? as usize),
        };
        let steps = v["steps"]
            .as_array()
            .ok_or("malformed schedule: `steps`")?
            .iter()
            .map(|s| {
                let thread = s["thread"]
                    .as_array()
                    .and_then(|p| p.iter().map(Value::as_u64).collect::<Option<Vec<u64>>>())
                    .ok_or("malformed schedule: a step's `thread`")?;
                let alt = s["alt"]
                    .as_u64()
                    .and_then(|a| u32::try_from(a).ok())
                    .ok_or("malformed schedule: a step's `alt`")?;
                Ok(Step { thread, alt })
            })
            .collect::<Result<_, String>>()?;
        Ok(Schedule {
            program: text_of(&v["program"], "program")?,
            binary: match &v["binary"] {
                Value::Null => None,
                b => Some(text_of(b, "binary")?),
            },
            shared: match &v["shared"] {
                Value::Null => Vec::new(),
                r => r
                    .as_array()
                    .ok_or("malformed schedule: `shared`")?
                    .iter()
                    .map(|p| Some((p[0].as_u64()?, p[1].as_u64()?)).filter(|(lo, hi)| lo < hi))
                    .collect::<Option<Vec<_>>>()
                    .ok_or("malformed schedule: `shared`")?,
            },
            args,
            model: text_of(&v["model"], "model")?,
            buffer_bound,
            kind: text_of(&v["error"]["kind"], "error.kind")?,
            message: text_of(&v["error"]["message"], "error.message")?,
            steps,
            replies: list(&v["replies"], "replies", reply_of)?,
            sources: list(&v["sources"], "sources", source_of)?,
            coherence: list(&v["coherence"], "coherence", order_of)?,
            hung: list(&v["hung"], "hung", |h| Some(h.as_u64()? as usize))?,
        })
    }
}

/// Which write each read read: `[read, write]` (`null`: the initial value), indices in the
/// trace.
pub(crate) fn sources_json(sources: &[(usize, Option<usize>)]) -> Value {
    sources.iter().map(|&(r, w)| json!([r, w])).collect()
}

/// An item of [`sources_json`].
pub(crate) fn source_of(s: &Value) -> Option<(usize, Option<usize>)> {
    let r = s[0].as_u64()? as usize;
    match &s[1] {
        Value::Null => Some((r, None)),
        w => Some((r, Some(w.as_u64()? as usize))),
    }
}

/// A location's writes in coherence order, as indices in the trace.
pub(crate) fn order_of(o: &Value) -> Option<Vec<usize>> {
    o.as_array()?
        .iter()
        .map(|i| Some(i.as_u64()? as usize))
        .collect()
}

/// A reply as `{"value": v, "patch": [mask, "bytes in hex"]}` (no `patch`: memory as it is).
pub(crate) fn reply_json(r: &Reply) -> Value {
    let mut v = json!({ "value": r.value });
    if let Some((mask, bytes)) = &r.patch {
        let n = (64 - mask.leading_zeros()) as usize;
        let hex: String = bytes[..n].iter().map(|b| format!("{b:02x}")).collect();
        v["patch"] = json!([mask, hex]);
    }
    v
}

/// A reply of [`reply_json`]; `None` if it is not one.
pub(crate) fn reply_of(v: &Value) -> Option<Reply> {
    let value = v["value"].as_u64()?;
    let patch = match &v["patch"] {
        Value::Null => None,
        p => {
            let mask = p[0].as_u64()?;
            let hex = p[1].as_str()?;
            let mut bytes = [0u8; MAX_ACCESS];
            if hex.len() % 2 != 0 || hex.len() / 2 > MAX_ACCESS {
                return None;
            }
            for (i, b) in bytes.iter_mut().enumerate().take(hex.len() / 2) {
                *b = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
            }
            Some((mask, bytes))
        }
    };
    Some(Reply { value, patch })
}

/// An optional list field (absent in interleaving schedules), each item read by `item`.
fn list<T>(v: &Value, what: &str, item: impl Fn(&Value) -> Option<T>) -> Result<Vec<T>, String> {
    match v {
        Value::Null => Ok(Vec::new()),
        v => v
            .as_array()
            .and_then(|a| a.iter().map(&item).collect())
            .ok_or_else(|| format!("malformed schedule: `{what}`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_garbage() {
        let s = Schedule {
            program: "./a.out".into(),
            binary: Some("build-id:00ff".into()),
            shared: vec![(0x7000_0000, 0x7000_0008)],
            args: vec!["-n".into(), "3".into()],
            model: "pso".into(),
            buffer_bound: Some(2),
            kind: "assertion".into(),
            message: "x == 1".into(),
            steps: vec![
                Step {
                    thread: vec![],
                    alt: 0,
                },
                Step {
                    thread: vec![1, 1 << 63],
                    alt: 1,
                },
            ],
            replies: Vec::new(),
            sources: Vec::new(),
            coherence: Vec::new(),
            hung: vec![1],
        };
        assert_eq!(Schedule::parse(&s.to_json().to_string()), Ok(s.clone()));
        // a file without `hung` (written before it was saved) hangs nowhere
        let mut old = s.to_json();
        old.as_object_mut().unwrap().remove("hung");
        let none = Schedule {
            hung: Vec::new(),
            ..s.clone()
        };
        assert_eq!(Schedule::parse(&old.to_string()), Ok(none));
        // a graph engine's: replies, sources and coherence order
        let mut patch = [0u8; MAX_ACCESS];
        patch[..4].copy_from_slice(&[1, 0, 0, 0x80]);
        let s = Schedule {
            replies: vec![
                Reply::default(),
                Reply {
                    value: 3,
                    patch: Some((0xf, patch)),
                },
            ],
            sources: vec![(1, None), (4, Some(2))],
            coherence: vec![vec![3, 2]],
            ..s
        };
        assert_eq!(Schedule::parse(&s.to_json().to_string()), Ok(s));
        assert!(Schedule::parse("hello")
            .unwrap_err()
            .contains("not a schedule"));
        assert!(Schedule::parse("{}").unwrap_err().contains("smc_schedule"));
        assert!(Schedule::parse(r#"{"smc_schedule": 9}"#)
            .unwrap_err()
            .contains("format 9"));
        let bad = r#"{"smc_schedule":1,"program":"p","args":[],"model":"sc","buffer_bound":null,
            "error":{"kind":"k","message":"m"},"steps":[{"thread":"x","alt":0}]}"#;
        assert!(Schedule::parse(bad).unwrap_err().contains("thread"));
    }
}
