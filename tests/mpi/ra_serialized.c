/* k printers (Ricart-Agrawala with K places) under MPI_THREAD_SERIALIZED, as a student hands it
 * in: one global pthread mutex around every MPI call; a listener thread polls MPI_Iprobe between
 * usleep()s on a communicator made by MPI_Comm_group + MPI_Group_incl + MPI_Comm_create (every
 * rank, in order); the main thread tells its own listener to stop by a message on a copy of
 * MPI_COMM_SELF once every rank has said STOP; lines stamped with MPI_Wtime. A reply names the
 * request it answers. usage: ra_serialized K [jobs]
 * A rank prints with n - K replies. -DBROKEN_COMPARE: a request is earlier than ours when its
 * clock is smaller OR its rank is: (clock, rank) compared wrongly, so two ranks may both reply. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define TAG_REQ 10
#define TAG_REP 11
#define TAG_STOP 12

static pthread_mutex_t mpi_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t st_lock = PTHREAD_MUTEX_INITIALIZER;
static MPI_Comm printers, self;
static int me, n, K;
static int clk, wanting, inside, my_ts, replies;
static int deferred[64], deferred_ts[64], stops;

static void locked_send(int *buf, int to, int tag) {
    pthread_mutex_lock(&mpi_lock);
    MPI_Send(buf, 3, MPI_INT, to, tag, printers);
    pthread_mutex_unlock(&mpi_lock);
}

static int earlier(int ts, int from) {
#ifdef BROKEN_COMPARE
    return ts < my_ts || from < me;
#else
    return ts < my_ts || (ts == my_ts && from < me);
#endif
}

static void *listener(void *arg) {
    (void)arg;
    for (;;) {
        int flag = 0, msg[3];
        MPI_Status st;
        pthread_mutex_lock(&mpi_lock);
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, printers, &flag, &st);
        if (flag) MPI_Recv(msg, 3, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, printers, MPI_STATUS_IGNORE);
        pthread_mutex_unlock(&mpi_lock);
        if (!flag) {
            usleep(1000);
            continue;
        }
        pthread_mutex_lock(&st_lock);
        clk = (msg[0] > clk ? msg[0] : clk) + 1;
        if (st.MPI_TAG == TAG_STOP) {
            if (++stops == n) { /* every rank is done: tell main, on MPI_COMM_SELF */
                pthread_mutex_unlock(&st_lock);
                static int bye[3];
                MPI_Request r; /* not MPI_Send: MPICH's to oneself blocks until main receives */
                pthread_mutex_lock(&mpi_lock);
                MPI_Isend(bye, 3, MPI_INT, 0, TAG_STOP, self, &r);
                MPI_Request_free(&r);
                pthread_mutex_unlock(&mpi_lock);
                return NULL;
            }
        } else if (st.MPI_TAG == TAG_REP) {
            if (msg[2] == my_ts) replies++; /* a late reply to an earlier request counts for nothing */
        } else if (inside || (wanting && !earlier(msg[0], msg[1]))) {
            deferred[msg[1]] = 1;
            deferred_ts[msg[1]] = msg[0];
        } else {
            int rep[3] = {++clk, me, msg[0]};
            locked_send(rep, msg[1], TAG_REP);
        }
        pthread_mutex_unlock(&st_lock);
    }
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    K = argc > 1 ? atoi(argv[1]) : 1;
    int jobs = argc > 2 ? atoi(argv[2]) : 1;
    if (n > 64 || K < 1) MPI_Abort(MPI_COMM_WORLD, 2);

    MPI_Group world_group, all;
    int ranks[64];
    for (int i = 0; i < n; i++) ranks[i] = i;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Group_incl(world_group, n, ranks, &all);
    MPI_Comm_create(MPI_COMM_WORLD, all, &printers);
    MPI_Group_free(&all);
    MPI_Group_free(&world_group);
    MPI_Comm_dup(MPI_COMM_SELF, &self);
    double t0 = MPI_Wtime();

    pthread_t th;
    pthread_create(&th, NULL, listener, NULL);
    for (int j = 0; j < jobs; j++) {
        pthread_mutex_lock(&st_lock);
        wanting = 1;
        my_ts = ++clk;
        replies = 0;
        int req[3] = {my_ts, me, 0};
        for (int i = 0; i < n; i++)
            if (i != me) locked_send(req, i, TAG_REQ);
        pthread_mutex_unlock(&st_lock);
        for (;;) {
            pthread_mutex_lock(&st_lock);
            int ok = replies >= n - K;
            if (ok) {
                inside = 1;
                wanting = 0;
            }
            pthread_mutex_unlock(&st_lock);
            if (ok) break;
            usleep(500);
        }
        printf("[%8.6f] P%d: printing job %d (ts %d)\n", MPI_Wtime() - t0, me, j, my_ts);
        usleep(2000);
        printf("[%8.6f] P%d: printer released\n", MPI_Wtime() - t0, me);
        pthread_mutex_lock(&st_lock);
        inside = 0;
        for (int i = 0; i < n; i++)
            if (deferred[i]) {
                int rep[3] = {++clk, me, deferred_ts[i]};
                deferred[i] = 0;
                locked_send(rep, i, TAG_REP);
            }
        pthread_mutex_unlock(&st_lock);
    }
    /* the listeners answer until every rank is done: STOP to all, then wait for our listener's word */
    int stop[3] = {0, me, 0};
    for (int i = 0; i < n; i++) locked_send(stop, i, TAG_STOP);
    for (;;) {
        int flag = 0;
        pthread_mutex_lock(&mpi_lock);
        MPI_Iprobe(0, TAG_STOP, self, &flag, MPI_STATUS_IGNORE);
        if (flag) MPI_Recv(stop, 3, MPI_INT, 0, TAG_STOP, self, MPI_STATUS_IGNORE);
        pthread_mutex_unlock(&mpi_lock);
        if (flag) break;
        usleep(1000);
    }
    printf("[%8.6f] P%d: done\n", MPI_Wtime() - t0, me);
    pthread_join(th, NULL);
    MPI_Comm_free(&self);
    MPI_Comm_free(&printers);
    MPI_Finalize();
    return 0;
}
