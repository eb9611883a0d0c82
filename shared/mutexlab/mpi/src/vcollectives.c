/* The collectives of varying counts and all-to-all of mutexlab's MPI (docs/mpi.md#subset):
 * MPI_Gatherv, MPI_Scatterv, MPI_Allgatherv, MPI_Alltoall and MPI_Reduce_scatter_block, made of
 * messages the director orders like any other (the root sends to each rank, each rank to the root;
 * MPI_Allgatherv is MPI_Gatherv to rank 0, then a broadcast; MPI_Alltoall every rank to every other). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void copy_own(void *to, long room, const void *from, int count, MPI_Datatype type, const char *call) {
    long bytes;
    unsigned char *packed = ml_pack(from, count, type, &bytes, call);
    memcpy(to, packed, (size_t)(bytes < room ? bytes : room));
    free(packed);
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
    int seq, ctx = ml_coll_start(comm, "MPI_Gatherv", &seq);
    ml_coll_root(root, ctx, "MPI_Gatherv");
    if (ml_rank(ctx) != root) {
        ml_coll_send(root, sendbuf, sendcount, sendtype, seq, ctx, "MPI_Gatherv");
        return MPI_SUCCESS;
    }
    long extent = ml_extent(recvtype);
    for (int i = 0; i < ml_size(ctx); i++) {
        char *slot = (char *)recvbuf + displs[i] * extent;
        if (i != root)
            ml_coll_recv(slot, recvcounts[i] * extent, i, seq, ctx);
        else if (sendbuf != MPI_IN_PLACE)
            copy_own(slot, recvcounts[i] * extent, sendbuf, sendcount, sendtype, "MPI_Gatherv");
    }
    return MPI_SUCCESS;
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    int seq, ctx = ml_coll_start(comm, "MPI_Scatterv", &seq);
    ml_coll_root(root, ctx, "MPI_Scatterv");
    long room = recvcount * ml_extent(recvtype);
    if (ml_rank(ctx) != root) {
        ml_coll_recv(recvbuf, room, root, seq, ctx);
        return MPI_SUCCESS;
    }
    long extent = ml_extent(sendtype);
    for (int i = 0; i < ml_size(ctx); i++) {
        const char *part = (const char *)sendbuf + displs[i] * extent;
        if (i != root)
            ml_coll_send(i, part, sendcounts[i], sendtype, seq, ctx, "MPI_Scatterv");
        else if (recvbuf != MPI_IN_PLACE)
            copy_own(recvbuf, room, part, sendcounts[i], sendtype, "MPI_Scatterv");
    }
    return MPI_SUCCESS;
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
    int ctx = ml_comm(comm, "MPI_Allgatherv"), me = ml_rank(ctx), size = ml_size(ctx);
    long extent = ml_extent(recvtype);
    if (sendbuf == MPI_IN_PLACE && me != 0) { /* this rank's part is in its place in recvbuf already */
        sendbuf = (char *)recvbuf + displs[me] * extent;
        sendcount = recvcounts[me];
        sendtype = recvtype;
    }
    MPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, 0, comm);
    int seq;
    ctx = ml_coll_start(comm, "MPI_Allgatherv", &seq); /* rank 0 sends each part where it goes */
    for (int i = 0; i < size; i++) {
        char *slot = (char *)recvbuf + displs[i] * extent;
        if (me == 0) {
            for (int r = 1; r < size; r++) ml_coll_send(r, slot, recvcounts[i], recvtype, seq, ctx, "MPI_Allgatherv");
        } else {
            ml_coll_recv(slot, recvcounts[i] * extent, 0, seq, ctx);
        }
    }
    return MPI_SUCCESS;
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
    int seq, ctx = ml_coll_start(comm, "MPI_Alltoall", &seq);
    int me = ml_rank(ctx), size = ml_size(ctx);
    long chunk = sendcount * ml_extent(sendtype), each = recvcount * ml_extent(recvtype);
    if (sendbuf == MPI_IN_PLACE) ml_fatal("MPI_Alltoall with MPI_IN_PLACE: not implemented by mutexlab's MPI");
    for (int i = 0; i < size; i++) {
        const char *part = (const char *)sendbuf + i * chunk;
        if (i != me)
            ml_coll_send(i, part, sendcount, sendtype, seq, ctx, "MPI_Alltoall");
        else
            copy_own((char *)recvbuf + i * each, each, part, sendcount, sendtype, "MPI_Alltoall");
    }
    for (int i = 0; i < size; i++) /* in rank order: a posted receive per rank, each matching its own */
        if (i != me) ml_coll_recv((char *)recvbuf + i * each, each, i, seq, ctx);
    return MPI_SUCCESS;
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm) {
    int ctx = ml_comm(comm, "MPI_Reduce_scatter_block"), size = ml_size(ctx);
    long bytes = (long)recvcount * size * ml_extent(type);
    unsigned char *all = malloc((size_t)bytes + 1);
    if (!all) ml_fatal("MPI_Reduce_scatter_block: out of memory");
    const void *mine = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    MPI_Reduce(mine, all, recvcount * size, type, op, 0, comm);
    MPI_Scatter(all, recvcount, type, recvbuf, recvcount, type, 0, comm);
    free(all);
    return MPI_SUCCESS;
}
