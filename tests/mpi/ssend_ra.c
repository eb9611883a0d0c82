/* Ricart-Agrawala, student style: MPI_Ssend for every message, MPI_Iprobe polled with usleep, no
 * threads, ANSI-coloured lines. As it is, every rank Ssends its REQUEST while the others do the
 * same and none receives: a deadlock under any MPI. -DISSEND sends the REQUESTs with MPI_Issend and
 * polls MPI_Testall beside MPI_Iprobe: correct. -DBROKEN (with -DISSEND) always replies at once:
 * two ranks replying to each other by MPI_Ssend wait for each other for ever. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define REQ 1
#define REP 2
int rank, size, clk = 0, want = 0, reqts = 0, replies = 0;
int deferred[64];

void handle(void) {
    int flag; MPI_Status st; int msg[2];
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    while (flag) {
        MPI_Recv(msg, 2, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
        clk = (msg[0] > clk ? msg[0] : clk) + 1;
        if (st.MPI_TAG == REQ) {
#ifdef BROKEN
            int mine_first = 0;
#else
            int mine_first = want && (reqts < msg[0] || (reqts == msg[0] && rank < st.MPI_SOURCE));
#endif
            if (mine_first) deferred[st.MPI_SOURCE] = 1;
            else { int r[2] = {++clk, rank}; MPI_Ssend(r, 2, MPI_INT, st.MPI_SOURCE, REP, MPI_COMM_WORLD); }
        } else replies++;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    }
}

int main(int argc, char *argv[]) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    want = 1; reqts = ++clk; replies = 0;
#ifdef ISSEND
    MPI_Request reqs[64]; int r[2] = {reqts, rank}, n = 0, sent = 0;
    for (int i = 0; i < size; i++) if (i != rank) MPI_Issend(r, 2, MPI_INT, i, REQ, MPI_COMM_WORLD, &reqs[n++]);
    while (replies < size - 1 || !sent) { handle(); if (!sent) MPI_Testall(n, reqs, &sent, MPI_STATUSES_IGNORE); usleep(100); }
#else
    for (int i = 0; i < size; i++) if (i != rank) { int r[2] = {reqts, rank}; MPI_Ssend(r, 2, MPI_INT, i, REQ, MPI_COMM_WORLD); }
    while (replies < size - 1) { handle(); usleep(100); }
#endif
    printf("\033[1;3%dm[%d]\033[0m ENTER CS at %d\n", rank + 1, rank, clk);
    usleep(1000);
    printf("\033[1;3%dm[%d]\033[0m EXIT CS\n", rank + 1, rank);
    want = 0;
    for (int i = 0; i < size; i++) if (deferred[i]) { int r[2] = {++clk, rank}; MPI_Ssend(r, 2, MPI_INT, i, REP, MPI_COMM_WORLD); deferred[i] = 0; }
    /* keep answering until everyone is done */
    int done = 0;
    for (int i = 0; i < 2000 && !done; i++) { handle(); usleep(100); }
    MPI_Finalize();
    return 0;
}
