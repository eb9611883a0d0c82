/* Ricart–Agrawala in one thread with persistent requests: the requests to every peer are
 * MPI_Send_init'ed once and fanned out together with MPI_Startall each time (no MPI_Bcast), and one
 * persistent receive of any source and any tag is restarted for each message expected. A rank
 * goes on answering after its own entries until every peer's requests and replies came in.
 *
 *   mpicc -O2 -o ra o14_persistent_ra.c && mpirun -np 3 ./ra 2   (2: entries per rank)
 *
 * -DBROKEN_TIE: a request of the same timestamp as one's own is deferred whoever made it, so two
 * ranks asking at once each wait for the other's reply. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { REQUEST = 1, REPLY = 2 };
#define MAXP 16

static int me, np, clock_, my_ts, requesting, replies, deferred[MAXP], got, expected;
static int in_ts;
static MPI_Request incoming;

static int has_priority(int ts, int from) { /* this rank's request goes before (ts, from)'s */
#ifdef BROKEN_TIE
    (void)from;
    return my_ts <= ts;
#else
    return my_ts < ts || (my_ts == ts && me < from);
#endif
}

static void handle_one(void) { /* the next message, and the receive restarted if more are due */
    MPI_Status status;
    MPI_Wait(&incoming, &status);
    got++;
    int ts = in_ts, from = status.MPI_SOURCE;
    if (status.MPI_TAG == REQUEST) {
        clock_ = (clock_ > ts ? clock_ : ts) + 1;
        if (requesting && has_priority(ts, from)) {
            deferred[from] = 1;
        } else {
            int stamp = clock_;
            MPI_Send(&stamp, 1, MPI_INT, from, REPLY, MPI_COMM_WORLD);
        }
    } else {
        replies++;
    }
    if (got < expected) MPI_Start(&incoming);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np > MAXP) MPI_Abort(MPI_COMM_WORLD, 1);
    int entries = argc > 1 ? atoi(argv[1]) : 1, out_ts = 0, n = 0;
    MPI_Request fan[MAXP];
    for (int j = 0; j < np; j++)
        if (j != me) MPI_Send_init(&out_ts, 1, MPI_INT, j, REQUEST, MPI_COMM_WORLD, &fan[n++]);
    MPI_Recv_init(&in_ts, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &incoming);
    expected = 2 * (np - 1) * entries; /* each peer's requests, and its replies to ours */
    if (expected > 0) MPI_Start(&incoming);
    for (int e = 0; e < entries; e++) {
        requesting = 1;
        replies = 0;
        my_ts = out_ts = ++clock_;
        MPI_Startall(n, fan);
        while (replies < np - 1) handle_one();
        MPI_Waitall(n, fan, MPI_STATUSES_IGNORE);
        printf("rank %d in CS at %d\n", me, my_ts);
        usleep(1000);
        printf("rank %d out of CS\n", me);
        requesting = 0;
        for (int j = 0; j < np; j++)
            if (deferred[j]) {
                deferred[j] = 0;
                int stamp = clock_;
                MPI_Send(&stamp, 1, MPI_INT, j, REPLY, MPI_COMM_WORLD);
            }
    }
    while (got < expected) handle_one();
    for (int i = 0; i < n; i++) MPI_Request_free(&fan[i]);
    MPI_Request_free(&incoming);
    MPI_Finalize();
    return 0;
}
