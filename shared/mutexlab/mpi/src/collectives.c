/* Collectives of mutexlab's MPI, built from its point-to-point messages (docs/mpi.md#subset):
 * every one a set of messages the director orders like any other. A collective's messages carry
 * the communicator's CTX_COLLECTIVE context and, as their tag, the collective's number on that
 * communicator (every rank calls a communicator's collectives in the same order, as MPI asks),
 * so two collectives never take each other's messages, even with --reorder. A reduction combines
 * the ranks' values in rank order, the same every run. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void ml_coll_recv(void *buf, long bytes, int src, int tag, int ctx) {
    MPI_Request r = ml_post_recv(buf, bytes, src, tag, ctx);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
}

void ml_coll_send(int dest, const void *buf, int count, MPI_Datatype type, int tag, int ctx, const char *call) {
    long bytes;
    unsigned char *packed = ml_pack(buf, count, type, &bytes, call);
    ml_send(dest, tag, ctx, packed, bytes, call);
    free(packed);
}

/* MPI_ERR_ROOT: fatal under MPI's default handler, a crash (as a send's MPI_ERR_RANK) */
void ml_coll_root(int root, int ctx, const char *call) {
    if (root < 0 || root >= ml_size(ctx))
        ml_error(MPI_ERR_ROOT, "MPI_ERR_ROOT: %s with root %d (there are ranks 0 to %d)", call, root, ml_size(ctx) - 1);
}

int ml_coll_start(MPI_Comm comm, const char *call, int *seq) { /* the collective context */
    int ctx = ml_comm(comm, call) + CTX_COLLECTIVE;
    ml_collective = call;
    fflush(stdout);
    *seq = ml_next_seq(ctx);
    return ctx;
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
    int seq, ctx = ml_coll_start(comm, "MPI_Bcast", &seq);
    ml_coll_root(root, ctx, "MPI_Bcast");
    if (ml_rank(ctx) == root) {
        for (int i = 0; i < ml_size(ctx); i++)
            if (i != root) ml_coll_send(i, buf, count, type, seq, ctx, "MPI_Bcast");
    } else {
        ml_coll_recv(buf, count * ml_extent(type), root, seq, ctx);
    }
    return MPI_SUCCESS;
}

/* acc[i] = acc[i] op in[i] over n elements of a predefined type; 0 when op does not apply. */
#define ARITH(T)                                                   \
    case MPI_SUM:  for (int i = 0; i < n; i++) ((T *)acc)[i] += ((const T *)in)[i]; return 1; \
    case MPI_PROD: for (int i = 0; i < n; i++) ((T *)acc)[i] *= ((const T *)in)[i]; return 1; \
    case MPI_MAX:  for (int i = 0; i < n; i++) if (((const T *)in)[i] > ((T *)acc)[i]) ((T *)acc)[i] = ((const T *)in)[i]; return 1; \
    case MPI_MIN:  for (int i = 0; i < n; i++) if (((const T *)in)[i] < ((T *)acc)[i]) ((T *)acc)[i] = ((const T *)in)[i]; return 1; \
    case MPI_LAND: for (int i = 0; i < n; i++) ((T *)acc)[i] = ((T *)acc)[i] && ((const T *)in)[i]; return 1; \
    case MPI_LOR:  for (int i = 0; i < n; i++) ((T *)acc)[i] = ((T *)acc)[i] || ((const T *)in)[i]; return 1; \
    case MPI_LXOR: for (int i = 0; i < n; i++) ((T *)acc)[i] = !((T *)acc)[i] != !((const T *)in)[i]; return 1;
#define BITS(T)                                                    \
    case MPI_BAND: for (int i = 0; i < n; i++) ((T *)acc)[i] &= ((const T *)in)[i]; return 1; \
    case MPI_BOR:  for (int i = 0; i < n; i++) ((T *)acc)[i] |= ((const T *)in)[i]; return 1; \
    case MPI_BXOR: for (int i = 0; i < n; i++) ((T *)acc)[i] ^= ((const T *)in)[i]; return 1;
#define INTEGER(T) switch (op) { ARITH(T) BITS(T) default: return 0; }
#define FLOATING(T) switch (op) { ARITH(T) default: return 0; }

static int combine_predefined(void *acc, const void *in, int n, MPI_Datatype type, MPI_Op op) {
    switch (type) {
    case MPI_CHAR: case MPI_SIGNED_CHAR: case MPI_INT8_T: INTEGER(signed char)
    case MPI_UNSIGNED_CHAR: case MPI_BYTE: case MPI_UINT8_T: case MPI_C_BOOL: INTEGER(unsigned char)
    case MPI_SHORT: case MPI_INT16_T: INTEGER(short)
    case MPI_UNSIGNED_SHORT: case MPI_UINT16_T: INTEGER(unsigned short)
    case MPI_INT: case MPI_INT32_T: case MPI_WCHAR: INTEGER(int)
    case MPI_UNSIGNED: case MPI_UINT32_T: INTEGER(unsigned)
    case MPI_LONG: case MPI_AINT: INTEGER(long)
    case MPI_UNSIGNED_LONG: INTEGER(unsigned long)
    case MPI_LONG_LONG: case MPI_INT64_T: INTEGER(long long)
    case MPI_UNSIGNED_LONG_LONG: case MPI_UINT64_T: INTEGER(unsigned long long)
    case MPI_FLOAT: FLOATING(float)
    case MPI_DOUBLE: FLOATING(double)
    case MPI_LONG_DOUBLE: FLOATING(long double)
    case MPI_2INT: case MPI_DOUBLE_INT: return ml_combine_loc(acc, in, n, type, op);
    default: return 0;
    }
}

/* Operations made by MPI_Op_create: the program's function, which computes inout = in op inout. */
#define FIRST_MADE_OP 32
#define MADE_OPS 16
static MPI_User_function *made_ops[MADE_OPS];

int MPI_Op_create(MPI_User_function *fn, int commute, MPI_Op *op) {
    (void)commute; /* every reduction here combines in rank order: right for either */
    ml_lock();
    int i = 0;
    while (i < MADE_OPS && made_ops[i]) i++;
    if (i < MADE_OPS) made_ops[i] = fn;
    ml_unlock();
    if (i == MADE_OPS) ml_fatal("MPI_Op_create: more than %d operations at once", MADE_OPS);
    *op = FIRST_MADE_OP + i;
    return MPI_SUCCESS;
}

int MPI_Op_free(MPI_Op *op) {
    if (*op >= FIRST_MADE_OP && *op < FIRST_MADE_OP + MADE_OPS) {
        ml_lock();
        made_ops[*op - FIRST_MADE_OP] = NULL;
        ml_unlock();
    }
    *op = 0;
    return MPI_SUCCESS;
}

static MPI_User_function *made_op(MPI_Op op) {
    return op >= FIRST_MADE_OP && op < FIRST_MADE_OP + MADE_OPS ? made_ops[op - FIRST_MADE_OP] : NULL;
}

/* acc = acc op in, acc the lower ranks' (``in`` may be overwritten); 0 when op does not apply. */
static int combine(void *acc, void *in, int n, MPI_Datatype type, MPI_Op op) {
    MPI_User_function *fn = made_op(op);
    if (!fn) return combine_predefined(acc, in, n, type, op);
    if (n > 0) {
        fn(acc, in, &n, &type); /* in = acc op in */
        memcpy(acc, in, (size_t)(n * ml_extent(type)));
    }
    return 1;
}

int ml_combine(void *acc, void *in, int n, MPI_Datatype type, MPI_Op op) { return combine(acc, in, n, type, op); }

static const char *op_name(MPI_Op op) {
    static const char *names[] = {"?", "MPI_MAX", "MPI_MIN", "MPI_SUM", "MPI_PROD", "MPI_LAND", "MPI_LOR",
                                  "MPI_BAND", "MPI_BOR", "MPI_MAXLOC", "MPI_MINLOC", "MPI_LXOR", "MPI_BXOR"};
    return op >= 1 && op <= MPI_BXOR ? names[op] : "an operation it does not know";
}

static int reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                  MPI_Comm comm, const char *call) {
    int seq, ctx = ml_coll_start(comm, call, &seq);
    ml_coll_root(root, ctx, call);
    int me = ml_rank(ctx);
    long bytes = count * ml_extent(type);
    unsigned char probe = 0;
    if (count > 0 && !combine(&probe, &probe, 0, type, op))
        ml_fatal("%s with %s on datatype %d: mutexlab's MPI reduces the predefined numeric types with "
                 "MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN and the logical and bitwise operations (MPI_MAXLOC, MPI_MINLOC: "
                 "on MPI_2INT and MPI_DOUBLE_INT)",
                 call, op_name(op), type);
    const void *mine = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    if (me != root) {
        ml_coll_send(root, mine, count, type, seq, ctx, call);
        return MPI_SUCCESS;
    }
    unsigned char *acc = malloc((size_t)bytes + 1), *in = malloc((size_t)bytes + 1);
    if (!acc || !in) ml_fatal("%s: out of memory", call);
    for (int i = 0; i < ml_size(ctx); i++) { /* rank order: the same result every run */
        unsigned char *value = i == 0 ? acc : in;
        if (i == me)
            memcpy(value, mine, (size_t)bytes);
        else
            ml_coll_recv(value, bytes, i, seq, ctx);
        if (i > 0) combine(acc, in, count, type, op);
    }
    memcpy(recvbuf, acc, (size_t)bytes);
    free(acc);
    free(in);
    return MPI_SUCCESS;
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
    return reduce(sendbuf, recvbuf, count, type, op, root, comm, "MPI_Reduce");
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    reduce(sendbuf, recvbuf, count, type, op, 0, comm, "MPI_Allreduce");
    return MPI_Bcast(recvbuf, count, type, 0, comm);
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm) {
    int seq, ctx = ml_coll_start(comm, "MPI_Gather", &seq);
    ml_coll_root(root, ctx, "MPI_Gather");
    if (ml_rank(ctx) != root) {
        ml_coll_send(root, sendbuf, sendcount, sendtype, seq, ctx, "MPI_Gather");
        return MPI_SUCCESS;
    }
    long each = recvcount * ml_extent(recvtype);
    for (int i = 0; i < ml_size(ctx); i++) {
        char *slot = (char *)recvbuf + i * each;
        if (i != root) {
            ml_coll_recv(slot, each, i, seq, ctx);
        } else if (sendbuf != MPI_IN_PLACE) {
            long bytes;
            unsigned char *packed = ml_pack(sendbuf, sendcount, sendtype, &bytes, "MPI_Gather");
            memcpy(slot, packed, (size_t)(bytes < each ? bytes : each));
            free(packed);
        }
    }
    return MPI_SUCCESS;
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm) {
    int seq, ctx = ml_coll_start(comm, "MPI_Scatter", &seq);
    ml_coll_root(root, ctx, "MPI_Scatter");
    long each = recvcount * ml_extent(recvtype);
    if (ml_rank(ctx) != root) {
        ml_coll_recv(recvbuf, each, root, seq, ctx);
        return MPI_SUCCESS;
    }
    long chunk = sendcount * ml_extent(sendtype);
    for (int i = 0; i < ml_size(ctx); i++) {
        const char *part = (const char *)sendbuf + i * chunk;
        if (i != root)
            ml_coll_send(i, part, sendcount, sendtype, seq, ctx, "MPI_Scatter");
        else if (recvbuf != MPI_IN_PLACE)
            memcpy(recvbuf, part, (size_t)(chunk < each ? chunk : each));
    }
    return MPI_SUCCESS;
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
    int ctx = ml_comm(comm, "MPI_Allgather");
    if (sendbuf == MPI_IN_PLACE) { /* this rank's part is in its place in recvbuf already */
        sendbuf = (char *)recvbuf + ml_rank(ctx) * recvcount * ml_extent(recvtype);
        sendcount = recvcount;
        sendtype = recvtype;
        if (ml_rank(ctx) == 0) sendbuf = MPI_IN_PLACE;
    }
    MPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0, comm);
    return MPI_Bcast(recvbuf, recvcount * ml_size(ctx), recvtype, 0, comm);
}

/* MPI_Scan and MPI_Exscan: a chain in rank order, rank i sending rank i+1 the combined values of
 * ranks 0..i (messages the director orders like any other); MPI_Exscan leaves rank 0's recvbuf. */
static int scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                int exclusive, const char *call) {
    int seq, ctx = ml_coll_start(comm, call, &seq);
    int me = ml_rank(ctx), size = ml_size(ctx);
    long bytes = count * ml_extent(type);
    unsigned char probe = 0;
    if (count > 0 && !combine(&probe, &probe, 0, type, op))
        ml_fatal("%s with %s on datatype %d: mutexlab's MPI reduces the predefined numeric types with "
                 "MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN and the logical and bitwise operations, and any type "
                 "with an operation of MPI_Op_create", call, op_name(op), type);
    unsigned char *acc = malloc((size_t)bytes + 1), *mine = malloc((size_t)bytes + 1);
    if (!acc || !mine) ml_fatal("%s: out of memory", call);
    memcpy(mine, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, (size_t)bytes);
    if (me == 0) {
        memcpy(acc, mine, (size_t)bytes);
    } else {
        ml_coll_recv(acc, bytes, me - 1, seq, ctx); /* ranks 0..me-1 */
        if (exclusive) memcpy(recvbuf, acc, (size_t)bytes);
        combine(acc, mine, count, type, op);
    }
    if (me + 1 < size) {
        long n;
        unsigned char *packed = ml_pack(acc, count, type, &n, call);
        ml_send(me + 1, seq, ctx, packed, n, call);
        free(packed);
    }
    if (!exclusive) memcpy(recvbuf, acc, (size_t)bytes);
    free(acc);
    free(mine);
    return MPI_SUCCESS;
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    return scan(sendbuf, recvbuf, count, type, op, comm, 0, "MPI_Scan");
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    return scan(sendbuf, recvbuf, count, type, op, comm, 1, "MPI_Exscan");
}

/* MPI_Ibarrier: every rank tells every other at once; its request completes once it has heard from
 * all the others (messages the director orders like any other), waited for as any request. */
int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request) {
    int seq, ctx = ml_coll_start(comm, "MPI_Ibarrier", &seq);
    int me = ml_rank(ctx), size = ml_size(ctx);
    char nothing = 0;
    for (int i = 0; i < size; i++)
        if (i != me) ml_send(i, seq, ctx, &nothing, 0, "MPI_Ibarrier");
    *request = ml_post_recv_n(NULL, 0, MPI_ANY_SOURCE, seq, ctx, size - 1);
    return MPI_SUCCESS;
}
