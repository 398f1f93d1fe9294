// Each thread grows a vector, with an atomic load after every push: the load is a visible
// event while the pushed values are still in the thread's store buffer (TSO, PSO), and the
// next push moves the block (realloc). Correct under every model: the library must see the
// thread's own stores, and they must not land in the freed block afterwards.
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::thread;
static X: AtomicUsize = AtomicUsize::new(0);
fn work() -> usize {
    let mut v = Vec::new();
    for i in 0..20 {
        v.push(i);
        X.load(Relaxed);
    }
    v.iter().sum()
}
fn main() {
    let t = thread::spawn(work);
    let a = work();
    assert_eq!(a + t.join().unwrap(), 380);
}
