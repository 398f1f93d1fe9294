use std::sync::mpsc;
use std::thread;
fn main() {
    let (tx, rx) = mpsc::channel::<u32>();
    let t = thread::spawn(move || {
        tx.send(1).unwrap();
        tx.send(2).unwrap();
    });
    assert_eq!(rx.recv().unwrap() + rx.recv().unwrap(), 3);
    t.join().unwrap();
}
