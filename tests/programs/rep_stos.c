/* rep stosb on the thread's own stack is fine; on a global it is reported as unsupported. */
#include <pthread.h>
char buf[64];
static void *t(void *a) { void *d = buf; unsigned long n = 64; __asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(0) : "memory"); return a; }
int main(void) { char local[64]; void *d = local; unsigned long n = 64; __asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(1) : "memory"); pthread_t x; pthread_create(&x, 0, t, 0); pthread_join(x, 0); return local[0] - 1; }
