// Store buffering on relaxed std::atomic: both loads may read 0 when stores wait in store
// buffers (tso, pso), never under sc.
#include <atomic>
#include <cassert>
#include <thread>

std::atomic<int> x{0}, y{0};
int r1, r2;

int main() {
    std::thread a([] {
        x.store(1, std::memory_order_relaxed);
        r1 = y.load(std::memory_order_relaxed);
    });
    std::thread b([] {
        y.store(1, std::memory_order_relaxed);
        r2 = x.load(std::memory_order_relaxed);
    });
    a.join();
    b.join();
    assert(!(r1 == 0 && r2 == 0));
}
