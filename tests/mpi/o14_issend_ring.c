/* A token ring in which the token is handed on by a synchronous send polled to its end:
 * MPI_Issend, then MPI_Test in a loop (the sender knows the next rank has the token before it goes
 * on), and the token awaited the same way (MPI_Irecv + MPI_Test). The token counts its passes.
 *
 *   mpicc -O2 -o ring o14_issend_ring.c && mpirun -np 3 ./ring 2   (2: entries per rank)
 *
 * -DBROKEN_TWO_TOKENS: rank 1 also starts as if it held the token, so two ranks may be inside at
 * once. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define TOKEN_TAG 7

static void poll_until_done(MPI_Request *req) {
    int done = 0;
    while (!done) MPI_Test(req, &done, MPI_STATUS_IGNORE);
}

static long await_token(int from) {
    long token;
    MPI_Request req;
    MPI_Irecv(&token, 1, MPI_LONG, from, TOKEN_TAG, MPI_COMM_WORLD, &req);
    poll_until_done(&req);
    return token;
}

static void hand_on(long token, int to) {
    MPI_Request req;
    MPI_Issend(&token, 1, MPI_LONG, to, TOKEN_TAG, MPI_COMM_WORLD, &req);
    poll_until_done(&req);
}

int main(int argc, char **argv) {
    int me, np;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int entries = argc > 1 ? atoi(argv[1]) : 1;
    int next = (me + 1) % np, prev = (me + np - 1) % np;
    long token = 0;
    for (int round = 0; round < entries; round++) {
        int holding = me == 0 && round == 0;
#ifdef BROKEN_TWO_TOKENS
        holding = holding || (me == 1 && round == 0);
#endif
        if (!holding) token = await_token(prev);
        printf("rank %d in CS (pass %ld)\n", me, token);
        usleep(1000);
        printf("rank %d out of CS\n", me);
        hand_on(token + 1, next);
    }
    if (me == 0) token = await_token(prev); /* the last pass comes home */
#ifdef BROKEN_TWO_TOKENS
    if (me == 2 % np) token = await_token(prev); /* rank 1's first token, in a ring of its own */
#endif
    MPI_Finalize();
    return 0;
}
