/* A lock keeper with a timeout. Rank 0 keeps the lock: it grants it to each other rank in turn
 * and waits for the release, but only so long: a holder silent for PATIENCE polls (a millisecond
 * each) is taken for dead, and the keeper takes the lock back and enters itself. Each holder
 * works inside for a while. Under any MPI a holder slower than the keeper's patience is still
 * inside when the keeper enters: two inside at once, though no message is lost and every rank
 * answers in time by its own lights. Nothing is in flight while the keeper waits (the holder is
 * working): its loop gives up only if its loop is let go round while others still move.
 *   -DPATIENT   the keeper waits for the release however long it takes (no bug)
 *   -DBLOCKING  the same in one MPI_Recv, no loop of its own (no bug) */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

#define GRANT 1
#define RELEASE 2
#define PATIENCE 500

static int await_release(int holder) {
    int flag = 0, ms = 0, token;
#ifdef BLOCKING
    (void)ms;
    MPI_Recv(&token, 1, MPI_INT, holder, RELEASE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    flag = 1;
#else
    MPI_Request req;
    MPI_Irecv(&token, 1, MPI_INT, holder, RELEASE, MPI_COMM_WORLD, &req);
#ifdef PATIENT
    while (!flag) {
#else
    while (!flag && ms < PATIENCE) {
#endif
        MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        if (!flag) {
            usleep(1000);
            ms++;
        }
    }
    if (!flag) {
        MPI_Cancel(&req);
        MPI_Request_free(&req);
        fprintf(stderr, "keeper: rank %d silent for %d ms, taken for dead\n", holder, ms);
    }
#endif
    return flag;
}

int main(int argc, char **argv) {
    int rank, size, token = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
        for (int holder = 1; holder < size; holder++) {
            MPI_Send(&token, 1, MPI_INT, holder, GRANT, MPI_COMM_WORLD);
            if (!await_release(holder)) break; /* the lock is back with the keeper */
        }
        printf("rank 0 enters\n");
        fflush(stdout);
        printf("rank 0 leaves\n");
    } else {
        MPI_Recv(&token, 1, MPI_INT, 0, GRANT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("rank %d enters\n", rank);
        fflush(stdout);
        usleep(100000); /* the work inside */
        printf("rank %d leaves\n", rank);
        fflush(stdout);
        MPI_Send(&token, 1, MPI_INT, 0, RELEASE, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
