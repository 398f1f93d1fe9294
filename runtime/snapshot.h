/* The writable state of the program's process, copied once at main and put back after each
 * execution, so that one process runs execution after execution without a fork. */
#ifndef SMC_SNAPSHOT_H
#define SMC_SNAPSHOT_H
#include <stddef.h>

struct smc_range {
    char *lo, *hi;
};

/* Copy the process's writable state: the .data and .bss of the executable and of every library
 * but the runtime, the dynamic linker and the object holding `keep` (the engine library, if
 * loaded: NULL for none), the brk heap, argv and the environment strings, and `extra` (the
 * main thread's TLS). Open file descriptors are remembered, so that those an
 * execution opens can be closed. Returns NULL, or why the state cannot be snapshot. Runs
 * before the first execution; allocates nothing from the heap. */
const char *smc_snapshot_take(char **argv, const struct smc_range *extra, int nextra, const void *keep);

/* Put it all back (the break of the heap included) and, with `close_fds` (0 only when no
 * descriptor can have been opened since), close the descriptors opened since. */
void smc_snapshot_restore(int close_fds);

/* The heap is in use up to `end` (a block was allocated below it): a restore copies the heap
 * as far as the highest such end (plus malloc's header after it) or the part in use at the
 * snapshot, not the untouched rest of malloc's top chunk. Every allocation must be marked. */
void smc_snapshot_heap_mark(const char *end);

/* Bytes a restore copies at least. */
size_t smc_snapshot_bytes(void);

#endif
