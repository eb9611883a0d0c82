/* OpenMP's critical sections and locks, named: libgomp waits on futexes through system calls of
 * its own, which the library cannot see, so a thread waiting in one keeps its rank busy (the
 * stalled finding). These wrappers, linked only into a program that calls them, say which
 * construct the thread waits in (ml_unseen) and call libgomp's own. */
#define _GNU_SOURCE
#include <dlfcn.h>

#include "internal.h"

static void *gomp(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) ml_fatal("%s: libgomp's own is not found (is the program linked with -fopenmp?)", name);
    return f;
}

#define CRITICAL "an OpenMP critical section (#pragma omp critical)"

/* libgomp's function NAME(PARAMS), called with ARGS, said to wait in WHAT while it runs. */
#define NAMED_WAIT(NAME, WHAT, PARAMS, TYPES, ARGS)                 \
    void NAME PARAMS {                                               \
        static void(*real) TYPES;                                    \
        if (!real) real = (void(*) TYPES)gomp(#NAME);                \
        ml_unseen(WHAT);                                             \
        real ARGS;                                                   \
        ml_unseen(NULL);                                             \
    }

NAMED_WAIT(GOMP_critical_start, CRITICAL, (void), (void), ())
NAMED_WAIT(GOMP_critical_name_start, CRITICAL, (void **name), (void **), (name))
NAMED_WAIT(omp_set_lock, "omp_set_lock (an OpenMP lock)", (void *lock), (void *), (lock))
NAMED_WAIT(omp_set_nest_lock, "omp_set_nest_lock (an OpenMP lock)", (void *lock), (void *), (lock))
NAMED_WAIT(GOMP_barrier, "an OpenMP barrier (#pragma omp barrier)", (void), (void), ())
