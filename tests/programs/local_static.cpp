// A function-local static with a destructor, first used in each execution (the snapshot puts
// its guard back): constructing it registers an exit handler in every execution, and its
// destructor logs the process id to exit_pids.txt when the execution exits. 2 executions.
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <cstdio>

struct Logger {
    ~Logger() {
        char line[32];
        int n = std::snprintf(line, sizeof line, "%d\n", static_cast<int>(getpid()));
        int fd = open("exit_pids.txt", O_WRONLY | O_APPEND | O_CREAT, 0644);
        if (fd < 0 || write(fd, line, n) != n) _exit(3);
        close(fd);
    }
};

static Logger &logger() {
    static Logger l;
    return l;
}

volatile int shared;

static void *writer(void *) {
    shared = 1;
    return nullptr;
}

int main() {
    logger();
    pthread_t t;
    pthread_create(&t, nullptr, writer, nullptr);
    int seen = shared;
    pthread_join(t, nullptr);
    return seen < 0;
}
