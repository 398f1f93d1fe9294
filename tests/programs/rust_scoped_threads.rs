// Scoped threads that each add one to a counter: with `fetch_add` the sum is right under every
// model; with "racy" as the first argument each loads and then stores, and an update is lost.
// Each thread's start and end also update std's own records of threads (under a lock), which
// the check does not explore: see UNSEEN_FUNCTIONS in src/site.rs.
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::thread;

static COUNTER: AtomicUsize = AtomicUsize::new(0);

fn main() {
    let racy = std::env::args().nth(1).is_some_and(|a| a == "racy");
    thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(move || {
                if racy {
                    let v = COUNTER.load(SeqCst);
                    COUNTER.store(v + 1, SeqCst);
                } else {
                    COUNTER.fetch_add(1, SeqCst);
                }
            });
        }
    });
    assert_eq!(COUNTER.load(SeqCst), 2, "lost update");
}
