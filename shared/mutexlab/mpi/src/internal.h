/* What the other files of mutexlab's MPI use of mpi.c, and what comm.c, errors.c and types.c give
 * the others: the messages, communicators, requests and datatypes of mutexlab's MPI. */
#ifndef MUTEXLAB_MPI_INTERNAL_H
#define MUTEXLAB_MPI_INTERNAL_H
#include "mpi.h"

/* A message's context: 4·(its communicator's context id) + one of these kinds. */
enum { CTX_P2P = 0, CTX_BARRIER_IN = 1, CTX_BARRIER_OUT = 2, CTX_COLLECTIVE = 3 };

/* comm.c: communicators. A rank number of a communicator is its own; messages name world ranks. */
int ml_comm(MPI_Comm comm, const char *call); /* its context (kind 0); stops the run on a bad one */
int ml_next_seq(int ctx);                     /* the communicator's next collective: its tag */
int ml_rank(int ctx);                         /* this rank's number in the context's communicator */
int ml_size(int ctx);
int ml_world(int ctx, int rank); /* the communicator's rank as a world rank (MPI_ANY_SOURCE, MPI_PROC_NULL kept) */
int ml_local(int ctx, int world); /* a world rank as the communicator's rank */
int ml_world_held(int ctx, int rank); /* the same, called with the library's lock held */
int ml_local_held(int ctx, int world);
int ml_comm_members(MPI_Comm comm, int **members, const char *call); /* its size; a copy to free */
MPI_Comm ml_comm_create(MPI_Comm comm, int *members, int size, int me, const char *call);

/* mpi.c */
unsigned long ml_call_site(void); /* sites.c: where this thread is, the same in every run */
void ml_lock(void); /* the library's lock */
void ml_unlock(void);
void ml_thread(const char *call); /* stops the run on a thread the library does not count */
int ml_phase(void);               /* 0 before MPI_Init, 1 after it, 2 after MPI_Finalize */
int ml_me(void);                  /* the world rank and size */
int ml_np(void);
/* Send bytes (held by mutexlab; to the rank itself they arrive at once). */
void ml_send(int dest, int tag, int ctx, const void *buf, long bytes, const char *call);
int ml_post_recv(void *buf, long capacity, int src, int tag, int ctx); /* a request for MPI_Wait */
int ml_post_recv_n(void *buf, long capacity, int src, int tag, int ctx, int n); /* done after n messages */
MPI_Request ml_new_persistent(int recv);             /* an inactive persistent request */
int ml_active(MPI_Request handle);                   /* 1 started, 0 inactive, -1 not persistent */
void ml_adopt(MPI_Request handle, MPI_Request started); /* started: its send or receive, now handle's */

/* types.c: datatypes. */
void ml_types_init(void); /* the predefined datatypes (at MPI_Init) */
/* A message's bytes: ``count`` elements of ``type`` (stops the run on an unknown type). */
unsigned char *ml_pack(const void *buf, int count, MPI_Datatype type, long *bytes, const char *call);
long ml_extent(MPI_Datatype type); /* its extent in bytes (stops the run on an unknown type) */
/* A point-to-point receive of ``count`` of ``type``: the bytes it takes (ml_room), put where its map
 * says (ml_unpack: the bytes as they are but for a strided type). */
long ml_room(int count, MPI_Datatype type);
void ml_unpack(void *buf, const unsigned char *data, long n, MPI_Datatype type);
/* A datatype's map: byte ranges from the start of one element (stride.c makes the strided ones). */
#define BLOCKS 64 /* byte ranges a datatype's map keeps; more, and its whole extent is sent */

typedef struct {
    long size, extent, align, elems; /* elems: basic elements of one (MPI_Get_elements) */
    int used, nblocks; /* nblocks 0: the whole extent */
    int strided;       /* gaps between its data that a message leaves out (stride.c) */
    long off[BLOCKS], len[BLOCKS];
} dtype;
dtype *ml_type(MPI_Datatype type);                     /* stops the run on an unknown type */
void ml_add_block(dtype *t, long off, long len);       /* the map's ranges, merged */
void ml_add_blocks(dtype *t, const dtype *old, long at); /* old's map, at ``at`` */
int ml_new_type(const dtype *made);

/* collectives.c, for vcollectives.c: the collective context of ``comm`` and its next number (the tag) */
int ml_coll_start(MPI_Comm comm, const char *call, int *seq);
void ml_coll_recv(void *buf, long bytes, int src, int tag, int ctx);
void ml_coll_send(int dest, const void *buf, int count, MPI_Datatype type, int tag, int ctx, const char *call);
void ml_coll_root(int root, int ctx, const char *call); /* MPI_ERR_ROOT */

/* mpi.c */
void ml_flush(void);              /* sems.c: the program's stdout and std::cout flushed (lock not held) */
void ml_sync_stdout(void);        /* cout.c: the same */
void ml_say(const char *line);    /* report.c: a line to the director (lock not held) */
void ml_put_line(const char *line); /* rma.c: a line to the director (lock held) */
void ml_json_string(char *dst, size_t cap, const char *src); /* src as a JSON string */
void ml_block_held(void *key);    /* wait on key until ml_wake(key) or something happens (lock held) */
void ml_block_as(void *key, const char *call); /* the same, in the program's call (a hang names it) */
void ml_wake(void *key);          /* wake every waiter on key */
/* unseen.c, omp.c: what a thread waits in that the library cannot direct (NULL: nothing), and the
 * words for the thread of kernel id tid that keeps the rank busy (named: what it said it waits in) */
void ml_unseen(const char *what);
void ml_unseen_words(char *out, size_t size, int tid, const char *named);
void ml_poll(void);               /* a poll that found nothing (a counted thread's) */
int ml_sleep(long long ns); /* a counted thread's sleep, taking no time (1); 0: not counted, sleep for real */
int ml_counted(void);          /* mpi.c: the calling thread is one the library counts */
void ml_clock_on(long long ns); /* mpi.c: mutexlab's clock moved on by ns, as a sleep moves it (lock not held) */
void *ml_real(const char *name, const char *version); /* the C library's (at version, if given); exit 70 if none */
void ml_fatal(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2))); /* stops the run */
/* An error MPI's default handler makes fatal: the rank ends with status ``code`` (a crash finding). */
void ml_error(int code, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

/* clocks.c: the C library's clock_gettime (the library's own waits); mpi.c: mutexlab's clock in ns,
 * read without the library's lock, the calling thread marked as one that reads the clock. */
#include <time.h>
int ml_real_clock_gettime(clockid_t clock, struct timespec *t);
long long ml_clock_read(void);

/* errors.c: error handlers, by communicator context. An error is raised on the communicator of the
 * calling thread's last ml_comm (or the context ml_error_on names). */
void ml_error_on(int ctx);
int ml_error_ctx(void);
int ml_handler_held(void); /* the handler of this thread's error communicator (lock held) */
int ml_call_made_handler(int handler, int ctx, int code); /* 1: a handler the program made was called */
void ml_errhandler_inherit(int parent_ctx, int ctx);
void ml_errhandler_forget(int ctx);
MPI_Comm ml_comm_handle(int ctx); /* comm.c: the handle of a context's communicator (lock not held) */

/* hangs.c: a done line naming what the main thread waits in (a hang when the run is at rest);
 * its length, 0 if it does not fit. mpi.c: the collective a thread last began (collectives.c sets it). */
enum { ML_WAIT_RECV, ML_WAIT_SEND, ML_WAIT_PROBE, ML_WAIT_OTHER, ML_WAIT_STD_SEND };
int ml_waits_in(char *line, size_t size, int kind, const char *call, int peer, int tag, int ctx);
void ml_wait_what(char *what, size_t size, int kind, const char *call, int peer, int tag, int ctx); /* its words */
int ml_sync_sends(void); /* mpi.c: standard sends wait for their receive (--sync-sends) */
int ml_sized_sync(void); /* mpi.c: a standard send waited for its receive by its size (over 4,040 bytes) */
extern __thread const char *ml_collective;

/* rma.c: one-sided communication; mpi.c hands it each RMA message delivered (under L), and gives it
 * ml_wake with the lock held and a message of the library's own (a JSON body) to a world rank. */
void ml_rma_arrive(const char *line, int from);
void ml_rma_settle(void); /* at the end of a step (under L) */
int ml_rma_pause(void);   /* mpi.c: before an operation on the rank's own window, a pause (lock not held) */
void ml_wake_held(void *key);
void ml_block_astir(void *key, const char *call); /* a wait as a poll: the rank not claimed hung (under L) */
void ml_put_held(int dest, const char *body);
/* collectives.c: acc = acc op in for a predefined or made operation (0: op does not apply to type) */
int ml_combine(void *acc, void *in, int n, MPI_Datatype type, MPI_Op op);

/* topo.c: a communicator's Cartesian topology forgotten (MPI_Comm_free) */
void ml_topo_forget(MPI_Comm comm);

/* loc.c: MPI_MAXLOC and MPI_MINLOC on MPI_2INT and MPI_DOUBLE_INT (0: not these); their maps. */
int ml_combine_loc(void *acc, const void *in, int n, MPI_Datatype type, MPI_Op op);
void ml_loc_types(long size[2], long extent[2], long align[2], long data[2]);
#endif
