// A test-and-set spin lock on std::atomic_flag, taken by two std::threads to increment a plain
// counter. The release clear is a plain store on x86: under pso the counter's store may reach
// memory after it, and the other thread's increment is lost.
#include <atomic>
#include <cassert>
#include <thread>

static std::atomic_flag lock = ATOMIC_FLAG_INIT;
static int counter;

static void increment() {
    while (lock.test_and_set(std::memory_order_acquire)) {
    }
    counter = counter + 1;
    lock.clear(std::memory_order_release);
}

int main() {
    std::thread a(increment), b(increment);
    a.join();
    b.join();
    assert(counter == 2);
}
