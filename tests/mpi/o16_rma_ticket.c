/* A ticket lock over one-sided communication, as a course hands it in: rank 0's window holds two
 * counters, the next ticket and the ticket now served. A rank takes a ticket with MPI_Fetch_and_op
 * (MPI_SUM), spins reading the ticket served with MPI_Fetch_and_op (MPI_NO_OP) in a shared-lock
 * epoch until it is its own, and on leaving adds one to it with MPI_Accumulate.
 * -DBROKEN_GET_PUT: the ticket is taken by MPI_Get, then MPI_Put of the next, in two epochs: not
 * atomic, so two ranks may draw the same ticket. Argument: entries per rank (default 1). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { NEXT = 0, SERVING = 1 };

static void take_ticket(MPI_Win win, int *ticket) {
    int one = 1;
#ifdef BROKEN_GET_PUT
    int next;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Get(ticket, 1, MPI_INT, 0, NEXT, 1, MPI_INT, win);
    MPI_Win_unlock(0, win);
    next = *ticket + one;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Put(&next, 1, MPI_INT, 0, NEXT, 1, MPI_INT, win);
    MPI_Win_unlock(0, win);
#else
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Fetch_and_op(&one, ticket, MPI_INT, 0, NEXT, MPI_SUM, win);
    MPI_Win_unlock(0, win);
#endif
}

int main(int argc, char **argv) {
    int rank, size, rounds = argc > 1 ? atoi(argv[1]) : 1, *counters = NULL;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Win_allocate(rank == 0 ? 2 * sizeof(int) : 0, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &counters, &win);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        counters[NEXT] = counters[SERVING] = 0;
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < rounds; r++) {
        int ticket, serving = -1, one = 1;
        take_ticket(win, &ticket);
        while (serving != ticket) {
            MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
            MPI_Fetch_and_op(NULL, &serving, MPI_INT, 0, SERVING, MPI_NO_OP, win);
            MPI_Win_unlock(0, win);
        }
        printf("[%d] ENTER CS with ticket %d\n", rank, ticket);
        fflush(stdout);
        printf("[%d] EXIT CS\n", rank);
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        MPI_Accumulate(&one, 1, MPI_INT, 0, SERVING, 1, MPI_INT, MPI_SUM, win);
        MPI_Win_unlock(0, win);
    }
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
