/* A wild write: a thread finds the checker's shared channel in its own address space and
 * overwrites it. The checker must say so, not panic or hang. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

volatile int flag;
/* through a pointer, so the compiler cannot inline it as a string instruction */
static void *(*volatile wipe)(void *, int, size_t) = memset;

static void *vandal(void *arg) {
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512];
    while (maps && fgets(line, sizeof line, maps)) {
        unsigned long lo, hi;
        char perms[8];
        if (strstr(line, "smc-run-channel") && sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 &&
            perms[1] == 'w')
            wipe((void *)lo, 0x5a, 8192);
    }
    if (maps) fclose(maps);
    flag = 1;
    return arg;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, vandal, 0);
    pthread_join(t, 0);
    return flag - 1;
}
