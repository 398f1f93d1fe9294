// park/unpark hand-off on an AtomicBool: correct under every model.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
fn main() {
    let flag = Arc::new(AtomicBool::new(false));
    let f2 = Arc::clone(&flag);
    let t = thread::spawn(move || { while !f2.load(Ordering::Acquire) { thread::park(); } });
    flag.store(true, Ordering::Release);
    t.thread().unpark();
    t.join().unwrap();
}
