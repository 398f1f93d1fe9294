/* Message passing on POWER: the writer publishes `data`, then sets `flag`; the reader reads
 * `flag`, then `data`. POWER reorders both sides unless told otherwise:
 *   (plain)                  error: the stores, and the loads, may each be reordered
 *   -DLWSYNC                 error: the writer is ordered, the reader's loads are not
 *   -DLWSYNC -DADDR          ok: the reader's second load has an address dependency on the first
 *   -DLWSYNC -DCTRL          error: a control dependency alone does not order two loads
 *   -DLWSYNC -DCTRL -DISYNC  ok: control dependency plus isync does */
#include <assert.h>
#include <pthread.h>

volatile int data, flag;
int f, d;

static void *writer(void *arg) {
    data = 1;
#ifdef LWSYNC
    __asm__ volatile("lwsync" ::: "memory");
#endif
    flag = 1;
    return arg;
}

static void *reader(void *arg) {
    f = flag;
#if defined(ADDR)
    long zero;
    __asm__("xor %0,%1,%1" : "=r"(zero) : "r"((long)f)); /* 0, computed from f */
    d = *(volatile int *)((char *)&data + zero);
#elif defined(CTRL)
    __asm__ volatile("cmpw %0,%0\n\tbeq 1f\n1:"
#ifdef ISYNC
                     "\n\tisync"
#endif
                     :
                     : "r"(f)
                     : "cr0", "memory");
    d = data;
#else
    d = data;
#endif
    return arg;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, writer, 0);
    pthread_create(&b, 0, reader, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    assert(!(f == 1 && d == 0));
    return 0;
}
