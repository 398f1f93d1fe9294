/* The fork server, the worker, and the engine's side of the worker.
 *
 * At main the runtime becomes a fork server: for each command of the supervisor it forks a
 * child, which runs one execution with real threads, or a worker, which runs execution after
 * execution with the program's threads as coroutines (threads.c), putting the process back
 * from its snapshot after each (process.c, snapshot.c). Its loop resumes the coroutine whose
 * go is set until every thread waits; it answers the supervisor execution by execution or,
 * given an exploration, runs the checker's engine inside itself (the engine library,
 * src/supervisor/in_worker.rs), which calls its operations here. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"

/* ---- the engine inside the worker (src/supervisor/in_worker.rs): the checker's engine, loaded
 * into the fork server as a library, runs a whole exploration in the worker, calling the
 * coroutine loop (threads.c) directly instead of a round trip to the checker per step ---- */
struct smc_engine_ops { /* EngineOps in src/supervisor/in_worker.rs */
    uint64_t abi;
    void *channel;
    uint64_t channel_size;
    int (*begin)(void);
    int (*run)(void);
    int (*end)(void);
};
#define SMC_ENGINE_ABI 3
char g_engine_lib[4096];    /* SMC_ENGINE_LIB */
void *g_engine_area;       /* SMC_ENGINE_FD's area, shared with the checker */
engine_explore_fn g_engine_explore;
int g_in_engine;           /* the worker's engine runs: nobody waits for a stop */
static int g_worker_spent; /* this worker cannot run another execution */
/* Yields before the worker sleeps waiting for a go, when it shares its one CPU with the
 * supervisor: the go usually comes within microseconds, and a wake-up costs more. */
static int g_yields;
#define WORKER_YIELDS 20

main_fn real_main;
int g_argc;
char **g_argv, **g_envp;
int g_coroutines;   /* this process is a worker: the program's threads are its coroutines */
pid_t g_worker_pid; /* this worker's process id, 0 outside a worker */

/* ---- the fork server ---- */

/* Load the engine library the checker named, in the fork server: before any worker's snapshot,
 * which leaves the library's memory out. Without it the checker explores by itself. Its own
 * calls bind to the C library first (RTLD_DEEPBIND), not to the runtime's interposed memory
 * functions, which would only pass them on. */
static void load_engine(void) {
    if (!g_engine_lib[0]) return;
    void *h = dlopen(g_engine_lib, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (!h) return;
    void (*init)(void) = (void (*)(void))dlsym(h, "smc_engine_init");
    engine_explore_fn explore = (engine_explore_fn)dlsym(h, "smc_engine_explore");
    if (!init || !explore) return;
    init();
    g_engine_explore = explore;
}

/* Wait once for `*word` to move past `seen`: a worker on the supervisor's CPU yields to it
 * (`*yields` counts the yields), else the runtime sleeps on the word and says so in
 * rt_sleeping; the supervisor makes the wake-up call only then. */
static void rt_wait(uint32_t *word, uint32_t seen, int *yields) {
    if ((*yields)++ < g_yields) {
        sys_sched_yield(); /* not the interposed sched_yield */
        return;
    }
    STORE(&ch->rt_sleeping, 1);
    futex(word, FUTEX_WAIT, seen, NULL);
    STORE(&ch->rt_sleeping, 0);
    *yields = 0;
}

/* Wait for the next command after `seen`; exits when the supervisor quits. */
static uint32_t next_command(uint32_t seen) {
    uint32_t cmd;
    int yields = 0;
    while ((cmd = LOAD(&ch->fs_cmd)) == seen && !LOAD(&ch->fs_quit)) rt_wait(&ch->fs_cmd, seen, &yields);
    if (LOAD(&ch->fs_quit)) die_now(0);
    return cmd;
}

static void run_worker(uint32_t cmd);

static int smc_main(int argc, char **argv, char **envp) {
    if (!g_active) return real_main(argc, argv, envp);
    stack_bounds(&g_main_stack_lo, &g_main_stack_hi);
    keep_clocks_at_main();
    reserve_stacks();
    reserve_heaps();
    g_argc = argc;
    g_argv = argv;
    g_envp = envp;
    /* a debugger follows one process per execution */
    int coroutines = !getenv("SMC_NO_COROUTINES") && !(ch->flags & SMC_FLAG_DEBUGGABLE);
    pid_t server = getpid();
    if (coroutines) load_engine();
    uint32_t seen = LOAD(&ch->fs_cmd);
    STORE(&ch->init_state, SMC_INIT_READY);
    notify_supervisor();
    for (;;) {
        uint32_t cmd = next_command(seen);
        seen = cmd;
        int captured = (ch->flags & SMC_FLAG_CAPTURED) != 0;
        if (captured) lseek(1, 0, SEEK_SET);
        int worker = coroutines && LOAD(&ch->coroutines) != SMC_COROUTINES_FAILED;
        if (worker) STORE(&ch->worker_cmd, cmd);
        pid_t pid = fork(); /* not in an execution here: the interposed fork forwards */
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != server) die_now(0);
            /* yama's ptrace_scope=1 only lets ancestors trace; gdb is not ours */
            if (ch->flags & SMC_FLAG_DEBUGGABLE) prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY);
            if (worker) run_worker(cmd); /* returns only if it cannot run coroutines */
            if (LOAD(&ch->explore_cmd) == cmd) die_now(1); /* no worker: the checker explores */
            t_slot = 0;
            t_stack_lo = g_main_stack_lo;
            t_stack_hi = g_main_stack_hi;
            g_tids[0] = pthread_self();
            int r = real_main(argc, argv, envp);
            if (in_execution())
                smc_stop(SMC_OP_PROCESS_EXIT, 0, (uint64_t)g_exit_handlers_registered, 0, (uint64_t)r, 0, 0, 0);
            g_exiting = 1;
            return r;
        }
        if (pid < 0) {
            STORE(&ch->wait_status, -1);
        } else {
            STORE(&ch->child_pid, pid);
            int st = 0;
            while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
            }
            if (worker) {
                /* a worker ends by dying: report the execution it was in, if any */
                uint32_t in = LOAD(&ch->worker_cmd);
                if (!in) {
                    seen = LOAD(&ch->worker_last);
                    continue;
                }
                seen = cmd = in;
            }
            STORE(&ch->wait_status, st);
        }
        if (captured) note_output();
        STORE(&ch->exec_done, cmd);
        notify_supervisor();
    }
}

#ifdef SMC_START_MAIN_STARTUP_INFO
/* POWER's glibc passes main in a `struct startup_info` (targets/ppc64le/arch.h). */
EXPORT int __libc_start_main(int argc, char **argv, char **ev, void *auxvec, void (*rtld_fini)(void),
                             struct smc_startup_info *stinfo, char **stack_on_entry) {
    static struct smc_startup_info ours;
    ours = *stinfo;
    real_main = (main_fn)stinfo->main;
    ours.main = (void *)smc_main;
    int (*real)(int, char **, char **, void *, void (*)(void), struct smc_startup_info *, char **) =
        dlsym(RTLD_NEXT, "__libc_start_main");
    return real(argc, argv, ev, auxvec, rtld_fini, &ours, stack_on_entry);
}
#else
EXPORT int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void), void (*fini)(void),
                             void (*rtld_fini)(void), void *stack_end) {
    real_main = main;
    int (*real)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void), void *) =
        dlsym(RTLD_NEXT, "__libc_start_main");
    return real(smc_main, argc, argv, init, fini, rtld_fini, stack_end);
}
#endif

/* ---- the worker ---- */

/* Resume the coroutines whose go is set until none is. 1 when the execution is over
 * (g_exec_status says how), 0 when every thread that has not exited waits; *ran says
 * whether one ran. */
static int co_run_ready(int *ran) {
    while (!g_exec_over) {
        uint32_t n = LOAD(&ch->nthreads), exited = 0;
        if (n > SMC_MAX_THREADS) n = SMC_MAX_THREADS;
        int next = -1;
        for (uint32_t i = 0; i < n && next < 0; i++) {
            if (g_co[i].waiting && LOAD(&ch->slots[i].go)) next = (int)i;
            exited += LOAD(&ch->slots[i].state) == SMC_SLOT_EXITED;
        }
        if (next >= 0) {
            co_switch(next);
            *ran = 1;
            continue;
        }
        if (g_all_waiting) {
            g_all_waiting = 0;
            if (go_on_or_notify()) continue;
        }
        if (exited == n) { /* main left by pthread_exit, and the last thread has exited */
            g_exec_over = 1;
            g_exec_status = 0;
            g_exec_flush = 1;
        }
        return g_exec_over;
    }
    return 1;
}

/* Run one execution: main as coroutine 0, then whichever coroutine the supervisor (or the
 * script) lets go, until it ends. Returns its status, as waitpid would. */
static int co_execution(void) {
    co_start();
    int yields = 0;
    for (;;) {
        uint32_t seq = LOAD(&ch->rt_wake);
        if (LOAD(&ch->abort) && !g_exec_over) return 0; /* as die_now(0), output not flushed */
        int ran = 0;
        if (co_run_ready(&ran)) break;
        if (ran) {
            yields = 0;
            continue;
        }
        int saved_errno = errno; /* main's: the host runs on its TLS */
        rt_wait(&ch->rt_wake, seq, &yields);
        errno = saved_errno;
    }
    if (g_exec_flush) fflush(NULL); /* exit() in the program, or main returned */
    return g_exec_status;
}

/* ---- the engine's side of the worker (struct smc_engine_ops) ---- */

/* The execution is over: as run_worker after co_execution. 1, or -1 when it had to end the
 * worker (exit handlers in libc's list: the checker explores by itself then). */
static int ew_finish(void) {
    if (g_exec_flush) fflush(NULL);
    if (g_exit_for_real) {
        g_worker_spent = 1;
        return -1;
    }
    if (!co_reset((ch->flags & SMC_FLAG_CAPTURED) != 0)) g_worker_spent = 1;
    STORE(&ch->wait_status, g_exec_status);
    return 1;
}

static int ew_settle(void) {
    int ran = 0;
    return co_run_ready(&ran) ? ew_finish() : 0;
}

static int ew_begin(void) {
    if (g_worker_spent) return -1;
    STORE(&ch->child_pid, g_worker_pid); /* what the checker kills if the exploration hangs */
    co_start();
    return ew_settle();
}

/* A step that hung before (hang_soon_us) hangs again: the worker's own timer sends it the hang
 * signal after that long, and again until it is set aside (on_hang waits out the runtime's own
 * code), rather than the checker after the full time limit. */
static timer_t g_hang_timer;
static int g_hang_timer_made;

static void arm_hang_timer(uint32_t us) {
    if (!g_hang_timer_made) {
        struct sigevent ev;
        memset(&ev, 0, sizeof ev);
        ev.sigev_notify = SIGEV_SIGNAL;
        ev.sigev_signo = SMC_HANG_SIGNAL;
        if (timer_create(CLOCK_MONOTONIC, &ev, &g_hang_timer) != 0) return; /* the checker's then */
        g_hang_timer_made = 1;
    }
    struct itimerspec it;
    memset(&it, 0, sizeof it);
    it.it_value.tv_sec = us / 1000000;
    it.it_value.tv_nsec = (long)(us % 1000000) * 1000;
    it.it_interval = it.it_value;
    timer_settime(g_hang_timer, 0, &it, NULL);
}

static int ew_run(void) {
    uint32_t us = LOAD(&ch->hang_soon_us);
    if (!us) return ew_settle();
    arm_hang_timer(us);
    int r = ew_settle();
    if (g_hang_timer_made) {
        struct itimerspec off;
        memset(&off, 0, sizeof off);
        timer_settime(g_hang_timer, 0, &off, NULL);
    }
    STORE(&ch->hang_soon_us, 0);
    return r;
}

/* The engine abandons the execution while its threads wait (as the checker's abort). */
static int ew_end(void) {
    if (!g_exec_over) {
        g_exec_over = 1;
        g_exiting = 1;
        g_exec_status = 0;
        g_exec_flush = 0;
    }
    return ew_finish();
}

/* Run the exploration the checker asked for with command `cmd`; the status to answer it with
 * (0: the answer is in the shared area). */
static int engine_explore(void) {
    if (!g_engine_explore) return 1 << 8;
    struct smc_engine_ops ops = {SMC_ENGINE_ABI, ch, ch->total_size, ew_begin, ew_run, ew_end};
    g_in_engine = 1;
    int r = g_engine_explore(&ops, g_engine_area);
    g_in_engine = 0;
    return r == 0 ? 0 : 1 << 8;
}

/* A worker process: runs the execution of command `cmd`, and every one after it, until it
 * dies (the program crashed, or the supervisor killed it) or must exit for real. */
static void run_worker(uint32_t cmd) {
    if (!co_setup()) {
        STORE(&ch->coroutines, SMC_COROUTINES_FAILED);
        return;
    }
    g_coroutines = 1;
    cpu_set_t cpus;
    if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) == 1) g_yields = WORKER_YIELDS;
    STORE(&ch->coroutines, SMC_COROUTINES_ON);
    pid_t me = getpid();
    g_worker_pid = me;
    int captured = (ch->flags & SMC_FLAG_CAPTURED) != 0;
    for (;;) {
        STORE(&ch->child_pid, me);
        int st, last;
        if (LOAD(&ch->explore_cmd) == cmd) {
            st = engine_explore();
            last = g_worker_spent;
        } else {
            st = co_execution();
            if (g_exit_for_real) { /* end as its process would have; the server reports it */
                if (WIFSIGNALED(st)) reraise_default(WTERMSIG(st)); /* crashed: no exit handlers */
                real_exit(WEXITSTATUS(st));
            }
            last = !co_reset(captured);
        }
        STORE(&ch->wait_status, st);
        STORE(&ch->worker_last, cmd);
        STORE(&ch->exec_done, cmd);
        STORE(&ch->worker_cmd, 0);
        notify_supervisor();
        if (last) die_now(0); /* idle: the server forks a new worker for the next command */
        cmd = next_command(cmd);
        STORE(&ch->worker_cmd, cmd);
    }
}
