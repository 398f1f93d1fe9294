// A lost update: two threads (main one of them) load and then store a counter instead of
// fetch_add; the assertion panics under every model.
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::thread;
static C: AtomicUsize = AtomicUsize::new(0);
fn main() {
    let a = thread::spawn(|| { let v = C.load(SeqCst); C.store(v + 1, SeqCst); });
    let v = C.load(SeqCst);
    C.store(v + 1, SeqCst);
    a.join().unwrap();
    assert_eq!(C.load(SeqCst), 2, "lost update");
}
