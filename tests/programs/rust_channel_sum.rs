// Two messages over an mpsc channel, and an assertion that expects the wrong sum: a panic in
// the first execution, whose schedule must replay to the same panic.
use std::sync::mpsc;
use std::thread;
fn main() {
    let (tx, rx) = mpsc::channel::<u32>();
    let t = thread::spawn(move || {
        tx.send(1).unwrap();
        tx.send(2).unwrap();
    });
    let sum = rx.recv().unwrap() + rx.recv().unwrap();
    assert_eq!(sum, 4, "wrong sum");
    t.join().unwrap();
}
