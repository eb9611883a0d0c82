/* busy.c: busy waits (docs/mpi.md#busy), and what mpi.c gives it. A thread that runs with nothing
 * new in its rank is signalled and, where it runs the program's own code or libgomp's, waits as a
 * poll does; at rest the director's stretch lets it run alone a while longer. */
#ifndef MUTEXLAB_MPI_BUSY_H
#define MUTEXLAB_MPI_BUSY_H
#include <sys/types.h>
#include <time.h>

#define ML_THREADS 1024 /* the threads of a rank mpi.c numbers */

/* What the director thread watches of the running thread during one step. */
typedef struct {
    struct timespec since; /* when it was last seen making progress */
    unsigned long gen;     /* the rank's generation then */
    int baton;             /* the thread running then (-2: a stretch, counted from its start) */
    long long cpu;         /* its processor time then (ns) */
} ml_busy_watch;

void ml_busy_install(void); /* at start: the stopping signal's handler */
/* The director thread (L held): ``thread``, stopped running, is given a stretch of ``ns`` of
 * processor time at generation ``gen``. */
void ml_busy_stretch(int thread, unsigned long gen, long long ns);
/* The director thread, waiting for the rank to be quiet (L held): ``thread`` (kernel id ``tid``)
 * runs; stopped if it has run since ``watch`` with nothing new. */
void ml_busy_check(ml_busy_watch *watch, int thread, pid_t tid, unsigned long gen);

/* mpi.c, for busy.c */
int ml_self(void);               /* the calling thread's number; -1 for one the library does not count */
int ml_in_lock(void);            /* the calling thread holds the library's lock (or is taking it) */
unsigned long ml_gen_held(void); /* the rank's generation: bumped whenever something happens (L held) */
void ml_park_spinner(int sleeper); /* the calling thread waits as a poll, stopped running (L held) */
#endif
