/* Cartesian topologies (docs/mpi.md#subset): MPI_Cart_create makes a communicator of the first
 * dims[0]·…·dims[n-1] ranks of the old one (MPI_Comm_split, so the others get MPI_COMM_NULL), in
 * their old order (reorder is allowed not to renumber, and does not), and remembers its grid;
 * the rest is arithmetic on it, row-major as MPI says (the last coordinate varies fastest). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define CARTS 64
#define MAXDIMS 16

typedef struct {
    MPI_Comm comm; /* 0: a free slot */
    int ndims, dims[MAXDIMS], periods[MAXDIMS];
} cart_t;

static cart_t carts[CARTS];

void ml_topo_forget(MPI_Comm comm) {
    ml_lock();
    for (int i = 0; i < CARTS; i++)
        if (carts[i].comm == comm) carts[i].comm = 0;
    ml_unlock();
}

static cart_t *cart_of(MPI_Comm comm, const char *call) {
    ml_comm(comm, call);
    for (int i = 0; i < CARTS; i++)
        if (carts[i].comm == comm && comm != 0) return &carts[i];
    ml_error(MPI_ERR_TOPOLOGY, "MPI_ERR_TOPOLOGY: %s on a communicator with no Cartesian topology", call);
}

int MPI_Dims_create(int nnodes, int ndims, int dims[]) {
    int fixed = 1, left;
    if (ndims < 0 || ndims > MAXDIMS || nnodes <= 0)
        ml_error(MPI_ERR_ARG, "MPI_ERR_ARG: MPI_Dims_create of %d nodes in %d dimensions", nnodes, ndims);
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0) ml_error(MPI_ERR_ARG, "MPI_ERR_ARG: MPI_Dims_create with dims[%d] = %d", i, dims[i]);
        if (dims[i] > 0) fixed *= dims[i];
    }
    if (nnodes % fixed)
        ml_error(MPI_ERR_DIMS, "MPI_ERR_DIMS: MPI_Dims_create: %d nodes are not a multiple of the dimensions given (%d)",
                 nnodes, fixed);
    left = nnodes / fixed;
    int factors[64], nf = 0, free_dims[MAXDIMS], nfree = 0, made[MAXDIMS];
    for (int p = 2; left > 1 && nf < 64;) { /* its prime factors, the largest first below */
        if (left % p == 0) {
            factors[nf++] = p;
            left /= p;
        } else {
            p++;
        }
    }
    for (int i = 0; i < ndims; i++)
        if (dims[i] == 0) free_dims[nfree++] = i;
    if (nfree == 0) return MPI_SUCCESS;
    for (int i = 0; i < nfree; i++) made[i] = 1;
    for (int f = nf - 1; f >= 0; f--) { /* each factor to the smallest dimension so far: balanced */
        int least = 0;
        for (int i = 1; i < nfree; i++)
            if (made[i] < made[least]) least = i;
        made[least] *= factors[f];
    }
    for (int i = 0; i < nfree; i++) /* in non-increasing order, as MPI says */
        for (int j = i + 1; j < nfree; j++)
            if (made[j] > made[i]) {
                int t = made[i];
                made[i] = made[j];
                made[j] = t;
            }
    for (int i = 0; i < nfree; i++) dims[free_dims[i]] = made[i];
    return MPI_SUCCESS;
}

int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                    MPI_Comm *comm_cart) {
    (void)reorder;
    int size, rank, cells = 1;
    MPI_Comm_size(comm_old, &size);
    MPI_Comm_rank(comm_old, &rank);
    if (ndims < 0 || ndims > MAXDIMS)
        ml_error(MPI_ERR_DIMS, "MPI_ERR_DIMS: MPI_Cart_create in %d dimensions (at most %d here)", ndims, MAXDIMS);
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0) ml_error(MPI_ERR_DIMS, "MPI_ERR_DIMS: MPI_Cart_create with dims[%d] = %d", i, dims[i]);
        cells *= dims[i];
    }
    if (cells > size)
        ml_error(MPI_ERR_TOPOLOGY, "MPI_ERR_TOPOLOGY: MPI_Cart_create of a grid of %d cells on %d ranks", cells, size);
    MPI_Comm made;
    MPI_Comm_split(comm_old, rank < cells ? 0 : MPI_UNDEFINED, rank, &made);
    *comm_cart = made;
    if (made == MPI_COMM_NULL) return MPI_SUCCESS;
    ml_lock();
    int i = 0;
    while (i < CARTS && carts[i].comm) i++;
    if (i < CARTS) {
        carts[i].comm = made;
        carts[i].ndims = ndims;
        for (int d = 0; d < ndims; d++) {
            carts[i].dims[d] = dims[d];
            carts[i].periods[d] = periods[d] != 0;
        }
    }
    ml_unlock();
    if (i == CARTS) ml_fatal("MPI_Cart_create: more than %d Cartesian communicators at once (docs/mpi.md#limits)", CARTS);
    return MPI_SUCCESS;
}

static void coords_of(const cart_t *c, int rank, int coords[]) {
    for (int d = c->ndims - 1; d >= 0; d--) {
        coords[d] = rank % c->dims[d];
        rank /= c->dims[d];
    }
}

int MPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) {
    cart_t *c = cart_of(comm, "MPI_Cart_coords");
    int size, all[MAXDIMS];
    MPI_Comm_size(comm, &size);
    if (rank < 0 || rank >= size)
        ml_error(MPI_ERR_RANK, "MPI_ERR_RANK: MPI_Cart_coords of rank %d (there are ranks 0 to %d)", rank, size - 1);
    coords_of(c, rank, all);
    memcpy(coords, all, sizeof(int) * (size_t)(maxdims < c->ndims ? maxdims : c->ndims));
    return MPI_SUCCESS;
}

int MPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank) {
    cart_t *c = cart_of(comm, "MPI_Cart_rank");
    int r = 0;
    for (int d = 0; d < c->ndims; d++) {
        int x = coords[d];
        if (c->periods[d]) x = ((x % c->dims[d]) + c->dims[d]) % c->dims[d];
        else if (x < 0 || x >= c->dims[d])
            ml_error(MPI_ERR_RANK, "MPI_ERR_RANK: MPI_Cart_rank of coordinate %d in dimension %d (0 to %d, not periodic)",
                     x, d, c->dims[d] - 1);
        r = r * c->dims[d] + x;
    }
    *rank = r;
    return MPI_SUCCESS;
}

int MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest) {
    cart_t *c = cart_of(comm, "MPI_Cart_shift");
    int me, at[MAXDIMS];
    if (direction < 0 || direction >= c->ndims)
        ml_error(MPI_ERR_ARG, "MPI_ERR_ARG: MPI_Cart_shift in direction %d of a grid of %d dimensions", direction,
                 c->ndims);
    MPI_Comm_rank(comm, &me);
    int *ends[2] = {rank_dest, rank_source};
    for (int k = 0; k < 2; k++) {
        coords_of(c, me, at);
        int x = at[direction] + (k == 0 ? disp : -disp), n = c->dims[direction];
        if (!c->periods[direction] && (x < 0 || x >= n)) {
            *ends[k] = MPI_PROC_NULL;
            continue;
        }
        at[direction] = ((x % n) + n) % n;
        MPI_Cart_rank(comm, at, ends[k]);
    }
    return MPI_SUCCESS;
}

int MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]) {
    cart_t *c = cart_of(comm, "MPI_Cart_get");
    int me, at[MAXDIMS], n = maxdims < c->ndims ? maxdims : c->ndims;
    MPI_Comm_rank(comm, &me);
    coords_of(c, me, at);
    for (int d = 0; d < n; d++) {
        dims[d] = c->dims[d];
        periods[d] = c->periods[d];
        coords[d] = at[d];
    }
    return MPI_SUCCESS;
}

int MPI_Cartdim_get(MPI_Comm comm, int *ndims) {
    *ndims = cart_of(comm, "MPI_Cartdim_get")->ndims;
    return MPI_SUCCESS;
}

int MPI_Topo_test(MPI_Comm comm, int *status) {
    ml_comm(comm, "MPI_Topo_test");
    *status = MPI_UNDEFINED;
    ml_lock();
    for (int i = 0; i < CARTS; i++)
        if (carts[i].comm == comm && comm != 0) *status = MPI_CART;
    ml_unlock();
    return MPI_SUCCESS;
}
