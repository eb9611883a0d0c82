/* Ricart-Agrawala, one round: every rank asks once, then polls in one loop for the requests of
 * the others and for its replies (MPI_Irecv posted for each peer, MPI_Testall), and prints when
 * it enters and leaves. A student's shape: globals, one tag per kind, printf.
 *
 * -DBROKEN_ONE_PER_POLL: each turn of the loop takes one request (MPI_Iprobe), then asks whether
 * every reply came, and stops listening once they have. Under Open MPI it hangs now and then (a
 * request and a reply that came in together: the loop took another request, saw the replies
 * complete and left; that request is never answered). The fix asks for the replies first and
 * then takes every request there is: a peer's request comes before its reply, so each peer whose
 * reply was seen has had its request taken.
 *
 * Build: mutexlab mpicc -o ra_poll ra_poll_replies.c (or mpicc under Open MPI/MPICH). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define TAG_REQ 10
#define TAG_REP 11
#define MAXP 16

int me, np;
int my_ts = 0, max_seen = 0;
int deferred[MAXP];

static int i_go_first(int ts, int rank) { return my_ts < ts || (my_ts == ts && me < rank); }

static void take_request(int from, int ts) {
    if (ts > max_seen) max_seen = ts;
    if (i_go_first(ts, from)) {
        deferred[from] = 1;
    } else {
        int ok = 1;
        MPI_Send(&ok, 1, MPI_INT, from, TAG_REP, MPI_COMM_WORLD);
    }
}

static int one_request(void) { /* 1 if a request was there and taken */
    int there = 0, ts;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, TAG_REQ, MPI_COMM_WORLD, &there, &st);
    if (!there) return 0;
    MPI_Recv(&ts, 1, MPI_INT, st.MPI_SOURCE, TAG_REQ, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    take_request(st.MPI_SOURCE, ts);
    return 1;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np > MAXP) MPI_Abort(MPI_COMM_WORLD, 1);

    my_ts = max_seen + 1;
    for (int p = 0; p < np; p++)
        if (p != me) MPI_Send(&my_ts, 1, MPI_INT, p, TAG_REQ, MPI_COMM_WORLD);

    MPI_Request rq[MAXP];
    int got[MAXP], n = 0, all = 0;
    for (int p = 0; p < np; p++)
        if (p != me) MPI_Irecv(&got[p], 1, MPI_INT, p, TAG_REP, MPI_COMM_WORLD, &rq[n++]);
    while (1) {
#ifdef BROKEN_ONE_PER_POLL
        one_request();
        MPI_Testall(n, rq, &all, MPI_STATUSES_IGNORE);
#else
        MPI_Testall(n, rq, &all, MPI_STATUSES_IGNORE);
        while (one_request())
            ;
#endif
        if (all) break;
        usleep(100);
    }

    printf("rank %d enters\n", me);
    usleep(1000);
    printf("rank %d leaves\n", me);
    fflush(stdout);
    for (int p = 0; p < np; p++)
        if (deferred[p]) {
            int ok = 1;
            MPI_Send(&ok, 1, MPI_INT, p, TAG_REP, MPI_COMM_WORLD);
        }
    MPI_Finalize();
    return 0;
}
