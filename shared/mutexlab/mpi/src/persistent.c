/* Persistent requests of mutexlab's MPI (docs/mpi.md#subset): MPI_Send_init (and its synchronous,
 * buffered and ready kinds) and MPI_Recv_init make a request that is inactive; MPI_Start starts it:
 * a started send is the send its kind makes (MPI_Isend, MPI_Issend, MPI_Bsend, MPI_Irsend) of the
 * buffer as it is then, a started receive a receive posted then (MPI_Irecv), both through the
 * director as any other. A wait or test that completes it makes it inactive again, its handle kept;
 * MPI_Request_free frees it. A start of a request that is active is MPI_ERR_REQUEST, as MPI names it. */
#define _GNU_SOURCE
#include <stdio.h>

#include "internal.h"

enum { P_SEND = 1, P_SSEND, P_BSEND, P_RSEND, P_RECV };

static struct {
    int kind, count, peer, tag;
    void *buf;
    MPI_Datatype type;
    MPI_Comm comm;
} made[4096]; /* by request handle (REQUESTS in mpi.c) */

static int init(int kind, const void *buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm,
                MPI_Request *request, const char *call) {
    ml_comm(comm, call); /* a communicator it knows, between MPI_Init and MPI_Finalize */
    MPI_Request h = ml_new_persistent(kind == P_RECV);
    if (h <= 0 || h >= (int)(sizeof made / sizeof *made)) ml_fatal("%s: a request out of range (%d)", call, h);
    made[h].kind = kind;
    made[h].buf = (void *)buf;
    made[h].count = count;
    made[h].type = type;
    made[h].peer = peer;
    made[h].tag = tag;
    made[h].comm = comm;
    *request = h;
    return MPI_SUCCESS;
}

int MPI_Send_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                  MPI_Request *request) {
    return init(P_SEND, buf, count, type, dest, tag, comm, request, "MPI_Send_init");
}

int MPI_Ssend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request *request) {
    return init(P_SSEND, buf, count, type, dest, tag, comm, request, "MPI_Ssend_init");
}

int MPI_Bsend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request *request) {
    return init(P_BSEND, buf, count, type, dest, tag, comm, request, "MPI_Bsend_init");
}

int MPI_Rsend_init(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   MPI_Request *request) {
    return init(P_RSEND, buf, count, type, dest, tag, comm, request, "MPI_Rsend_init");
}

int MPI_Recv_init(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                  MPI_Request *request) {
    return init(P_RECV, buf, count, type, source, tag, comm, request, "MPI_Recv_init");
}

static void start(MPI_Request *request, const char *call) {
    MPI_Request h = *request;
    int active = ml_active(h);
    if (active != 0) ml_error_on(0); /* a request's error: MPI_COMM_WORLD's handler (the request may be none) */
    if (active != 0)
        ml_error(MPI_ERR_REQUEST, "MPI_ERR_REQUEST: %s of %s", call,
                 active > 0 ? "a persistent request that is active (started, and not completed by a wait or test)"
                 : h == MPI_REQUEST_NULL ? "MPI_REQUEST_NULL"
                                         : "a request that is not persistent (MPI_Send_init, MPI_Recv_init … make one)");
    MPI_Request started = MPI_REQUEST_NULL;
    switch (made[h].kind) {
    case P_SEND:
        MPI_Isend(made[h].buf, made[h].count, made[h].type, made[h].peer, made[h].tag, made[h].comm, &started);
        break;
    case P_SSEND:
        MPI_Issend(made[h].buf, made[h].count, made[h].type, made[h].peer, made[h].tag, made[h].comm, &started);
        break;
    case P_BSEND: /* a buffered send is done once sent, as MPI_Isend's */
        MPI_Bsend(made[h].buf, made[h].count, made[h].type, made[h].peer, made[h].tag, made[h].comm);
        MPI_Isend(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, made[h].comm, &started);
        break;
    case P_RSEND:
        MPI_Irsend(made[h].buf, made[h].count, made[h].type, made[h].peer, made[h].tag, made[h].comm, &started);
        break;
    default:
        MPI_Irecv(made[h].buf, made[h].count, made[h].type, made[h].peer, made[h].tag, made[h].comm, &started);
    }
    ml_adopt(h, started);
}

int MPI_Start(MPI_Request *request) {
    ml_thread("MPI_Start");
    start(request, "MPI_Start");
    return MPI_SUCCESS;
}

int MPI_Startall(int count, MPI_Request requests[]) {
    ml_thread("MPI_Startall");
    for (int i = 0; i < count; i++) start(&requests[i], "MPI_Startall");
    return MPI_SUCCESS;
}
