//! The progress line on stderr while exploring: executions, executions/s, blocked, elapsed,
//! current depth. Only when stderr is a terminal (indicatif hides it otherwise).

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::results::Stats;

/// The line, and when its message was last set (it is drawn 4 times a second: formatting it
/// after every execution cost more than 1% of a check).
pub struct Bar(Option<ProgressBar>, AtomicU64);

/// How often the message is formatted.
const EVERY: Duration = Duration::from_millis(100);

impl Bar {
    /// A progress line, or nothing when `wanted` is false or stderr is not a terminal.
    pub fn new(wanted: bool) -> Bar {
        if !wanted || !std::io::stderr().is_terminal() {
            return Bar(None, AtomicU64::new(0));
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(4));
        bar.set_style(ProgressStyle::with_template("{spinner} {msg}").expect("valid template"));
        Bar(Some(bar), AtomicU64::new(0))
    }

    pub fn update(&self, s: &Stats, elapsed: Duration) {
        let Some(bar) = &self.0 else { return };
        // microseconds of the last message, + 1 so that 0 means none yet (any worker may call)
        let now = elapsed.as_micros() as u64 + 1;
        let last = self.1.load(Relaxed);
        if last != 0 && now < last + EVERY.as_micros() as u64 {
            return;
        }
        self.1.store(now, Relaxed);
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
