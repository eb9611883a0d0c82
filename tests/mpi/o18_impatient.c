/* Rank 0 waits a while for rank 1's GO, polling in a loop of its own that gives up after a count;
 * then it nudges rank 1, which enters, leaves and sends GO, and rank 0 enters once GO has come.
 * Nothing is in flight while rank 0 polls: under any MPI its loop gives up. The poll, by macro:
 *   (default) MPI_Iprobe and usleep        -DPOLL_TEST      MPI_Irecv, then MPI_Test and usleep
 *   -DPOLL_TESTSOME  MPI_Testsome over two receives        -DPOLL_TIMEDWAIT  pthread_cond_timedwait
 *   -DPOLL_THREAD    a helper thread polls; main joins it
 *   -DBROKEN_NO_WAIT rank 0 enters as soon as it has nudged, GO or not */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define GO 1
#define NUDGE 2
#define TRIES 500

static int go;

static int wait_a_while(void) { /* whether GO came within TRIES polls */
    int tries = 0;
#if defined(POLL_TEST) || defined(POLL_TESTSOME)
    MPI_Request r[2];
    int x[2];
    MPI_Irecv(&x[0], 1, MPI_INT, 1, GO, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(&x[1], 1, MPI_INT, 1, GO + 100, MPI_COMM_WORLD, &r[1]);
    for (; tries < TRIES && !go; tries++) {
#ifdef POLL_TEST
        MPI_Test(&r[0], &go, MPI_STATUS_IGNORE);
#else
        int idx[2], n = 0;
        MPI_Testsome(2, r, &n, idx, MPI_STATUSES_IGNORE);
        go = n > 0;
#endif
        if (!go) usleep(200);
    }
    for (int i = 0; i < 2; i++)
        if (r[i] != MPI_REQUEST_NULL) {
            MPI_Cancel(&r[i]);
            MPI_Request_free(&r[i]);
        }
#elif defined(POLL_TIMEDWAIT)
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t c = PTHREAD_COND_INITIALIZER;
    pthread_mutex_lock(&m);
    for (; tries < TRIES && !go; tries++) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec = (until.tv_nsec + 1000000) % 1000000000;
        pthread_cond_timedwait(&c, &m, &until);
        MPI_Iprobe(1, GO, MPI_COMM_WORLD, &go, MPI_STATUS_IGNORE);
    }
    pthread_mutex_unlock(&m);
#else
    for (; tries < TRIES && !go; tries++) {
        MPI_Iprobe(1, GO, MPI_COMM_WORLD, &go, MPI_STATUS_IGNORE);
        if (!go) usleep(200);
    }
#endif
    fprintf(stderr, "rank 0: %s after %d polls\n", go ? "GO came" : "gave up", tries);
    return go;
}

static void *helper(void *unused) {
    (void)unused;
    wait_a_while();
    return NULL;
}

int main(int argc, char **argv) {
    int rank, provided, x = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
#ifdef POLL_THREAD
        pthread_t t;
        pthread_create(&t, NULL, helper, NULL);
        pthread_join(t, NULL);
#else
        (void)helper;
        wait_a_while();
#endif
        if (!go) {
            MPI_Send(&x, 1, MPI_INT, 1, NUDGE, MPI_COMM_WORLD);
#ifndef BROKEN_NO_WAIT
            MPI_Recv(&x, 1, MPI_INT, 1, GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
#endif
        }
        printf("rank 0 enters\n");
        usleep(100);
        printf("rank 0 leaves\n");
    } else if (rank == 1) {
        MPI_Recv(&x, 1, MPI_INT, 0, NUDGE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("rank 1 enters\n");
        usleep(100);
        printf("rank 1 leaves\n");
        MPI_Send(&x, 1, MPI_INT, 0, GO, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
