#include <mpi.h>
#include <stdio.h>
#include <string.h>
typedef struct { int clock; int rank; double t; } msg_t;
static void maxclock(void *in, void *inout, int *len, MPI_Datatype *type) {
    (void)type;
    msg_t *a = in, *b = inout;
    for (int i = 0; i < *len; i++) if (a[i].clock > b[i].clock) b[i] = a[i];
}
int main(int argc, char **argv) {
    int me, n, flag;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    char ver[MPI_MAX_LIBRARY_VERSION_STRING]; int len;
    MPI_Get_library_version(ver, &len);
    if (len <= 0) return 10;
    MPI_Is_thread_main(&flag); if (!flag) return 11;
    /* struct type */
    msg_t m; MPI_Aint base, a1, a2; MPI_Datatype T;
    MPI_Get_address(&m, &base); MPI_Get_address(&m.rank, &a1); MPI_Get_address(&m.t, &a2);
    int bl[3] = {1,1,1}; MPI_Aint d[3] = {0, MPI_Aint_diff(a1, base), MPI_Aint_diff(a2, base)};
    MPI_Datatype ts[3] = {MPI_INT, MPI_INT, MPI_DOUBLE};
    MPI_Type_create_struct(3, bl, d, ts, &T); MPI_Type_commit(&T);
    MPI_Aint lb, ext; MPI_Type_get_extent(T, &lb, &ext);
    if (lb != 0 || ext != (MPI_Aint)sizeof(msg_t)) return 12;
    if (MPI_Aint_add(base, 4) != base + 4) return 13;
    /* scan, exscan */
    int one = me + 1, s = 0, ex = -7;
    MPI_Scan(&one, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (s != (me + 1) * (me + 2) / 2) return 14;
    MPI_Exscan(&one, &ex, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0 ? ex != -7 : ex != me * (me + 1) / 2) return 15;
    /* user op on the struct */
    msg_t mine = {10 * ((me + 1) % n), me, 0.5}, best;
    MPI_Op op; MPI_Op_create(maxclock, 1, &op);
    MPI_Allreduce(&mine, &best, 1, T, op, MPI_COMM_WORLD);
    if (best.rank != n - 2 + (n == 1)) { if (n > 1) return 16; }
    MPI_Op_free(&op);
    if (op != MPI_OP_NULL) return 23; /* MPI_Op_free leaves MPI_OP_NULL */
    /* gatherv / scatterv / allgatherv / alltoall */
    int counts[8], displs[8], all[64], got[8];
    for (int i = 0; i < n; i++) { counts[i] = i + 1; displs[i] = i * (i + 1) / 2; }
    int part[8]; for (int i = 0; i <= me; i++) part[i] = 100 * me + i;
    MPI_Allgatherv(part, me + 1, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < n; r++) for (int i = 0; i <= r; i++) if (all[displs[r] + i] != 100 * r + i) return 17;
    MPI_Scatterv(all, counts, displs, MPI_INT, got, me + 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (got[me] != 100 * me + me) return 18;
    int to[8], from[8]; for (int i = 0; i < n; i++) to[i] = 10 * me + i;
    MPI_Alltoall(to, 1, MPI_INT, from, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < n; i++) if (from[i] != 10 * i + me) return 19;
    int rs[8], r1; for (int i = 0; i < n; i++) rs[i] = i;
    MPI_Reduce_scatter_block(rs, &r1, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (r1 != n * me) return 20;
    /* get_elements */
    if (me == 0) { for (int i = 1; i < n; i++) MPI_Send(&mine, 1, T, i, 5, MPI_COMM_WORLD); }
    else { MPI_Status st; int c, e; MPI_Recv(&best, 1, T, 0, 5, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, T, &c); MPI_Get_elements(&st, T, &e); if (c != 1 || e != 3) return 21; }
    /* split_type */
    MPI_Comm node; int nn; MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &nn); if (nn != n) return 22; MPI_Comm_free(&node);
    /* ibarrier */
    MPI_Request rq; MPI_Ibarrier(MPI_COMM_WORLD, &rq);
    int tok = 0;
    if (me > 0) MPI_Recv(&tok, 1, MPI_INT, me - 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("rank %d enters\nrank %d leaves\n", me, me);
    if (me + 1 < n) MPI_Send(&tok, 1, MPI_INT, me + 1, 9, MPI_COMM_WORLD);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Ibarrier(MPI_COMM_WORLD, &rq);
    flag = 0; while (!flag) MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
    MPI_Type_free(&T);
    MPI_Finalize();
    return 0;
}
