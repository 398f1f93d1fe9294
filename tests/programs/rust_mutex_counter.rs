// Two threads add to a Mutex-protected counter three times each: the lock is contended, and
// its slow path (std's futex `lock_contended`) runs. Correct under every model.
use std::sync::{Arc, Mutex};
use std::thread;
fn main() {
    let count = Arc::new(Mutex::new(0u32));
    let c2 = Arc::clone(&count);
    let t = thread::spawn(move || {
        for _ in 0..3 {
            *c2.lock().unwrap() += 1;
        }
    });
    for _ in 0..3 {
        *count.lock().unwrap() += 1;
    }
    t.join().unwrap();
    assert_eq!(*count.lock().unwrap(), 6);
}
