/* Rank 1 waits, after its last critical section, for a message nobody sends: under any MPI it
 * never ends (a hang), though every entry was served. -DHELPER: a helper thread of rank 1 waits
 * for that message instead while its main thread reaches MPI_Finalize, which is no hang
 * (docs/mpi.md#hangs). Run on 2 ranks. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

static void *never(void *unused) {
    int x;
    (void)unused;
    MPI_Recv(&x, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* nobody sends tag 7 */
    return NULL;
}

int main(int argc, char **argv) {
    int rank, x = 0, provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        printf("rank 0 enters\n");
        printf("rank 0 leaves\n");
        MPI_Send(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
    } else if (rank == 1) {
#ifdef HELPER
        pthread_t helper; /* not joined: the rank ends with its main thread */
        pthread_create(&helper, NULL, never, NULL);
#endif
        MPI_Recv(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("rank 1 enters\n");
        printf("rank 1 leaves\n");
#ifndef HELPER
        never(NULL);
#endif
    }
    MPI_Finalize();
    return 0;
}
