/* The collectives and the other calls of mutexlab's MPI beyond point-to-point (tests/test_mpi_calls.py):
 * each rank checks what it got and, all well, enters and leaves "cs" through mutexlab.h; a wrong
 * value ends the rank with status 1 (the crashed finding), naming the check on stderr. */
#include <mpi.h>
#include <mutexlab.h>
#include <stdio.h>
#include <stdlib.h>

static void check(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "check failed: %s\n", what);
        exit(1);
    }
}

int main(int argc, char **argv) {
    int rank, size;
    MPI_Comm comm;
    MPI_Init(&argc, &argv);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);

    int params[3] = {0, 0, 0};
    if (rank == 1) params[0] = 7, params[1] = 8, params[2] = 9;
    MPI_Bcast(params, 3, MPI_INT, 1, comm);
#ifdef BROKEN_EXPECTATION /* the test's own check: a wrong expectation must end in a crash */
    check(params[0] == 8, "MPI_Bcast from rank 1 (a wrong expectation)");
#endif
    check(params[0] == 7 && params[2] == 9, "MPI_Bcast from rank 1");

    long mine = rank + 1, sum = -1;
    MPI_Reduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, 0, comm);
    if (rank == 0) check(sum == (long)size * (size + 1) / 2, "MPI_Reduce MPI_SUM at the root");
    double x = rank * 1.5, top = 0;
    MPI_Allreduce(&x, &top, 1, MPI_DOUBLE, MPI_MAX, comm);
    check(top == (size - 1) * 1.5, "MPI_Allreduce MPI_MAX");
    MPI_Allreduce(MPI_IN_PLACE, &mine, 1, MPI_LONG, MPI_SUM, comm);
    check(mine == (long)size * (size + 1) / 2, "MPI_Allreduce MPI_IN_PLACE");

    int all[16], one = rank * 10, part = -1;
    MPI_Gather(&one, 1, MPI_INT, all, 1, MPI_INT, 0, comm);
    if (rank == 0)
        for (int i = 0; i < size; i++) check(all[i] == i * 10, "MPI_Gather");
    int spread[16];
    for (int i = 0; i < size; i++) spread[i] = 100 + i;
    MPI_Scatter(spread, 1, MPI_INT, &part, 1, MPI_INT, 0, comm);
    check(part == 100 + rank, "MPI_Scatter");
    MPI_Allgather(&one, 1, MPI_INT, all, 1, MPI_INT, comm);
    for (int i = 0; i < size; i++) check(all[i] == i * 10, "MPI_Allgather");

    /* the ring's message carries a reading of MPI_Wtime: the same in every run of a schedule */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    double stamp[2] = {rank, MPI_Wtime()}, got[2] = {-1, -1};
    MPI_Sendrecv(stamp, 2, MPI_DOUBLE, right, 5, got, 2, MPI_DOUBLE, left, 5, comm, MPI_STATUS_IGNORE);
    check(got[0] == left, "MPI_Sendrecv around the ring");

    /* a world message and a copy's with the same tag and source do not mix */
    int w = -1, c = -1;
    MPI_Request r[2];
    MPI_Irecv(&w, 1, MPI_INT, left, 6, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(&c, 1, MPI_INT, left, 6, comm, &r[1]);
    int to_copy = 2000 + rank, to_world = 1000 + rank;
    MPI_Request s;
    MPI_Isend(&to_copy, 1, MPI_INT, right, 6, comm, &s);
    MPI_Request_free(&s);
    MPI_Send(&to_world, 1, MPI_INT, right, 6, MPI_COMM_WORLD);
    int index, flag = 0;
    MPI_Status st;
    MPI_Waitany(2, r, &index, &st);
    check(st.MPI_SOURCE == left && (index == 0 || index == 1), "MPI_Waitany");
    while (!flag) MPI_Testall(2, r, &flag, MPI_STATUSES_IGNORE);
    check(w == 1000 + left && c == 2000 + left, "MPI_Comm_dup keeps its messages apart");

    double t0 = MPI_Wtime();
    MPI_Barrier(comm);
    check(MPI_Wtime() > t0, "MPI_Wtime advances");
    MPI_Comm_free(&comm);
    mutexlab_enter("cs");
    mutexlab_exit("cs");
    MPI_Finalize();
    return 0;
}
