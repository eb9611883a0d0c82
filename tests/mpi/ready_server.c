/* A lock server on rank 0 in the "ready send" style: each client posts its MPI_Irecv for the GRANT
 * before it asks, so the server answers with MPI_Rsend; the server keeps one MPI_Irecv posted per
 * client and takes them with MPI_Waitany, posting the next as each completes. Each client also
 * posts an MPI_Irecv for a SHUTDOWN the server never sends, and the server's last receives are
 * never completed: requests left pending at MPI_Finalize, which MPI calls erroneous.
 * -DBROKEN_FREE_ON_GRANT frees the lock when it grants it, not when it is released.
 * Usage: ready_server [ROUNDS] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { ASK = 1, RELEASE = 2, DONE = 3, GRANT = 4, SHUTDOWN = 5 };

static void server(int np, int rounds) {
    MPI_Request req[64];
    int msg[64], waiting[64], head = 0, tail = 0, holder = -1, done = 0;
    (void)rounds;
    for (int c = 1; c < np; c++) MPI_Irecv(&msg[c], 1, MPI_INT, c, MPI_ANY_TAG, MPI_COMM_WORLD, &req[c]);
    req[0] = MPI_REQUEST_NULL;
    while (done < np - 1) {
        int i;
        MPI_Status st;
        MPI_Waitany(np, req, &i, &st);
        if (st.MPI_TAG == ASK) waiting[tail++ % 64] = i;
        else if (st.MPI_TAG == RELEASE) holder = -1;
        else done++;
        MPI_Irecv(&msg[i], 1, MPI_INT, i, MPI_ANY_TAG, MPI_COMM_WORLD, &req[i]);
        if (holder < 0 && head < tail) {
            holder = waiting[head++ % 64];
            MPI_Rsend(&holder, 1, MPI_INT, holder, GRANT, MPI_COMM_WORLD);
#ifdef BROKEN_FREE_ON_GRANT
            holder = -1;
#endif
        }
    }
    printf("server: all done\n");
}

static void client(int me, int rounds) {
    int bye, granted, x = me;
    MPI_Request shutdown, grant;
    MPI_Irecv(&bye, 1, MPI_INT, 0, SHUTDOWN, MPI_COMM_WORLD, &shutdown);
    for (int r = 0; r < rounds; r++) {
        MPI_Irecv(&granted, 1, MPI_INT, 0, GRANT, MPI_COMM_WORLD, &grant);
        MPI_Send(&x, 1, MPI_INT, 0, ASK, MPI_COMM_WORLD);
        MPI_Wait(&grant, MPI_STATUS_IGNORE);
        printf("client %d: ENTER\n", me);
        printf("client %d: EXIT\n", me);
        MPI_Send(&x, 1, MPI_INT, 0, RELEASE, MPI_COMM_WORLD);
    }
    MPI_Send(&x, 1, MPI_INT, 0, DONE, MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
    int me, np, rounds = argc > 1 ? atoi(argv[1]) : 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (me == 0) server(np, rounds);
    else client(me, rounds);
    MPI_Finalize();
    return 0;
}
