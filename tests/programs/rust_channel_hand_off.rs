// One message through an mpsc channel: the receiver waits for the sender's slot with std's
// backoff (a step that grows at every iteration), an await loop once its step is left out of
// the await hash. Correct under every model.
use std::sync::mpsc;
use std::thread;
fn main() {
    let (tx, rx) = mpsc::channel::<u32>();
    let t = thread::spawn(move || {
        tx.send(7).unwrap();
    });
    assert_eq!(rx.recv().unwrap(), 7);
    t.join().unwrap();
}
