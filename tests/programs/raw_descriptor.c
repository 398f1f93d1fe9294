/* A descriptor opened by a system call of the program's own (no libc call anyone could see):
 * each execution must find the lowest one free again. Three threads store once each: six
 * executions. */
#include <assert.h>
#include <pthread.h>
#include <unistd.h>

volatile int x;

static void *writer(void *arg) {
    x = (int)(long)arg;
    return NULL;
}

/* dup(0), made directly (a raw syscall instruction where the machine has one) */
static long raw_dup0(void) {
#if defined(__x86_64__)
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "0"(32L /* SYS_dup */), "D"(0L) : "rcx", "r11", "memory");
    return r;
#else
    return dup(0);
#endif
}

int main(void) {
    long fd = raw_dup0(); /* never closed */
    assert(fd == 3);
    pthread_t t[3];
    for (long i = 0; i < 3; i++) pthread_create(&t[i], NULL, writer, (void *)(i + 1));
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    return 0;
}
