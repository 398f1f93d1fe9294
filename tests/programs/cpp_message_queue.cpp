// A thread queues a record and a string under a mutex; main, under the same mutex, copies the
// record out whole if it is there. The copy (one 16-byte move) and the field writes are
// accesses of several sizes to the same memory. With -DLATE_ID the thread sets the record's id
// after unlocking: main may copy it before.
#include <cassert>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

struct Msg {
    int id;
    char text[12];
};

static std::mutex m;
static std::vector<Msg> queue;
static std::string last;

#ifdef LATE_ID
static const bool late = true;
#else
static const bool late = false;
#endif

int main() {
    std::thread t([] {
        {
            std::lock_guard<std::mutex> g(m);
            queue.push_back(Msg{late ? 0 : 1, "hello"});
            last = "from thread one";
        }
        if (late) queue.back().id = 1;
    });
    {
        std::lock_guard<std::mutex> g(m);
        if (!queue.empty()) {
            Msg copy = queue.back();
            assert(copy.id == 1 && copy.text[0] == 'h');
        }
    }
    t.join();
    assert(queue.size() == 1 && last.size() == 15);
}
