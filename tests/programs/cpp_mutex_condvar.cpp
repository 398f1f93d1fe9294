// A std::mutex counter and a std::condition_variable hand-off: correct under every model.
#include <cassert>
#include <condition_variable>
#include <mutex>
#include <thread>

std::mutex m;
std::condition_variable cv;
int count = 0;
bool ready = false;

int main() {
    std::thread t1([] {
        std::lock_guard<std::mutex> g(m);
        count++;
    });
    std::thread t2([] {
        {
            std::lock_guard<std::mutex> g(m);
            count++;
            ready = true;
        }
        cv.notify_one();
    });
    {
        std::unique_lock<std::mutex> l(m);
        cv.wait(l, [] { return ready; });
    }
    t1.join();
    t2.join();
    assert(count == 2);
}
