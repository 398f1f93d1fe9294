// An exception nothing catches: std::terminate, reported with what was thrown.
#include <stdexcept>
#include <thread>

int x = 0;

int main() {
    std::thread t([] { x = 1; });
    t.join();
    if (x == 1) throw std::runtime_error("boom");
}
