/* Ricart-Agrawala, single-threaded, as a student hands it in with MPI's derived types: a request
 * struct sent as a committed type (MPI_Type_create_struct of its first four fields, then
 * MPI_Type_create_resized to sizeof the struct, so an array of them is one message; the note at
 * its end is the receiver's own and never travels), and at the end every rank's column of a
 * table of the replies it gave, sent to rank 0 as an MPI_Type_vector and received there as plain
 * ints, and back to the rank as plain ints received into its column, on a copy of the world (the
 * first version used the world, and mutexlab found a column taken by a receive of MPI_ANY_TAG
 * still waiting for a DONE). usage: ra_typed [entries]
 * -DBROKEN_NO_DEFER: a rank that asks replies at once to every request, its own earlier or not. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXN 16
enum { REQUEST = 1, REPLY = 2, DONE = 3 };

typedef struct {
    int kind, clock, rank;
    double when;
    char note[12]; /* not part of the MPI type: the receiver's own */
} message;

static MPI_Datatype msg_type;
static int me, n, clk, asking, my_clock, replies, done_ranks, deferred[MAXN];
static int given[MAXN][MAXN]; /* given[r][me]: replies this rank gave rank r */

static void make_type(void) {
    message probe = {0};
    int lens[4] = {1, 1, 1, 1};
    MPI_Aint base, disps[4];
    MPI_Datatype types[4] = {MPI_INT, MPI_INT, MPI_INT, MPI_DOUBLE}, loose;
    MPI_Get_address(&probe, &base);
    MPI_Get_address(&probe.kind, &disps[0]);
    MPI_Get_address(&probe.clock, &disps[1]);
    MPI_Get_address(&probe.rank, &disps[2]);
    MPI_Get_address(&probe.when, &disps[3]);
    for (int i = 0; i < 4; i++) disps[i] = MPI_Aint_diff(disps[i], base);
    MPI_Type_create_struct(4, lens, disps, types, &loose);
    MPI_Type_create_resized(loose, 0, sizeof(message), &msg_type);
    MPI_Type_commit(&msg_type);
    MPI_Type_free(&loose);
}

static void send_to(int to, int kind) {
    message m[2]; /* a pair: the message, then a copy, to check that an array of them travels */
    memset(m, 0, sizeof m);
    m[0].kind = kind;
    m[0].clock = kind == REQUEST ? my_clock : ++clk;
    m[0].rank = me;
    m[0].when = MPI_Wtime();
    strcpy(m[0].note, "sender");
    m[1] = m[0];
    MPI_Send(m, 2, msg_type, to, kind, MPI_COMM_WORLD);
}

static void reply(int to) {
    given[to][me]++;
    send_to(to, REPLY);
}

static void handle(void) {
    message m[2];
    MPI_Status st;
    int count;
    for (int i = 0; i < 2; i++) strcpy(m[i].note, "mine");
    MPI_Recv(m, 2, msg_type, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, msg_type, &count);
    if (count != 2 || strcmp(m[0].note, "mine") || strcmp(m[1].note, "mine") || m[1].clock != m[0].clock ||
        m[0].rank != st.MPI_SOURCE || m[0].kind != st.MPI_TAG) {
        fprintf(stderr, "rank %d: a message that is not what was sent (count %d, note %s)\n", me, count, m[0].note);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    clk = (m[0].clock > clk ? m[0].clock : clk) + 1;
    if (m[0].kind == REPLY) {
        replies++;
    } else if (m[0].kind == DONE) {
        done_ranks++;
    } else {
#ifdef BROKEN_NO_DEFER
        int mine_first = 0;
#else
        int mine_first = asking && (my_clock < m[0].clock || (my_clock == m[0].clock && me < m[0].rank));
#endif
        if (mine_first)
            deferred[m[0].rank] = 1;
        else
            reply(m[0].rank);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n > MAXN) MPI_Abort(MPI_COMM_WORLD, 2);
    int entries = argc > 1 ? atoi(argv[1]) : 1;
    make_type();
    MPI_Comm table; /* the last phase's own: a column must not meet a receive of MPI_ANY_TAG above */
    MPI_Comm_dup(MPI_COMM_WORLD, &table);
    for (int e = 0; e < entries; e++) {
        asking = 1;
        my_clock = ++clk;
        replies = 0;
        for (int r = 0; r < n; r++)
            if (r != me) send_to(r, REQUEST);
        while (replies < n - 1) handle();
        printf("rank %d enters the critical section (clock %d)\n", me, my_clock);
        printf("rank %d leaves the critical section\n", me);
        asking = 0;
        for (int r = 0; r < n; r++)
            if (deferred[r]) {
                deferred[r] = 0;
                reply(r);
            }
    }
    for (int r = 0; r < n; r++)
        if (r != me) send_to(r, DONE);
    while (done_ranks < n - 1) handle();

    /* the table of replies: each rank's column to rank 0, as a vector; rank 0 takes it as ints */
    MPI_Datatype column;
    MPI_Type_vector(n, 1, MAXN, MPI_INT, &column);
    MPI_Type_commit(&column);
    if (me == 0) {
        int total = 0, row[MAXN];
        for (int r = 0; r < n; r++) total += given[r][0];
        for (int src = 1; src < n; src++) {
            MPI_Recv(row, n, MPI_INT, src, 9, table, MPI_STATUS_IGNORE);
            for (int r = 0; r < n; r++) total += row[r];
            given[0][src] = -1; /* outside what comes back: must stay */
            MPI_Send(row, n, MPI_INT, src, 10, table);
        }
        printf("rank 0: %d replies given in all (%d expected)\n", total, entries * n * (n - 1));
        if (total != entries * n * (n - 1)) MPI_Abort(MPI_COMM_WORLD, 4);
    } else {
        MPI_Send(&given[0][me], 1, column, 0, 9, table);
        int mine = 0;
        for (int r = 0; r < n; r++) mine += given[r][me];
        memset(given, 0, sizeof given);
        given[0][0] = 77; /* another column: the receive must leave it */
        MPI_Recv(&given[0][me], 1, column, 0, 10, table, MPI_STATUS_IGNORE);
        int back = 0;
        for (int r = 0; r < n; r++) back += given[r][me];
        if (back != mine || given[0][0] != 77) MPI_Abort(MPI_COMM_WORLD, 5);
    }
    MPI_Type_free(&column);
    MPI_Comm_free(&table);
    MPI_Type_free(&msg_type);
    MPI_Finalize();
    return 0;
}
