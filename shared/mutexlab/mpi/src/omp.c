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

void GOMP_critical_start(void) {
    static void (*real)(void);
    if (!real) real = (void (*)(void))gomp("GOMP_critical_start");
    ml_unseen(CRITICAL);
    real();
    ml_unseen(NULL);
}

void GOMP_critical_name_start(void **name) {
    static void (*real)(void **);
    if (!real) real = (void (*)(void **))gomp("GOMP_critical_name_start");
    ml_unseen(CRITICAL);
    real(name);
    ml_unseen(NULL);
}

void omp_set_lock(void *lock) {
    static void (*real)(void *);
    if (!real) real = (void (*)(void *))gomp("omp_set_lock");
    ml_unseen("omp_set_lock (an OpenMP lock)");
    real(lock);
    ml_unseen(NULL);
}

void omp_set_nest_lock(void *lock) {
    static void (*real)(void *);
    if (!real) real = (void (*)(void *))gomp("omp_set_nest_lock");
    ml_unseen("omp_set_nest_lock (an OpenMP lock)");
    real(lock);
    ml_unseen(NULL);
}

void GOMP_barrier(void) {
    static void (*real)(void);
    if (!real) real = (void (*)(void))gomp("GOMP_barrier");
    ml_unseen("an OpenMP barrier (#pragma omp barrier)");
    real();
    ml_unseen(NULL);
}
