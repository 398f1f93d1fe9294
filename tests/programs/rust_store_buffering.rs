// Store buffering on relaxed atomics: both loads may read 0 when stores wait in store
// buffers (tso), and the assertion panics.
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::thread;
static X: AtomicUsize = AtomicUsize::new(0);
static Y: AtomicUsize = AtomicUsize::new(0);
fn main() {
    let a = thread::spawn(|| { X.store(1, Relaxed); Y.load(Relaxed) });
    let b = thread::spawn(|| { Y.store(1, Relaxed); X.load(Relaxed) });
    let (r1, r2) = (a.join().unwrap(), b.join().unwrap());
    assert!(!(r1 == 0 && r2 == 0), "both read 0");
}
