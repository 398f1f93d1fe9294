//! The progress line on stderr while exploring: executions, executions/s, blocked, elapsed,
//! current depth. Only when stderr is a terminal (indicatif hides it otherwise).

use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::engine::Stats;

pub struct Bar(Option<ProgressBar>);

impl Bar {
    /// A progress line, or nothing when `wanted` is false.
    pub fn new(wanted: bool) -> Bar {
        if !wanted {
            return Bar(None);
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(4));
        bar.set_style(ProgressStyle::with_template("{spinner} {msg}").expect("valid template"));
        Bar(Some(bar))
    }

    pub fn update(&self, s: &Stats, elapsed: Duration) {
        let Some(bar) = &self.0 else { return };
        let secs = elapsed.as_secs_f64().max(1e-9);
        bar.set_message(format!(
            "{} executions ({:.0}/s), {} blocked, depth {}, {:.1}s",
            s.executions,
            (s.executions + s.blocked) as f64 / secs,
            s.blocked,
            s.depth,
            secs
        ));
        bar.tick();
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}
