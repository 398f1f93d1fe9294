// A Mutex counter and a Condvar hand-off (futexes underneath): correct under every model.
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
fn main() {
    let pair = Arc::new((Mutex::new(0u32), Condvar::new()));
    let p2 = Arc::clone(&pair);
    let t = thread::spawn(move || { let (m, c) = &*p2; *m.lock().unwrap() += 1; c.notify_one(); });
    let (m, c) = &*pair;
    let mut g = m.lock().unwrap();
    while *g == 0 { g = c.wait(g).unwrap(); }
    assert_eq!(*g, 1);
    drop(g);
    t.join().unwrap();
}
