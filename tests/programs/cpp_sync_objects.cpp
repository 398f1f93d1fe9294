// std::call_once, std::recursive_mutex (locked twice by its owner), std::shared_mutex,
// std::jthread and thread_local: no error anywhere.
#include <cassert>
#include <mutex>
#include <shared_mutex>
#include <thread>

std::once_flag once;
int inits = 0;
thread_local int mine = 0;
std::shared_mutex sm;
std::recursive_mutex rm;
int shared = 0;

int main() {
    {
        std::jthread a([] {
            std::call_once(once, [] { inits++; });
            mine++;
            std::unique_lock l(sm);
            std::lock_guard r1(rm);
            std::lock_guard r2(rm);
            shared += mine;
        });
        std::jthread b([] {
            std::call_once(once, [] { inits++; });
            std::shared_lock l(sm);
            assert(shared == 0 || shared == 1);
        });
    }
    assert(inits == 1 && shared == 1 && mine == 0);
}
