// Threads that throw and catch: each reads a flag another may have set, sets it, and throws
// if it was the first to see it clear; its handler counts the catch. Built with ONE_CATCH, main
// expects exactly one catch, which two threads reading the clear flag both refute.
#include <atomic>
#include <cassert>
#include <stdexcept>
#include <thread>

static volatile int flag;
static std::atomic<int> caught{0};
static int threw[2];

static void check_first(int seen) {
    if (seen == 0) throw std::runtime_error("first to see the flag clear");
}

__attribute__((noinline)) static void work(int id) {
    int seen = flag;
    flag = 1;
    try {
        check_first(seen);
    } catch (const std::runtime_error &) {
        threw[id] = 1;
        caught.fetch_add(1);
    }
}

int main() {
    std::thread a(work, 0), b(work, 1);
    a.join();
    b.join();
#ifdef ONE_CATCH
    assert(caught == 1);
#else
    assert(caught >= 1 && caught == threw[0] + threw[1]);
#endif
    return 0;
}
