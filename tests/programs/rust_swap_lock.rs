// A spin lock on AtomicBool::swap, taken by the main thread and a spawned one to increment a
// counter that is no atomic. The unlock is a release store (a plain store on x86): under pso
// the counter's store may reach memory after it, and an increment is lost.
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, Ordering::{Acquire, Release}};
use std::thread;

struct SpinLock {
    taken: AtomicBool,
    counter: UnsafeCell<u64>,
}

// SAFETY: `counter` is only touched with `taken` held.
unsafe impl Sync for SpinLock {}

static LOCK: SpinLock = SpinLock { taken: AtomicBool::new(false), counter: UnsafeCell::new(0) };

fn increment() {
    while LOCK.taken.swap(true, Acquire) {
        std::hint::spin_loop();
    }
    // SAFETY: the lock is held
    unsafe { *LOCK.counter.get() += 1 };
    LOCK.taken.store(false, Release);
}

fn main() {
    let other = thread::spawn(increment);
    increment();
    other.join().unwrap();
    // SAFETY: the other thread has been joined
    assert_eq!(unsafe { *LOCK.counter.get() }, 2, "lost update");
}
