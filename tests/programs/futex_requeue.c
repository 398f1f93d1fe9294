/* A futex operation the checker does not model: a one-line error naming it, exit status 2. */
#include <linux/futex.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>
static int a, b;
static void *t(void *x) { syscall(SYS_futex, &a, FUTEX_CMP_REQUEUE_PRIVATE, 1, (void *)1, &b, 0); return x; }
int main(void) { pthread_t p; pthread_create(&p, 0, t, 0); pthread_join(p, 0); return 0; }
