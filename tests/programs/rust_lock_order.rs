// Two Mutexes taken in opposite orders by two threads: a deadlock when each holds its first.
use std::sync::{Arc, Mutex};
use std::thread;
fn main() {
    let a = Arc::new(Mutex::new(0u32));
    let b = Arc::new(Mutex::new(0u32));
    let (a2, b2) = (Arc::clone(&a), Arc::clone(&b));
    let t = thread::spawn(move || {
        let _x = a2.lock().unwrap();
        let _y = b2.lock().unwrap();
    });
    {
        let _y = b.lock().unwrap();
        let _x = a.lock().unwrap();
    }
    t.join().unwrap();
}
