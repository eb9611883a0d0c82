/* Rank 1 waits, after its last critical section, for a message nobody sends: under any MPI it
 * never ends (a hang), though every entry was served. -DHELPER: a helper thread of rank 1 waits
 * for that message instead while its main thread reaches MPI_Finalize, which is no hang
 * (docs/mpi.md#hangs), though MPI calls a receive still pending at MPI_Finalize an error: Open MPI
 * ends the rank, MPICH aborts it (a fatal error in that receive, exit 5). -DLINGER: rank 0 lingers in a loop of its own (2,000 MPI_Iprobe and
 * usleep) and then sends rank 1 what it waits for: it ends under any MPI, so no hang either, though
 * mutexlab's model holds the loop. -DTESTSOME: rank 1 tests its receive ten times by MPI_Testsome,
 * then cancels it and finalizes: no hang. Run on 2 ranks. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#ifndef TESTSOME
static void *never(void *unused) {
    int x;
    (void)unused;
    MPI_Recv(&x, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* nobody sends tag 7 */
    return NULL;
}
#endif

int main(int argc, char **argv) {
    int rank, x = 0, provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        printf("rank 0 enters\n");
        printf("rank 0 leaves\n");
        MPI_Send(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
#ifdef LINGER
        for (int i = 0, flag; i < 2000; i++) { /* answer late stragglers a while, then tell rank 1 */
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            usleep(100);
        }
        MPI_Send(&x, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
#endif
    } else if (rank == 1) {
#ifdef HELPER
        pthread_t helper; /* not joined: the rank ends with its main thread */
        pthread_create(&helper, NULL, never, NULL);
#endif
        MPI_Recv(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("rank 1 enters\n");
        printf("rank 1 leaves\n");
#if defined(TESTSOME)
        MPI_Request r;
        int out = 0, index;
        MPI_Status status;
        MPI_Irecv(&x, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, &r);
        for (int i = 0; i < 10 && !out; i++) MPI_Testsome(1, &r, &out, &index, &status);
        if (!out) {
            MPI_Cancel(&r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
#elif !defined(HELPER)
        never(NULL);
#endif
    }
    MPI_Finalize();
    return 0;
}
