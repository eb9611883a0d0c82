/* Two threads and one mutex round every MPI call, as a student guards a library it does not trust
 * with threads: the main thread polls MPI_Iprobe twice while it holds the mutex, then naps outside
 * it; its helper thread, woken by a peer's message, takes the mutex to tell main on a copy of
 * MPI_COMM_SELF. Under any MPI the poll returns and the helper gets the mutex; mutexlab's model
 * of the polls once held main in its probe with the mutex held, and the helper waited for ever
 * (every rank short of its entry: a false deadlock). */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static MPI_Comm self;
static int me, n;
static void *helper(void *arg) {
    (void)arg;
    int x = 0;
    if (me == 0) {
        for (int i = 1; i < n; i++) MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    static int word;
    MPI_Request r; /* not MPI_Send: MPICH's to oneself waits for the receive, which main makes under m */
    pthread_mutex_lock(&m);
    MPI_Isend(&word, 1, MPI_INT, 0, 2, self, &r);
    MPI_Request_free(&r);
    pthread_mutex_unlock(&m);
    return NULL;
}
int main(int argc, char **argv) {
    int provided, flag = 0, x = 7;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_dup(MPI_COMM_SELF, &self);
    pthread_t t;
    pthread_create(&t, NULL, helper, NULL);
    if (me == 0) for (int i = 1; i < n; i++) MPI_Send(&x, 1, MPI_INT, i, 1, MPI_COMM_WORLD);
    else MPI_Send(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
    while (!flag) { /* two probes while it holds the mutex, then a nap */
        int other = 0;
        pthread_mutex_lock(&m);
        MPI_Iprobe(0, 3, self, &other, MPI_STATUS_IGNORE);
        MPI_Iprobe(0, 2, self, &flag, MPI_STATUS_IGNORE);
        pthread_mutex_unlock(&m);
        if (!flag) usleep(100);
    }
    MPI_Recv(&x, 1, MPI_INT, 0, 2, self, MPI_STATUS_IGNORE);
    printf("rank %d enters\n", me);
    printf("rank %d leaves\n", me);
    pthread_join(t, NULL);
    MPI_Comm_free(&self);
    MPI_Finalize();
    return 0;
}
