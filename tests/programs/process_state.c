/* Process state that an execution changes and the next one must not see: globals (.data and
 * .bss), the heap and its break, argv and the environment, file descriptors (opened by libc,
 * at numbers the program chose, by a raw system call). Two threads store
 * to one variable three times each: 20 executions, one per order of the six stores. */
#include <assert.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int runs;
static char greeting[] = "hello";
static char *kept;
static int *made_before_main;
volatile int x;

__attribute__((constructor)) static void before_main(void) {
    made_before_main = calloc(1, sizeof *made_before_main);
}

static void *writer(void *arg) {
    for (int i = 0; i < 3; i++) x = (int)(long)arg;
    return NULL;
}

int main(int argc, char **argv) {
    (void)argc;
    assert(++runs == 1);
    assert(strcmp(greeting, "hello") == 0);
    greeting[0] = 'j';
    assert(kept == NULL);
    assert((*made_before_main)++ == 0);
    kept = strdup("a string on the heap");
    char *big = malloc(1 << 20); /* above malloc's mmap threshold */
    assert(big);
    memset(big, 1, 1 << 20);
    void *aligned = NULL;
    assert(posix_memalign(&aligned, 4096, 3 * 4096) == 0);
    memset(aligned, 2, 3 * 4096);
    assert(getenv("SMC_PROCESS_STATE") == NULL);
    setenv("SMC_PROCESS_STATE", "1", 1);
    assert(argv[0][0] != '#');
    argv[0][0] = '#';
    int fd = open("/dev/null", O_RDONLY); /* never closed */
    assert(fd >= 0 && fd < 10);
    /* descriptors at numbers of its choosing, and one by a system call of its own */
    assert(fcntl(40, F_GETFD) == -1 && dup2(0, 40) == 40);
    assert(fcntl(0, F_DUPFD, 50) == 50);
#if defined(__x86_64__)
    long raw;
    __asm__ volatile("syscall" : "=a"(raw) : "0"(32L /* dup */), "D"(0L) : "rcx", "r11", "memory");
    assert(raw > fd && raw < 10);
#endif
    printf("left in stdio's buffer\n");
    pthread_t a, b;
    pthread_create(&a, NULL, writer, (void *)1);
    pthread_create(&b, NULL, writer, (void *)2);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return 0;
}
