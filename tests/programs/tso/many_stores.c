/* More buffered stores than the commit queue holds, reaching memory while no thread runs. */
#include <pthread.h>
#include <assert.h>
int a[5000];
volatile int flag;
static void *w(void *x) { for (int i = 0; i < 5000; i++) a[i] = i + 1; __atomic_thread_fence(__ATOMIC_SEQ_CST); flag = 1; return x; }
int main(void) { pthread_t t; pthread_create(&t, 0, w, 0); pthread_join(t, 0); for (int i = 0; i < 5000; i++) assert(a[i] == i + 1); return 0; }
