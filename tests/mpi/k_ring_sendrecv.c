/* K printers shared by a ring of processes: K tokens travel round the ring, one hop
 * per round, every process swapping with its neighbours by MPI_Sendrecv.  Whoever holds
 * a token may print (enter the critical section).
 * usage: mpirun -np N ./k_ring_sendrecv [K] [laps]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define TAG_TOKEN 7

int main(int argc, char **argv)
{
    int rank, size, params[2];
    MPI_Status st;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    if (rank == 0) {
        params[0] = argc > 1 ? atoi(argv[1]) : 2;
        params[1] = argc > 2 ? atoi(argv[2]) : 1;
    }
    MPI_Bcast(params, 2, MPI_INT, 0, MPI_COMM_WORLD);
    int K = params[0], laps = params[1];
    if (K < 1 || K > size || laps < 1) {
        if (rank == 0)
            fprintf(stderr, "k_ring: need 1 <= K <= %d and laps >= 1, got K=%d laps=%d\n", size, K, laps);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }

    unsigned int seed = 1234u + 17u * (unsigned)rank;
#ifdef BROKEN_EXTRA_TOKEN
    int have = rank <= K; /* off by one: K+1 tokens */
#else
    int have = rank < K;
#endif
    int clock = 0, uses = 0;
    MPI_Barrier(MPI_COMM_WORLD);

    for (int step = 0; step < laps * size; step++) {
        if (have) {
            clock++;
            printf("P%d in CS (lamport %d, step %d)\n", rank, clock, step);
            usleep(1000 + rand_r(&seed) % 5000); /* the printing job */
            printf("P%d out of CS\n", rank);
            uses++;
        }
        int out[3] = {have, clock, rank}, in[3];
        int next = (rank + 1) % size, prev = (rank + size - 1) % size;
        MPI_Sendrecv(out, 3, MPI_INT, next, TAG_TOKEN, in, 3, MPI_INT, prev, TAG_TOKEN,
                     MPI_COMM_WORLD, &st);
        if (in[2] != prev) {
            fprintf(stderr, "P%d: token from %d, expected %d\n", rank, in[2], prev);
            MPI_Abort(MPI_COMM_WORLD, 5);
        }
#ifdef BROKEN_KEEP
        have = have || in[0]; /* a token passed on is also kept */
#else
        have = in[0];
#endif
        clock = (in[1] > clock ? in[1] : clock) + 1;
    }

    int total = 0;
    MPI_Reduce(&uses, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("total printing jobs: %d (expected %d)\n", total, K * laps * size);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
