/* Rank 0 enters its critical section first and grants rank 1 the section once it has left; its
 * communication thread takes rank 1's request, which may come while rank 0 is inside (rank 0
 * prints, sleeps, prints: its section). -DBROKEN_NO_EXCLUSION grants at once, inside or not: two
 * ranks inside at once, but only if the request is answered during rank 0's sleep. For 2 ranks
 * (others do nothing). */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

enum { REQUEST = 1, GRANT = 2 };
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int inside = 1, owed; /* rank 0 starts inside; owed: a grant to send once it has left */

static void *grants(void *unused) {
    int request;
    (void)unused;
    MPI_Recv(&request, 1, MPI_INT, 1, REQUEST, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    pthread_mutex_lock(&lock);
#ifdef BROKEN_NO_EXCLUSION
    MPI_Send(&request, 1, MPI_INT, 1, GRANT, MPI_COMM_WORLD);
#else
    if (inside)
        owed = 1;
    else
        MPI_Send(&request, 1, MPI_INT, 1, GRANT, MPI_COMM_WORLD);
#endif
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(int argc, char **argv) {
    int rank, size, provided, word = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0 && size > 1) {
        pthread_t thread;
        pthread_create(&thread, NULL, grants, NULL);
        printf("rank 0 enters\n");
        usleep(1000);
        printf("rank 0 leaves\n");
        pthread_mutex_lock(&lock);
        inside = 0;
        if (owed) MPI_Send(&word, 1, MPI_INT, 1, GRANT, MPI_COMM_WORLD);
        pthread_mutex_unlock(&lock);
        pthread_join(thread, NULL);
    } else if (rank == 1) {
        MPI_Send(&word, 1, MPI_INT, 0, REQUEST, MPI_COMM_WORLD);
        MPI_Recv(&word, 1, MPI_INT, 0, GRANT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("rank 1 enters\n");
        usleep(1000);
        printf("rank 1 leaves\n");
    }
    MPI_Finalize();
    return 0;
}
