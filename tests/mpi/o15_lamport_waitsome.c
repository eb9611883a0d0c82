/* Lamport's mutual exclusion in one thread, an event loop over one receive per peer.
 *
 * Style: the algorithm talks on its own communicator (MPI_Comm_dup of the world); an array of
 * MPI_Irecv(MPI_ANY_TAG), one per peer, is served by MPI_Waitsome, each completed receive handled
 * then posted again; the tag says what a message is (REQUEST, REPLY, RELEASE, DONE) and
 * MPI_Get_count how many ints came (checked against what the tag promises); the fan-out of a
 * REQUEST or RELEASE is MPI_Isend to every peer then MPI_Waitall. At the end each rank says DONE,
 * serves until every peer has said it, then takes back its receives with MPI_Cancel and MPI_Wait.
 *
 * -DBROKEN_HEAD_ONLY: a rank enters as soon as its request heads its own queue, without having
 * heard from every peer since it asked.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXP 16
enum { REQUEST = 100, REPLY = 101, RELEASE = 102, DONE = 103 };

static int me, np, clk;
static MPI_Comm comm;
static int queued[MAXP];     /* the stamp of each rank's request in the queue, or -1 */
static int last_heard[MAXP]; /* the stamp of the last message from each rank */
static int done_peers;
static int inbox[MAXP][2];
static MPI_Request recvs[MAXP];

static int before(int ts1, int r1, int ts2, int r2) { return ts1 < ts2 || (ts1 == ts2 && r1 < r2); }

static void fan_out(int tag, int *body, int count) {
    MPI_Request sends[MAXP];
    int k = 0;
    for (int r = 0; r < np; r++)
        if (r != me) MPI_Isend(body, count, MPI_INT, r, tag, comm, &sends[k++]);
    MPI_Waitall(k, sends, MPI_STATUSES_IGNORE);
}

static void post(int peer) { MPI_Irecv(inbox[peer], 2, MPI_INT, peer, MPI_ANY_TAG, comm, &recvs[peer]); }

static void handle(int from, MPI_Status *st) {
    int count, want = st->MPI_TAG == REQUEST ? 2 : st->MPI_TAG == DONE ? 0 : 1;
    MPI_Get_count(st, MPI_INT, &count);
    if (count != want) {
        fprintf(stderr, "rank %d: tag %d from %d with %d ints\n", me, st->MPI_TAG, from, count);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    int ts = count > 0 ? inbox[from][0] : 0;
    if (ts > clk) clk = ts;
    clk++;
    switch (st->MPI_TAG) {
    case REQUEST: {
        queued[from] = ts;
        last_heard[from] = ts;
        int reply = clk;
        MPI_Send(&reply, 1, MPI_INT, from, REPLY, comm);
        break;
    }
    case REPLY:
        last_heard[from] = ts;
        break;
    case RELEASE:
        queued[from] = -1;
        last_heard[from] = ts;
        break;
    case DONE:
        done_peers++;
        break;
    }
}

static void serve_once(void) {
    int outcount, idx[MAXP];
    MPI_Status sts[MAXP];
    MPI_Waitsome(np, recvs, &outcount, idx, sts);
    for (int i = 0; i < outcount; i++) {
        handle(idx[i], &sts[i]);
        post(idx[i]);
    }
}

static int may_enter(void) {
    for (int r = 0; r < np; r++) {
        if (r == me) continue;
        if (queued[r] >= 0 && before(queued[r], r, queued[me], me)) return 0;
#ifndef BROKEN_HEAD_ONLY
        if (!before(queued[me], me, last_heard[r], r)) return 0;
#endif
    }
    return 1;
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &np);
    if (np > MAXP) MPI_Abort(MPI_COMM_WORLD, 2);
    for (int r = 0; r < np; r++) {
        queued[r] = last_heard[r] = -1;
        recvs[r] = MPI_REQUEST_NULL;
        if (r != me) post(r);
    }
    for (int round = 0; round < rounds; round++) {
        int req[2] = {++clk, me};
        queued[me] = req[0];
        fan_out(REQUEST, req, 2);
        while (!may_enter()) serve_once();
        printf("Process %d: entering section (ts %d)\n", me, queued[me]);
        printf("Process %d: leaving section\n", me);
        queued[me] = -1;
        int rel = ++clk;
        fan_out(RELEASE, &rel, 1);
    }
    fan_out(DONE, NULL, 0);
    while (done_peers < np - 1) serve_once();
    for (int r = 0; r < np; r++) {
        if (r == me) continue;
        MPI_Cancel(&recvs[r]);
        MPI_Wait(&recvs[r], MPI_STATUS_IGNORE);
    }
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return 0;
}
