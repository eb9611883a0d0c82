/* A token passed in rank order, after every rank has greeted every other: each rank first
 * MPI_Sends its greeting to all the others, then receives theirs (the classic "unsafe" exchange
 * of the MPI standard: it ends only where standard sends are buffered). Rank 0 starts with the
 * token; each rank prints, sleeps inside, leaves and sends the token on. Its argument: the bytes
 * of a greeting (default 4; past 4,040 Open MPI 4.1 makes the send wait for its receive).
 * -DPOST_FIRST: the receives are posted first (MPI_Irecv), then the sends: ends under any MPI.
 * -DSELF_TOO: a rank greets itself too, with no receive posted for it yet. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { HELLO = 1, TOKEN = 2 };

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int bytes = argc > 1 ? atoi(argv[1]) : 4;
    char *hello = calloc((size_t)bytes, 1), *got = calloc((size_t)size * (size_t)bytes, 1);
#ifdef POST_FIRST
    MPI_Request *reqs = malloc((size_t)size * sizeof *reqs);
    int n = 0;
    for (int p = 0; p < size; p++)
        if (p != rank) MPI_Irecv(got + p * bytes, bytes, MPI_CHAR, p, HELLO, MPI_COMM_WORLD, &reqs[n++]);
    for (int p = 0; p < size; p++)
        if (p != rank) MPI_Send(hello, bytes, MPI_CHAR, p, HELLO, MPI_COMM_WORLD);
    MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
    free(reqs);
#else
    for (int p = 0; p < size; p++)
#ifdef SELF_TOO
        MPI_Send(hello, bytes, MPI_CHAR, p, HELLO, MPI_COMM_WORLD);
#else
        if (p != rank) MPI_Send(hello, bytes, MPI_CHAR, p, HELLO, MPI_COMM_WORLD);
#endif
    for (int p = 0; p < size; p++)
#ifdef SELF_TOO
        MPI_Recv(got + p * bytes, bytes, MPI_CHAR, p, HELLO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
#else
        if (p != rank) MPI_Recv(got + p * bytes, bytes, MPI_CHAR, p, HELLO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
#endif
#endif
    int token = 0;
    if (rank != 0) MPI_Recv(&token, 1, MPI_INT, rank - 1, TOKEN, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("rank %d enters (token %d)\n", rank, token);
    usleep(1000);
    printf("rank %d leaves\n", rank);
    token++;
    if (rank + 1 < size) MPI_Send(&token, 1, MPI_INT, rank + 1, TOKEN, MPI_COMM_WORLD);
    free(hello);
    free(got);
    MPI_Finalize();
    return 0;
}
