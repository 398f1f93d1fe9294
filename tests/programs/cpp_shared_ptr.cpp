// Two threads copy a global shared_ptr and drop their copies: libstdc++ counts with locked
// instructions once the process has a thread (__libc_single_threaded), so the count is back
// at 1 after both joined.
#include <cassert>
#include <memory>
#include <thread>

static std::shared_ptr<int> shared = std::make_shared<int>(7);

static void borrow() {
    std::shared_ptr<int> mine = shared;
    assert(*mine == 7);
}

int main() {
    std::thread a(borrow), b(borrow);
    a.join();
    b.join();
    assert(shared.use_count() == 1);
}
