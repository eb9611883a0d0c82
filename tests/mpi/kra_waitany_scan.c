/* K printers (k-mutual exclusion) by Raymond's Ricart–Agrawala, single-threaded: a rank enters
 * with N-K replies to its request. Every message is int[4] {kind, clock, request number, rank};
 * one MPI_Irecv posted per peer, the main loop in MPI_Waitany over them. Set-up: the ranks agree
 * on K by MPI_Allreduce (MPI_MIN of what each read), and each takes its first clock from an
 * MPI_Exscan of the ranks and its printer-queue ticket from an MPI_Scan. At the end a rank takes
 * every late reply and everyone's DONE, then cancels the receives still posted. Arguments: K (default 2), entries per rank (default 2).
 * A rank defers one request per peer: a peer that needed only N-K replies may enter, leave and ask
 * again while its older request is still deferred here, and that older one is answered then (the
 * peer went on without it, but counts every reply before it ends).
 * -DBROKEN_OFF_BY_ONE: enters with one reply too few. -DBROKEN_OVERWRITE: the newer request
 * overwrites the deferred one, whose reply is never sent: that peer waits for ever at its end. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { REQUEST = 1, REPLY = 2, DONE = 3 };
enum { RELEASED, WANTED, HELD };

static int me, n, clk, state = RELEASED, my_ts, my_req, replies, all_replies, dones;
static int *deferred;
static MPI_Request *posted;
static int (*inbox)[4];

static void send4(int to, int kind, int ts, int req) {
    int m[4] = {kind, ts, req, me};
    MPI_Send(m, 4, MPI_INT, to, kind, MPI_COMM_WORLD);
}

static void handle_one(void) {
    int idx;
    MPI_Status st;
    MPI_Waitany(n, posted, &idx, &st);
    int *m = inbox[idx];
    int kind = m[0], ts = m[1], req = m[2], from = m[3];
    if (ts > clk) clk = ts;
    clk++;
    if (kind == REQUEST) {
        int mine_first = state == HELD || (state == WANTED && (my_ts < ts || (my_ts == ts && me < from)));
        if (mine_first) {
#ifndef BROKEN_OVERWRITE
            if (deferred[from] >= 0) send4(from, REPLY, ++clk, deferred[from]); /* its older request */
#endif
            deferred[from] = req;
        } else
            send4(from, REPLY, ++clk, req);
    } else if (kind == REPLY) {
        all_replies++; /* late ones too: every peer answers every request, in the end */
        if (state == WANTED && req == my_req) replies++;
    } else if (kind == DONE) {
        dones++;
    }
    MPI_Irecv(inbox[idx], 4, MPI_INT, idx, MPI_ANY_TAG, MPI_COMM_WORLD, &posted[idx]);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int asked = argc > 1 ? atoi(argv[1]) : 2, entries = argc > 2 ? atoi(argv[2]) : 2, k, ticket, one = 1;
    MPI_Allreduce(&asked, &k, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Exscan(&me, &clk, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0) clk = 0; /* MPI_Exscan leaves rank 0's */
    MPI_Scan(&one, &ticket, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (k < 1) k = 1;
    if (k > n) k = n;
    int need = n - k;
#ifdef BROKEN_OFF_BY_ONE
    need--;
#endif
    deferred = malloc(sizeof(int) * n);
    posted = malloc(sizeof(MPI_Request) * n);
    inbox = malloc(sizeof(int[4]) * n);
    for (int i = 0; i < n; i++) {
        deferred[i] = -1;
        posted[i] = MPI_REQUEST_NULL;
        if (i != me) MPI_Irecv(inbox[i], 4, MPI_INT, i, MPI_ANY_TAG, MPI_COMM_WORLD, &posted[i]);
    }
    for (int e = 0; e < entries; e++) {
        state = WANTED;
        my_ts = ++clk;
        my_req = e;
        replies = 0;
        for (int i = 0; i < n; i++)
            if (i != me) send4(i, REQUEST, my_ts, e);
        while (replies < need) handle_one();
        state = HELD;
        printf("[ticket %d] printer taken by %d\n", ticket, me);
        usleep(300);
        printf("[ticket %d] printer given back by %d\n", ticket, me);
        state = RELEASED;
        for (int i = 0; i < n; i++)
            if (deferred[i] >= 0) {
                send4(i, REPLY, ++clk, deferred[i]);
                deferred[i] = -1;
            }
    }
    for (int i = 0; i < n; i++)
        if (i != me) send4(i, DONE, ++clk, 0);
    while (dones < n - 1 || all_replies < entries * (n - 1)) handle_one(); /* nothing left unreceived */
    for (int i = 0; i < n; i++)
        if (posted[i] != MPI_REQUEST_NULL) {
            MPI_Cancel(&posted[i]);
            MPI_Wait(&posted[i], MPI_STATUS_IGNORE);
        }
    free(deferred);
    free(posted);
    free(inbox);
    MPI_Finalize();
    return 0;
}
