/* Ricart-Agrawala with no thread at all, as a student writes it against the MPI reference:
 * three MPI_Irecv kept posted (REQUEST, REPLY, DONE) and polled with MPI_Testany between
 * usleep()s; the messages packed with MPI_Pack into MPI_PACKED buffers; replies sent with
 * MPI_Bsend from an attached buffer, requests with MPI_Isend + MPI_Request_free; the number of
 * entries read from argv by rank 0 and sent by MPI_Bcast; the total gathered by MPI_Reduce.
 * Diagnostics go to stderr; printf is never flushed by hand.
 *   -DBROKEN_TIE      a tie of clocks is not broken by rank: both reply, both enter
 *   -DBROKEN_FORGET   the deferred replies are never sent: the others wait for ever */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { TAG_REQ = 11, TAG_REP = 12, TAG_DONE = 13 };

static int rank, size, lamport;

static void post(void *buf, int tag, MPI_Request *r) {
    MPI_Irecv(buf, 64, MPI_PACKED, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, r);
}

static int pack(char *out, int kind, int clock) {
    int pos = 0;
    MPI_Pack(&kind, 1, MPI_INT, out, 64, &pos, MPI_COMM_WORLD);
    MPI_Pack(&clock, 1, MPI_INT, out, 64, &pos, MPI_COMM_WORLD);
    return pos;
}

static void unpack(char *in, int *kind, int *clock) {
    int pos = 0;
    MPI_Unpack(in, 64, &pos, kind, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Unpack(in, 64, &pos, clock, 1, MPI_INT, MPI_COMM_WORLD);
}

static void reply(int to) {
    char msg[64];
    int n = pack(msg, TAG_REP, ++lamport);
    MPI_Bsend(msg, n, MPI_PACKED, to, TAG_REP, MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int entries = 1;
    if (rank == 0 && argc > 1) entries = atoi(argv[1]);
    MPI_Bcast(&entries, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (entries < 1) {
        fprintf(stderr, "rank %d: bad number of entries %d\n", rank, entries);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int bufsize = size * (64 + MPI_BSEND_OVERHEAD) * 4;
    void *bsend = malloc(bufsize);
    MPI_Buffer_attach(bsend, bufsize);

    char in[3][64];
    MPI_Request rq[3];
    post(in[0], TAG_REQ, &rq[0]);
    post(in[1], TAG_REP, &rq[1]);
    post(in[2], TAG_DONE, &rq[2]);

    int done = 0, finished = 0, wanting = 0, inside = 0, my_ts = 0, replies = 0;
    int *deferred = calloc(size, sizeof(int));
    unsigned seed = (unsigned)rank * 7919u + 1u;
    while (finished < size) {
        if (!wanting && done < entries) {
            wanting = 1;
            replies = 0;
            my_ts = ++lamport;
            char msg[64];
            int n = pack(msg, TAG_REQ, my_ts);
            for (int p = 0; p < size; p++) {
                if (p == rank) continue;
                MPI_Request s;
                MPI_Isend(msg, n, MPI_PACKED, p, TAG_REQ, MPI_COMM_WORLD, &s);
                MPI_Request_free(&s);
            }
        }
        if (wanting && replies == size - 1) {
            inside = 1;
            printf("P%d in CS (ts %d)\n", rank, my_ts);
            usleep(1000 + rand_r(&seed) % 1000);
            printf("P%d out of CS\n", rank);
            inside = 0;
            wanting = 0;
            done++;
#ifndef BROKEN_FORGET
            for (int p = 0; p < size; p++)
                if (deferred[p]) deferred[p] = 0, reply(p);
#endif
            if (done == entries) {
                char msg[64];
                int n = pack(msg, TAG_DONE, lamport);
                for (int p = 0; p < size; p++)
                    if (p != rank) MPI_Bsend(msg, n, MPI_PACKED, p, TAG_DONE, MPI_COMM_WORLD);
                finished++;
            }
            continue;
        }
        int index, flag;
        MPI_Status st;
        MPI_Testany(3, rq, &index, &flag, &st);
        if (!flag) {
            usleep(500);
            continue;
        }
        int kind, clock;
        unpack(in[index], &kind, &clock);
        lamport = (clock > lamport ? clock : lamport) + 1;
        int from = st.MPI_SOURCE;
        if (kind == TAG_REQ) {
#ifdef BROKEN_TIE
            int mine_first = wanting && my_ts < clock;
#else
            int mine_first = wanting && (my_ts < clock || (my_ts == clock && rank < from));
#endif
            if (inside || mine_first)
                deferred[from] = 1;
            else
                reply(from);
        } else if (kind == TAG_REP) {
            replies++;
        } else {
            finished++;
        }
        post(in[index], kind, &rq[index]);
    }
    for (int i = 0; i < 3; i++) MPI_Cancel(&rq[i]), MPI_Request_free(&rq[i]);
    int total = 0;
    MPI_Reduce(&done, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("all ranks entered %d times in all\n", total);
    void *was;
    int wassize;
    MPI_Buffer_detach(&was, &wassize);
    free(was);
    free(deferred);
    MPI_Finalize();
    return 0;
}
