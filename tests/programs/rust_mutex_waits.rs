// The child writes 1 then 2 under the lock; main reads under it. Main reads 2 only when it
// waited for the child's lock (the contended slow path) and took it after: a panic. Reading 1
// would mean the lock let main in while the child held it.
use std::sync::{Arc, Mutex};
use std::thread;
fn main() {
    let m = Arc::new(Mutex::new(0u32));
    let m2 = Arc::clone(&m);
    let t = thread::spawn(move || {
        let mut g = m2.lock().unwrap();
        *g = 1;
        *g = 2;
    });
    let v = *m.lock().unwrap();
    assert_ne!(v, 1, "main got the lock while the child held it");
    assert_ne!(v, 2, "main took the lock after the child");
    t.join().unwrap();
}
