/* The wire layout shared by the supervisor (src/channel/mod.rs) and the runtime.
 *
 * One memfd, mapped MAP_SHARED by both sides. Every field has a fixed offset; the Rust mirror
 * is checked against this header by tests/channel_layout.rs. Bump SMC_CHANNEL_VERSION on any
 * change. Words used as futexes are 32-bit and aligned.
 *
 * Ownership: the supervisor writes the configuration and the replies; the runtime writes
 * pending events, results and error reports. The supervisor trusts none of it. */
#ifndef SMC_CHANNEL_H
#define SMC_CHANNEL_H
#include <stdint.h>

#define SMC_CHANNEL_MAGIC 0x314e4843434d53ULL /* "SMCCHN1" */
#define SMC_CHANNEL_VERSION 19
#define SMC_MAX_THREADS 256
#define SMC_MSG_LEN 512
#define SMC_MAX_ACCESS 64   /* bytes of one access that can be buffered or substituted */
#define SMC_MAX_COMMITS 512 /* queued buffer updates */
#define SMC_MAX_OBSERVED 64 /* values a program can record with __smc_observe */
#define SMC_MAX_BLOCKS 256  /* heap blocks recorded per execution (for reports) */
#define SMC_MAX_SHARED 64   /* shared stack and TLS ranges, each list */
#define SMC_MAX_SCRIPT 2048 /* scripted steps per execution */
#define SMC_MAX_LOG 4096    /* slot copies logged while the runtime runs a script */
#define SMC_MAX_PENDING 16384 /* buffered stores of all threads at once (forwarding) */
#define SMC_SCRIPT_COMMIT 0xffffffffu /* a scripted step that is a buffered store reaching memory */

/* Operations a thread can announce (smc_slot.op). */
enum smc_op {
    SMC_OP_NONE = 0,
    SMC_OP_LOAD = 1,          /* addr, size */
    SMC_OP_STORE = 2,         /* addr, size */
    SMC_OP_RMW = 3,           /* atomic read-modify-write (lock prefix, xchg) */
    SMC_OP_CAS = 4,           /* atomic compare-exchange; result says whether it wrote. With arg
                               * SMC_CAS_OPERANDS: addr2 what it compares memory with, arg2
                               * what it writes if equal (each `size` bytes, little-endian) */
    SMC_OP_RMW_LOAD = 5,      /* first half of a non-atomic read-modify-write */
    SMC_OP_RMW_STORE = 6,     /* its second half */
    SMC_OP_FENCE = 7,         /* arg: 1 mfence, 2 sfence, 3 lfence */
    SMC_OP_THREAD_START = 10,
    SMC_OP_THREAD_EXIT = 11,
    SMC_OP_SPAWN = 12,        /* pthread_create; reply: nothing, the child gets the next slot */
    SMC_OP_JOIN = 13,         /* arg: slot of the joined thread */
    SMC_OP_PROCESS_EXIT = 14, /* arg: exit status; addr2: 1 if the execution registered exit handlers */
    SMC_OP_MUTEX_LOCK = 20,   /* addr: the mutex */
    SMC_OP_MUTEX_TRYLOCK = 21,/* reply: 0 acquired, else EBUSY */
    SMC_OP_MUTEX_UNLOCK = 22,
    SMC_OP_COND_WAIT = 23,    /* addr: cond, addr2: mutex, arg: 1 when timed */
    SMC_OP_COND_REACQUIRE = 24, /* addr: cond, addr2: mutex, arg: 1 when timed; reply: 0 or ETIMEDOUT */
    SMC_OP_COND_SIGNAL = 25,
    SMC_OP_COND_BROADCAST = 26,
    SMC_OP_RW_RDLOCK = 27,    /* arg: 1 for the try variant; reply: 0 or EBUSY */
    SMC_OP_RW_WRLOCK = 28,
    SMC_OP_RW_UNLOCK = 29,
    SMC_OP_BARRIER_INIT = 30, /* arg: count */
    SMC_OP_BARRIER_WAIT = 31, /* reply: 1 when this thread completed the barrier */
    SMC_OP_BARRIER_LEAVE = 32,
    SMC_OP_SEM_INIT = 33,     /* arg: initial value */
    SMC_OP_SEM_WAIT = 34,     /* arg: 1 for trywait; reply: 0 or EAGAIN */
    SMC_OP_SEM_POST = 35,
    SMC_OP_YIELD = 40,
    SMC_OP_ASSUME = 41,       /* arg: the condition (0 blocks the execution) */
    SMC_OP_ATOMIC_BEGIN = 42,
    SMC_OP_ATOMIC_END = 43,
    SMC_OP_NONDET = 44,       /* __VERIFIER_nondet_*: size, arg: SMC_NONDET_*; reply: the value */
    SMC_OP_FUTEX_WAIT = 45,   /* addr: the futex word, arg: the value expected, addr2: 1 when timed */
    SMC_OP_FUTEX_WOKEN = 46,  /* addr, addr2 as FUTEX_WAIT's; reply: 0 or ETIMEDOUT */
    SMC_OP_FUTEX_WAKE = 47,   /* addr, arg: how many at most; reply: how many were woken */
    SMC_OP_HEAP_RELEASE = 48, /* free or realloc of the block at addr, arg: its usable size */
    SMC_OP_FUTEX_JOIN = 49,   /* graph engine: addr as FUTEX_WAIT's, arg: 1 when the word held the value */
};

/* Slot states. */
enum smc_slot_state {
    SMC_SLOT_FREE = 0,
    SMC_SLOT_RUNNING = 1,
    SMC_SLOT_STOPPED = 2, /* pending event valid, waiting for go */
    SMC_SLOT_EXITED = 3,
    SMC_SLOT_HUNG = 4,    /* ran past the time limit without a visible operation: set aside,
                           * never resumed in this execution (coroutines only) */
};

/* SMC_OP_NONDET's arg */
#define SMC_NONDET_SIGNED 1u
#define SMC_NONDET_BOOL 2u

/* Kinds of instrumented instruction sites (smc_site.kind). */
enum smc_site_kind {
    SMC_SITE_LOAD = 1,
    SMC_SITE_STORE = 2,
    SMC_SITE_RMW = 3,        /* non-atomic read-modify-write: two events */
    SMC_SITE_ATOMIC = 4,     /* locked RMW or xchg: one atomic event */
    SMC_SITE_CAS = 5,        /* lock cmpxchg (8/16/32/64 bit) */
    SMC_SITE_CAS2 = 6,       /* lock cmpxchg8b / cmpxchg16b */
    SMC_SITE_FENCE = 7,      /* size holds the fence kind: 1 mfence or sync, 2 sfence, 3 lfence, 4 lwsync, 5 eieio, 6 isync */
    SMC_SITE_UNSUPPORTED = 8,/* cannot be executed faithfully on shared memory */
    SMC_SITE_STRING = 9,     /* movs/stos/lods/cmps/scas: carried out by the runtime in pieces */
    SMC_SITE_ERROR_CALL = 10,/* entry of the program's own reach_error (size 0) or __VERIFIER_error (1) */
    SMC_SITE_ATOMIC_ENTRY = 11, /* entry of a function named __VERIFIER_atomic_*: a section begins */
    SMC_SITE_ATOMIC_EXIT = 12,  /* a return of such a function: the section ends */
    SMC_SITE_MODELLED = 13,     /* entry of a library function the runtime carries out (size: which,
                                   SMC_MODELLED_*); its copy returns to the caller */
    SMC_SITE_UNSEEN_ENTRY = 14, /* entry of a library function whose accesses are no events */
    SMC_SITE_UNSEEN_EXIT = 15,  /* a return or tail jump of one: seen again if its frame is gone */
};
/* The await hash of a compare-exchange by which a modelled lock waits for its word (a real one
 * is a hash of registers and stack): the engine reports a deadlock, not a livelock, when such
 * a wait is all that is left. */
#define SMC_HASH_LOCK_WAIT 0x6c6f636b77616974ull /* "lockwait" */
/* A MODELLED site's size: which function it is */
enum {
    SMC_MODELLED_RUST_MUTEX_LOCK = 0, /* std's futex Mutex::lock_contended(&self) */
};

/* smc_site.string_op of a string site (its element size is smc_site.size) */
enum smc_string_op { SMC_STR_MOVS = 1, SMC_STR_STOS = 2, SMC_STR_LODS = 3, SMC_STR_CMPS = 4, SMC_STR_SCAS = 5 };
/* smc_site.rep */
enum smc_rep { SMC_REP_NONE = 0, SMC_REP_E = 1, SMC_REP_NE = 2 };
enum smc_spin_value { SMC_SPIN_ZERO = 0, SMC_SPIN_ONE = 1, SMC_SPIN_ONES32 = 2, SMC_SPIN_ONES64 = 3 };

#define SMC_REG_NONE 0xff
#define SMC_REG_RIP 0xfe /* disp is relative to the load bias */

/* One instrumented instruction. The effective address is
 * base + index * scale + disp, computed from the trapped context. */
struct smc_site {
    uint64_t offset;   /* instruction address minus the load bias */
    int64_t disp;
    uint32_t copy_off; /* offset of its relocated copy in the trampoline */
    uint32_t size;     /* access size in bytes */
    uint8_t kind;      /* enum smc_site_kind */
    uint8_t len;       /* instruction length */
    uint8_t base;      /* 0..15 (rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8..r15) or SMC_REG_* */
    uint8_t index;
    uint8_t scale;
    uint8_t addr32;    /* 1 when the address size is 32 bits */
    uint8_t orig;      /* first byte of the instruction, checked before patching */
    uint8_t flags;     /* SMC_SITE_PRIVATE, SMC_SITE_FS, SMC_SITE_RESERVE, SMC_SITE_CHAINED */
    uint16_t dead_regs; /* registers the instruction overwrites without reading (bit n = reg n) */
    uint8_t string_op;  /* enum smc_string_op of a string site */
    uint8_t rep;        /* enum smc_rep of a string site */
    uint8_t spin_reg;   /* a bounded spin loop's load: its counter's register number + 1, or 0 */
    uint8_t spin_value; /* enum smc_spin_value: the counter's value that ends the loop */
    uint16_t await_mask; /* an await loop's load: registers its await hash leaves out */
};

/* smc_site.flags. A private site's operand is the thread's own stack (rsp-based) or TLS
 * (fs-based): it is patched only with SMC_FLAG_SHARED_STACKS, and visible only where it touches
 * a range of smc_header.shared. */
#define SMC_SITE_PRIVATE 1u
#define SMC_SITE_FS 2u
#define SMC_SITE_RESERVE 4u /* POWER: a load-reserve (LOAD) or a store-conditional (CAS) */
#define SMC_SITE_CHAINED 8u /* its jump covers the next site's start; its copy goes on to that site's stub */

/* A range of addresses [lo, hi). One with this bit set in both ends is relative to the slot
 * stack area, whose address may differ between runs of the program (it is mapped after the
 * channel, whose size depends on the sites); others are absolute. */
#define SMC_SPAN_IN_STACK_AREA (1ull << 63)
struct smc_span {
    uint64_t lo;
    uint64_t hi;
};

/* Per-thread slot; 128 bytes. */
struct smc_slot {
    uint32_t go;     /* futex: the supervisor sets 1 to let the thread run its pending event */
    uint32_t state;  /* enum smc_slot_state */
    uint32_t parent; /* slot of the creating thread */
    uint32_t op;     /* pending event: enum smc_op */
    uint64_t addr;
    uint64_t addr2;
    uint64_t size;
    uint64_t arg;
    uint64_t arg2;   /* a second operand (SMC_OP_CAS) */
    uint64_t pc;     /* instruction or call-site address of the pending event */
    uint64_t hash;   /* hash of the thread-local state at a pending load (await detection) */
    uint64_t reply;  /* supervisor -> runtime: result of the pending event */
    uint64_t prev_read;    /* value read by the previously executed event (first 8 bytes) */
    uint64_t prev_written; /* value in memory after the previously executed event wrote */
    uint32_t prev_flags;   /* SMC_PREV_* */
    uint32_t site;         /* site index + 1 of the pending event, 0 if none */
    /* Store buffers (SMC_FLAG_BUFFERED): a load sees `patch` over memory where `patch_mask`
     * has a bit (bit i = byte i of the access); a store only tentatively writes memory: at the
     * thread's next stop the runtime copies what it wrote into `stored` and undoes it. */
    uint64_t patch_mask;
    uint32_t stored_size;
    uint32_t skipped; /* loads of the thread so far that were no event (its own memory): a
                       * dependency on a load does not reach past one (the POWER model) */
    /* its buffered stores in `pending`, oldest first (index + 1; 0: none) */
    uint32_t pending_head;
    uint32_t pending_tail;
    uint8_t patch[SMC_MAX_ACCESS];
    uint8_t stored[SMC_MAX_ACCESS];
    /* SMC_FLAG_GRAPH: what memory held before the store in `stored` wrote over it */
    uint8_t replaced[SMC_MAX_ACCESS];
};

/* A heap block: its address, size, and the call site that allocated it. */
struct smc_block {
    uint64_t addr;
    uint64_t size;
    uint64_t pc;
};

/* A buffered store reaching memory; queued by the supervisor, written by the next thread that
 * resumes, before it does anything else. */
struct smc_commit {
    uint64_t addr;
    uint32_t size;
    uint32_t owner; /* the slot whose store it is */
    uint8_t bytes[SMC_MAX_ACCESS];
};

/* One step of a script: the decision the supervisor made at this point of the previous
 * execution, which the runtime carries out itself in this one. */
struct smc_script_step {
    uint32_t slot;   /* the slot that runs its pending event, or SMC_SCRIPT_COMMIT */
    uint32_t size;   /* commit: bytes */
    uint64_t reply;  /* as smc_slot.reply */
    uint64_t patch_mask;
    uint64_t addr;   /* commit: where the bytes go */
    /* run: the pending event the slot must be stopped at, as the previous execution had it
     * (pc, and the address it accesses or the object it acts on; 0: not checked); a slot
     * stopped elsewhere ends the script there: the program behaves differently */
    uint64_t expect_pc;
    uint64_t expect_addr;
    uint32_t owner; /* commit: the slot whose store it is */
    uint32_t pad;
    uint8_t bytes[SMC_MAX_ACCESS]; /* the load's patch, or the commit's bytes */
};

/* A buffered store (TSO, PSO) as its own thread sees it (store forwarding), kept by the runtime
 * from the stop that captured it until it reaches memory (pending.c). */
struct smc_pending {
    uint64_t addr;
    uint32_t size;
    uint32_t pad;
    uint32_t prev; /* the owner's next older and newer pending stores (index + 1; 0: none) */
    uint32_t next; /* ... or, for a free entry, the next free one */
    uint8_t bytes[SMC_MAX_ACCESS];
    uint8_t saved[SMC_MAX_ACCESS]; /* runtime: what memory held there while the owner runs */
};

/* A slot as it was after `epoch` scripted steps (logged when the step before changed it). */
struct smc_log_entry {
    uint32_t epoch;
    uint32_t slot;
    struct smc_slot copy;
};

/* smc_slot.arg of SMC_OP_CAS: addr2 and arg2 hold its operands (a compare-exchange of at most
 * 8 bytes whose registers the runtime read) */
#define SMC_CAS_OPERANDS 1u
/* smc_slot.arg of SMC_OP_CAS at a store-conditional: arg2 holds what it stores if it writes (so
 * that a write the engine explores without running it has its bytes) */
#define SMC_SC_STORES 2u

#define SMC_PREV_WROTE 1u /* the previous event did write (a CAS that succeeded) */
#define SMC_PREV_VALID 2u /* prev_* describe an executed event */
#define SMC_PREV_READ 4u  /* the previous event did read (prev_read is valid) */
#define SMC_PREV_STORED 8u /* the previous event was a buffered store; `stored` holds its bytes */
#define SMC_PREV_REPLACED 16u /* SMC_FLAG_GRAPH: the store stayed in memory; `replaced` holds
                               * what it wrote over */

#define SMC_FLAG_FENCES_VISIBLE 1u /* report fences as events */
#define SMC_FLAG_BUFFERED 2u       /* stores are buffered by the supervisor (TSO, PSO) */
#define SMC_FLAG_DEBUGGABLE 4u     /* --gdb: any process may trace an execution, and an error
                                    * stops the failing thread (SIGSTOP) for the debugger */
#define SMC_FLAG_CAPTURED 8u       /* stdout and stderr are the supervisor's capture file */
#define SMC_FLAG_SSE_ONLY 16u      /* the program's code uses no register state beyond the
                                    * general registers, xmm0-15 and MXCSR (x86-64: no x87,
                                    * MMX, AVX, AVX-512): a hook saves only those */
#define SMC_FLAG_SHARED_STACKS 32u /* some stack or TLS memory is shared (smc_header.shared):
                                    * private sites are patched too */
#define SMC_FLAG_ALL_STACKS 64u    /* every access to a thread's own stack or TLS is visible
                                    * (private sites patched): a round that looks for shared
                                    * ones where a thread spun without visible operations */
#define SMC_FLAG_GRAPH 128u        /* the graph engine chooses what every access reads: a locked
                                    * instruction or compare-exchange sees `patch` too; a write
                                    * is captured as a buffered store's but stays in memory,
                                    * the bytes it replaced in `replaced` */
#define SMC_FLAG_STORE_BUFFERS 256u /* the model has store buffers (TSO, PSO): a call whose C
                                     * library code is a full fence where the engines would
                                     * not see one (a spin lock's try, sched_yield) reports one */

/* smc_header.coroutines */
#define SMC_COROUTINES_OFF 0    /* one process per execution, real threads */
#define SMC_COROUTINES_ON 1     /* a worker runs executions with coroutine threads */
#define SMC_SC_BY_VALUE 0 /* a store-conditional's reply: write if memory holds what was reserved */
#define SMC_SC_FAIL 1     /* ... fail (the graph engine explores it) */
#define SMC_SC_WRITE 2    /* ... write */
#define SMC_COROUTINES_FAILED 2 /* a worker could not set them up: fork per execution from now */

/* Error kinds reported by the runtime (first error wins). */
enum smc_err {
    SMC_ERR_NONE = 0,
    SMC_ERR_ASSERT = 1,    /* __assert_fail: err_msg has the text */
    SMC_ERR_SIGNAL = 2,    /* fatal signal: err_signal, err_pc, err_addr */
    SMC_ERR_VERIFIER = 3,  /* __VERIFIER_error / reach_error */
    SMC_ERR_UNSUPPORTED = 4, /* an instruction the checker cannot run faithfully */
    SMC_ERR_RUNTIME = 5,   /* the runtime itself failed: err_msg */
    SMC_ERR_CALL = 6,      /* a call the checker cannot follow (fork, exec...): err_msg names it */
    SMC_ERR_LIMIT = 7,     /* past a limit of the checker's (err_msg says which): the execution is cut */
    SMC_ERR_PANIC = 8,     /* a Rust panic (its message is in the program's output) */
};
/* An ERROR_CALL site's size: which function it is */
enum {
    SMC_ERROR_CALL_REACH = 0,
    SMC_ERROR_CALL_VERIFIER = 1,
    SMC_ERROR_CALL_PANIC = 2,
};

/* Init handshake states (smc_header.init_state, a futex). */
enum smc_init {
    SMC_INIT_NONE = 0,
    SMC_INIT_MAPPED = 1,  /* runtime: load_bias and tramp_addr are valid */
    SMC_INIT_CODE = 2,    /* supervisor: the relocated copies are written */
    SMC_INIT_READY = 3,   /* runtime: text patched, fork server waiting */
    SMC_INIT_FAILED = 4,  /* either side: err_msg says why */
};

struct smc_header {
    uint64_t magic;
    uint32_t version;
    uint32_t max_threads;
    uint64_t total_size;
    /* configuration (supervisor) */
    uint32_t nsites;
    uint32_t flags;
    uint64_t sites_off;
    uint64_t code_off;
    uint64_t code_cap;
    /* init handshake */
    uint32_t init_state;
    uint32_t explore_cmd; /* supervisor: the fs_cmd that asks the worker to run a whole exploration
                           * with the engine loaded into it (SMC_ENGINE_LIB) */
    uint64_t load_bias;
    uint64_t tramp_addr;
    uint64_t self_addr;   /* runtime: where this channel is mapped in the program */
    /* fork server */
    uint32_t fs_cmd;   /* futex: bumped by the supervisor to start one execution */
    uint32_t fs_quit;
    int32_t child_pid;
    int32_t wait_status;
    uint32_t exec_done; /* the fs_cmd value of the last execution that ended (0: none) */
    uint32_t abort;     /* the supervisor asks the execution's threads to exit */
    /* executions run by a worker process: the program's threads are coroutines of one OS thread
     * and the process is reset from a snapshot taken at main (no fork per execution) */
    uint32_t coroutines;  /* runtime: SMC_COROUTINES_* */
    uint32_t rt_wake;     /* futex: bumped by the supervisor after a go when coroutines is ON */
    uint32_t worker_cmd;  /* worker: fs_cmd of the execution it runs now, 0 between them */
    uint32_t worker_last; /* worker: fs_cmd of the last execution it finished */
    /* set while sleeping on sup_futex / rt_wake: the other side makes the wake-up system call
     * only then (the bump of the word always comes first) */
    uint32_t sup_sleeping;
    uint32_t rt_sleeping;
    /* scheduling */
    uint32_t sup_futex; /* bumped whenever the supervisor has something to look at */
    uint32_t running;   /* threads currently running (0 or 1, 2 during a spawn) */
    uint32_t nthreads;  /* slots used by this execution */
    uint32_t ncommits;  /* queued entries of `commits` */
    /* first error of the execution */
    uint32_t err_kind;
    uint32_t err_signal;
    uint32_t err_slot;
    uint32_t hang_soon_us; /* engine in the worker: the step it runs now hung before; the
                            * runtime sets it aside after this many microseconds */
    uint64_t err_pc;
    uint64_t err_addr;
    char err_msg[SMC_MSG_LEN];
    /* values recorded by __smc_observe(index, value) during the execution (final states of
     * litmus tests); bit n of observed_mask says observed[n] was set */
    uint64_t observed_mask;
    uint64_t observed[SMC_MAX_OBSERVED];
    /* heap blocks the program allocated (malloc, calloc, realloc) during the execution, in
     * order; nblocks may exceed SMC_MAX_BLOCKS (the rest are not recorded) */
    uint32_t nblocks;
    uint32_t pad3;
    struct smc_block blocks[SMC_MAX_BLOCKS];
    /* Stack and TLS memory shared between threads. `shared` (supervisor, before the program
     * starts): a thread's accesses to its own stack or TLS are visible events where they touch
     * these ranges. `found` (runtime, kept across executions): the ranges of accesses of one
     * thread to another's stack or TLS outside `shared`; the supervisor then checks again
     * with them shared. */
    uint32_t nshared;
    uint32_t nfound;
    struct smc_span shared[SMC_MAX_SHARED];
    struct smc_span found[SMC_MAX_SHARED];
    struct smc_slot slots[SMC_MAX_THREADS];
    struct smc_commit commits[SMC_MAX_COMMITS];
    /* SMC_FLAG_CAPTURED: bytes the execution wrote to stdout and stderr (one sealed memfd of
     * fixed size, rewound by the fork server before each execution) */
    uint64_t out_len;
    /* Scripted replay: the first steps of an execution, decided in the previous one, which the
     * runtime runs without a round trip to the supervisor per step. Before each step it logs
     * the slots the step before changed (if asked); the state after the last step it ran is
     * the live one. */
    uint32_t script_len;  /* supervisor: steps in `script` (0: none) */
    uint32_t script_done; /* runtime: steps it has let run */
    uint32_t log_len;     /* runtime: entries in `log` */
    uint32_t log_threads; /* runtime: slots logged so far */
    uint32_t script_logged; /* supervisor: 1 to log the states (the engine asks for each step
                             * then), 0 when the engine restored its own state after the script */
    uint32_t pad4;
    struct smc_script_step script[SMC_MAX_SCRIPT];
    struct smc_log_entry log[SMC_MAX_LOG];
    /* The threads' buffered stores (pending.c): entries 1..pending_top were used in this
     * execution, pending_free heads the list of those free again (index + 1; 0: none). Reset
     * with the slots' lists by the supervisor before each execution. */
    uint32_t pending_top;
    uint32_t pending_free;
    struct smc_pending pending[SMC_MAX_PENDING];
};

#endif
