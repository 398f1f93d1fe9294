// A C++20 atomic wait/notify hand-off (futex underneath). The release store and the notify
// are plain x86 code: under pso the data store may still be buffered when the flag is seen.
#include <atomic>
#include <cassert>
#include <thread>

std::atomic<int> flag{0};
int data = 0;

int main() {
    std::thread producer([] {
        data = 42;
        flag.store(1, std::memory_order_release);
        flag.notify_one();
    });
    flag.wait(0, std::memory_order_acquire);
    assert(data == 42);
    producer.join();
}
