// C++ thread_local destructors run when their thread ends, and main's at exit: each logs its
// thread's number to dtors.txt. 2 executions (the two stores to `shared`): 6 lines, "tls 1",
// "tls 2" and "tls 3" twice.
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <cstdio>

struct Mine {
    int id = 0;
    ~Mine() {
        char line[32];
        int n = std::snprintf(line, sizeof line, "tls %d\n", id);
        int fd = open("dtors.txt", O_WRONLY | O_APPEND | O_CREAT, 0644);
        if (fd < 0 || write(fd, line, n) != n) _exit(3);
        close(fd);
    }
};

thread_local Mine mine;
volatile int shared;

static void *worker(void *arg) {
    mine.id = static_cast<int>(reinterpret_cast<long>(arg));
    shared = mine.id;
    return nullptr;
}

int main() {
    pthread_t a, b;
    pthread_create(&a, nullptr, worker, reinterpret_cast<void *>(1));
    pthread_create(&b, nullptr, worker, reinterpret_cast<void *>(2));
    pthread_join(a, nullptr);
    pthread_join(b, nullptr);
    mine.id = 3;
    return 0;
}
