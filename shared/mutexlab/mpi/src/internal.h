/* What collectives.c uses of mpi.c: the messages, communicators and datatypes of mutexlab's MPI. */
#ifndef MUTEXLAB_MPI_INTERNAL_H
#define MUTEXLAB_MPI_INTERNAL_H
#include "mpi.h"

/* A message's context: 4·(its communicator's index) + one of these kinds. */
enum { CTX_P2P = 0, CTX_BARRIER_IN = 1, CTX_BARRIER_OUT = 2, CTX_COLLECTIVE = 3 };

int ml_comm(MPI_Comm comm, const char *call); /* its context (kind 0); stops the run on a bad one */
int ml_next_seq(int ctx);                     /* the communicator's next collective: its tag */
int ml_rank(void);
int ml_size(void);
/* Send bytes (held by mutexlab; to the rank itself they arrive at once). */
void ml_send(int dest, int tag, int ctx, const void *buf, long bytes, const char *call);
int ml_post_recv(void *buf, long capacity, int src, int tag, int ctx); /* a request for MPI_Wait */
unsigned char *ml_pack(const void *buf, int count, MPI_Datatype type, long *bytes, const char *call);
long ml_extent(MPI_Datatype type);
void ml_fatal(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2))); /* stops the run */
#endif
