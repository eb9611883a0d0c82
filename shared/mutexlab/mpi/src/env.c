/* The environment of mutexlab's MPI (docs/mpi.md#subset): what the library says it is, which thread
 * is the main one, and the one node every rank is on (MPI_Comm_split_type). */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

int MPI_Get_library_version(char *version, int *resultlen) {
    int n = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                     "mutexlab's MPI (MPI %d.%d subset; every message held by mutexlab's director)", MPI_VERSION,
                     MPI_SUBVERSION);
    *resultlen = n < MPI_MAX_LIBRARY_VERSION_STRING ? n : MPI_MAX_LIBRARY_VERSION_STRING - 1;
    return MPI_SUCCESS;
}

/* The main thread: the process's first (a program calls MPI_Init from main). */
int MPI_Is_thread_main(int *flag) {
    *flag = syscall(SYS_gettid) == getpid();
    return MPI_SUCCESS;
}

/* Every rank runs on this machine: MPI_COMM_TYPE_SHARED gives one communicator of all of comm's
 * ranks (an MPI_Comm_split of one color, collective as MPI says); MPI_UNDEFINED gives MPI_COMM_NULL. */
int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm) {
    (void)info;
    if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED)
        ml_fatal("MPI_Comm_split_type with split type %d: mutexlab's MPI has MPI_COMM_TYPE_SHARED", split_type);
    return MPI_Comm_split(comm, split_type == MPI_UNDEFINED ? MPI_UNDEFINED : 0, key, newcomm);
}
