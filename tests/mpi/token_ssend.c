/* A token ring with synchronous sends, as a lab hands it in: the configuration from rank 0 by
 * MPI_Bcast, the token an int passed with MPI_Ssend, requests tested with MPI_Waitsome,
 * MPI_Testsome and MPI_Sendrecv_replace in the warm-up, MPI_Barrier at both ends. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int rank, size, laps = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0 && argc > 1) laps = atoi(argv[1]);
    MPI_Bcast(&laps, 1, MPI_INT, 0, MPI_COMM_WORLD);

    /* warm-up: everyone tells everyone its rank, synchronously */
    int got[64], mine = rank, n = 0, outcount, idx[64];
    MPI_Request rq[128];
    for (int i = 0; i < size; i++)
        if (i != rank) MPI_Irecv(&got[i], 1, MPI_INT, i, 7, MPI_COMM_WORLD, &rq[n++]);
    for (int i = 0; i < size; i++)
        if (i != rank) MPI_Issend(&mine, 1, MPI_INT, i, 7, MPI_COMM_WORLD, &rq[n++]);
    int left = n;
    MPI_Testsome(n, rq, &outcount, idx, MPI_STATUSES_IGNORE);
    if (outcount != MPI_UNDEFINED) left -= outcount;
    while (left > 0) {
        MPI_Waitsome(n, rq, &outcount, idx, MPI_STATUSES_IGNORE);
        left -= outcount;
    }
    MPI_Waitsome(n, rq, &outcount, idx, MPI_STATUSES_IGNORE);
    if (outcount != MPI_UNDEFINED) MPI_Abort(MPI_COMM_WORLD, 5);
    int token = rank;
    MPI_Sendrecv_replace(&token, 1, MPI_INT, (rank + 1) % size, 8, (rank + size - 1) % size, 8, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
    if (token != (rank + size - 1) % size) MPI_Abort(MPI_COMM_WORLD, 6);
    MPI_Ssend(&token, 1, MPI_INT, MPI_PROC_NULL, 9, MPI_COMM_WORLD);

    for (int lap = 0; lap < laps; lap++) {
        if (!(rank == 0 && lap == 0))
            MPI_Recv(&token, 1, MPI_INT, (rank + size - 1) % size, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("[%d] ENTER CS lap %d\n", rank, lap);
        usleep(10000);
#ifdef BROKEN_EARLY
        if (!(rank == size - 1 && lap == laps - 1))
            MPI_Ssend(&token, 1, MPI_INT, (rank + 1) % size, 1, MPI_COMM_WORLD);
        printf("[%d] EXIT CS\n", rank);
#else
        printf("[%d] EXIT CS\n", rank);
        if (!(rank == size - 1 && lap == laps - 1))
            MPI_Ssend(&token, 1, MPI_INT, (rank + 1) % size, 1, MPI_COMM_WORLD);
#endif
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
