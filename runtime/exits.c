/* What the end of an execution or of a coroutine thread runs, as libc would at the end of a
 * process or thread: the exit handlers an execution registers (__cxa_atexit, on_exit), C++
 * thread_local destructors, thread-specific data destructors.
 *
 * A worker keeps those an execution registers in lists of its own and runs them itself (from
 * threads.c: co_exit, co_thread_exit), since libc keeps them in memory the snapshot puts back
 * (its list of exit handlers, the TLS a coroutine got as a copy of main's, its key table). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

int g_exit_for_real;  /* the execution must end with exit() (exit handlers in libc's list) */
int g_nexit_handlers; /* exit handlers the worker keeps for the execution (below) */
int g_exit_handlers_registered; /* the execution registered one (with or without coroutines) */

/* Exit handlers an execution registers run when it exits, as exit() would run them. libc's
 * list is put back with the snapshot, so a worker keeps them in a list of its own and runs
 * them itself (run_exit_handlers). Past its room, the rest go to libc after one handler that
 * runs ours (so the order stays last in, first out), and the execution ends with exit(). */
#define SMC_MAX_EXIT_HANDLERS 256
static struct {
    void (*fn)(void *);
    void (*on)(int, void *);
    void *arg;
} g_exit_handlers[SMC_MAX_EXIT_HANDLERS];

void run_exit_handlers(int status) {
    while (g_nexit_handlers > 0) { /* a handler may register more */
        int i = --g_nexit_handlers;
        if (g_exit_handlers[i].on) g_exit_handlers[i].on(status, g_exit_handlers[i].arg);
        else g_exit_handlers[i].fn(g_exit_handlers[i].arg);
    }
}

static void run_kept_exit_handlers(int status, void *arg) {
    (void)arg;
    run_exit_handlers(status);
}

/* Keep a handler for the worker; 0 when libc must take it. */
static int keep_exit_handler(void (*fn)(void *), void (*on)(int, void *), void *arg) {
    if (in_execution()) g_exit_handlers_registered = 1;
    if (!g_coroutines || !in_execution() || g_exit_for_real) return 0;
    if (g_nexit_handlers == SMC_MAX_EXIT_HANDLERS) {
        g_exit_for_real = 1;
        REAL_FN(on_exit)(run_kept_exit_handlers, NULL);
        return 0;
    }
    g_exit_handlers[g_nexit_handlers].fn = fn;
    g_exit_handlers[g_nexit_handlers].on = on;
    g_exit_handlers[g_nexit_handlers].arg = arg;
    g_nexit_handlers++;
    return 1;
}

EXPORT int __cxa_atexit(void (*fn)(void *), void *arg, void *dso) {
    if (keep_exit_handler(fn, NULL, arg)) return 0;
    REAL(__cxa_atexit, fn, arg, dso);
}
EXPORT int on_exit(void (*fn)(int, void *), void *arg) {
    if (keep_exit_handler(NULL, fn, arg)) return 0;
    REAL(on_exit, fn, arg);
}

/* Destructors a real thread would run when it ends, which a coroutine runs itself
 * (co_thread_exit): C++ thread_local objects' (registered per thread with
 * __cxa_thread_atexit_impl; kept here for the execution, since libc keeps them in the TLS the
 * coroutine got as a copy of main's) and thread-specific data's (pthread_key_create; keys are
 * remembered as created, and those an execution creates or deletes are forgotten with it, as
 * the snapshot puts libc's key table back). */
#define SMC_MAX_TLS_DTORS 1024
static struct {
    int slot;
    void (*dtor)(void *);
    void *obj;
} g_tls_dtors[SMC_MAX_TLS_DTORS];
static int g_ntls_dtors;

EXPORT int __cxa_thread_atexit_impl(void (*dtor)(void *), void *obj, void *dso) {
    if (g_coroutines && in_execution() && g_ntls_dtors < SMC_MAX_TLS_DTORS) {
        g_tls_dtors[g_ntls_dtors].slot = t_slot;
        g_tls_dtors[g_ntls_dtors].dtor = dtor;
        g_tls_dtors[g_ntls_dtors].obj = obj;
        g_ntls_dtors++;
        return 0;
    }
    REAL(__cxa_thread_atexit_impl, dtor, obj, dso);
}

/* Newest first; a destructor may register more. */
void run_thread_local_dtors(int slot) {
    for (;;) {
        int i = g_ntls_dtors - 1;
        while (i >= 0 && g_tls_dtors[i].slot != slot) i--;
        if (i < 0) return;
        void (*dtor)(void *) = g_tls_dtors[i].dtor;
        void *obj = g_tls_dtors[i].obj;
        memmove(&g_tls_dtors[i], &g_tls_dtors[i + 1], (size_t)(g_ntls_dtors - i - 1) * sizeof g_tls_dtors[0]);
        g_ntls_dtors--;
        dtor(obj);
    }
}

#define SMC_MAX_KEYS 1024
struct key_dtor {
    pthread_key_t key;
    void (*dtor)(void *);
};
static struct key_dtor g_keys[SMC_MAX_KEYS], g_keys_at_main[SMC_MAX_KEYS];
static int g_nkeys, g_nkeys_at_main, g_keys_changed;

static void forget_key(pthread_key_t key) {
    for (int i = 0; i < g_nkeys; i++)
        if (g_keys[i].key == key) g_keys[i--] = g_keys[--g_nkeys];
}

EXPORT int pthread_key_create(pthread_key_t *key, void (*dtor)(void *)) {
    int r = REAL_FN(pthread_key_create)(key, dtor);
    if (r == 0) {
        forget_key(*key);
        if (dtor && g_nkeys < SMC_MAX_KEYS) {
            g_keys[g_nkeys].key = *key;
            g_keys[g_nkeys].dtor = dtor;
            g_nkeys++;
        }
        g_keys_changed = 1;
    }
    return r;
}

EXPORT int pthread_key_delete(pthread_key_t key) {
    forget_key(key);
    g_keys_changed = 1;
    REAL(pthread_key_delete, key);
}

/* As glibc: each non-null value is set to null and its destructor called, in rounds while
 * destructors set new values. */
void run_key_dtors(void) {
    for (int round = 0; round < 4; round++) { /* glibc's PTHREAD_DESTRUCTOR_ITERATIONS */
        int any = 0;
        for (int i = 0; i < g_nkeys; i++) {
            void *v = pthread_getspecific(g_keys[i].key);
            if (!v) continue;
            pthread_setspecific(g_keys[i].key, NULL);
            g_keys[i].dtor(v);
            any = 1;
        }
        if (!any) return;
    }
}

/* At the snapshot: the keys that exist at main. */
void keep_keys_at_main(void) {
    memcpy(g_keys_at_main, g_keys, sizeof g_keys);
    g_nkeys_at_main = g_nkeys;
    g_keys_changed = 0;
}

/* Before each execution: none of the last one's thread_local destructors, main's keys. */
void co_thread_reset(void) {
    g_ntls_dtors = 0;
    if (!g_keys_changed) return;
    memcpy(g_keys, g_keys_at_main, sizeof g_keys);
    g_nkeys = g_nkeys_at_main;
    g_keys_changed = 0;
}

