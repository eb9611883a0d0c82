/* Tell mutexlab what the program does, beside its messages (docs/mpi.md): one call where the
 * program enters or leaves a resource. For programs built with `mutexlab mpicc`; an alternative
 * to reading the program's printf output with --regex. Built against another MPI (Open MPI,
 * MPICH: put this header's directory on the path with -idirafter, after the MPI's own mpi.h),
 * the calls do nothing, so the same source runs under mpirun unchanged. */
#ifndef MUTEXLAB_H
#define MUTEXLAB_H
#include <mpi.h>
#ifdef MUTEXLAB_MPI
#ifdef __cplusplus
extern "C" {
#endif
void mutexlab_enter(const char *resource); /* e.g. mutexlab_enter("cs") */
void mutexlab_exit(const char *resource);
/* A process state for the trace (a problem's audit may read it): mutexlab_state("DEAD"). */
void mutexlab_state(const char *state);
/* A scenario event: its name and its fields as the members of a JSON object, or NULL:
 * mutexlab_event("visit", "\"count\": 1, \"place\": 2"). */
void mutexlab_event(const char *event, const char *fields);
#ifdef __cplusplus
}
#endif
#else /* another MPI: nothing to tell */
static inline void mutexlab_enter(const char *resource) { (void)resource; }
static inline void mutexlab_exit(const char *resource) { (void)resource; }
static inline void mutexlab_state(const char *state) { (void)state; }
static inline void mutexlab_event(const char *event, const char *fields) { (void)event; (void)fields; }
#endif
#endif
