/* A store to a buffer, then read() into it: the read's bytes are last (they come after the
 * thread's buffered store, as on the processor), under every model. */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static int fds[2];
static volatile int flag;
static char *buf;
static void *other(void *a) { flag = 1; return a; }
int main(void) {
    pipe(fds);
    write(fds[1], "XYZW", 4);
    buf = malloc(16);
    pthread_t t;
    pthread_create(&t, 0, other, 0);
    buf[0] = 'A';              /* a store to shared (heap) memory: buffered under tso */
    read(fds[0], buf, 4);      /* the library writes over it */
    int f = flag;              /* a visible operation */
    pthread_join(t, 0);
    assert(buf[0] == 'X' && f >= 0);
    return 0;
}
