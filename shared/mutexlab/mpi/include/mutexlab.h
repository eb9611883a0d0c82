/* Tell mutexlab what the program does, beside its messages (docs/mpi.md): one call where the
 * program enters or leaves a resource. For programs built with `mutexlab mpicc`; an alternative
 * to reading the program's printf output with --regex. */
#ifndef MUTEXLAB_H
#define MUTEXLAB_H
#ifdef __cplusplus
extern "C" {
#endif
void mutexlab_enter(const char *resource); /* e.g. mutexlab_enter("cs") */
void mutexlab_exit(const char *resource);
#ifdef __cplusplus
}
#endif
#endif
