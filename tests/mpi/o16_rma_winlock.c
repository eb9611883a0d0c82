/* MPI_Win_lock itself as the critical section's lock, as a course shows it first: rank 0 exposes a
 * counter with MPI_Win_create, every rank initialises in a fence epoch (rank 0 puts 0 between two
 * MPI_Win_fence), then each entry is an exclusive lock epoch on rank 0: read the counter with
 * MPI_Get, flush, print, add one with MPI_Put, unlock. Lines: "rank R: in critical section,
 * counter C" / "rank R: out of critical section". -DBROKEN_SHARED takes MPI_LOCK_SHARED (it only
 * reads, thinks the student): two ranks are inside at once. Argument: entries per rank. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef BROKEN_SHARED
#define LOCK_KIND MPI_LOCK_SHARED
#else
#define LOCK_KIND MPI_LOCK_EXCLUSIVE
#endif

static int counter; /* rank 0's is the window */

int main(int argc, char **argv) {
    int rank, rounds = argc > 1 ? atoi(argv[1]) : 1, zero = 0;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_create(rank == 0 ? &counter : NULL, rank == 0 ? sizeof counter : 0, sizeof(int), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &win);
    MPI_Win_fence(0, win);
    if (rank == 0) MPI_Put(&zero, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    for (int r = 0; r < rounds; r++) {
        int seen, next;
        MPI_Win_lock(LOCK_KIND, 0, 0, win);
        MPI_Get(&seen, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
        MPI_Win_flush(0, win);
        printf("rank %d: in critical section, counter %d\n", rank, seen);
        next = seen + 1;
        printf("rank %d: out of critical section\n", rank);
        MPI_Put(&next, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
        MPI_Win_unlock(0, win);
    }
    MPI_Win_fence(0, win);
    if (rank == 0) printf("rank 0: counter %d at the end\n", counter);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
