// A pipeline of two mpsc channels: main sends to a stage thread, which doubles the value and
// sends it on to main. Correct under every model.
use std::sync::mpsc;
use std::thread;
fn main() {
    let (tx1, rx1) = mpsc::channel::<u32>();
    let (tx2, rx2) = mpsc::channel::<u32>();
    let stage = thread::spawn(move || {
        let v = rx1.recv().unwrap();
        tx2.send(v * 2).unwrap();
    });
    tx1.send(21).unwrap();
    assert_eq!(rx2.recv().unwrap(), 42);
    stage.join().unwrap();
}
