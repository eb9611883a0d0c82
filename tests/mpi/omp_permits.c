/* K permits handed out by rank 0, written with OpenMP: `#pragma omp parallel num_threads(2)`, thread
 * 1 of rank 0 the permit server (MPI_Recv(MPI_ANY_SOURCE, MPI_ANY_TAG)), thread 0 of every rank a
 * client that asks, waits for its GRANT, uses a permit and gives it back; the server's state under
 * `#pragma omp critical`, the clients' count under `#pragma omp atomic`; the other ranks' thread 1
 * goes straight to the region's closing barrier. -DBROKEN_DOUBLE_GRANT, on a RELEASE with a client
 * queued, hands the permit on to it and also counts it free again. Usage: omp_permits K [ROUNDS] */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

enum { ASK = 1, GRANT = 2, RELEASE = 3, DONE = 4 };
static int me, np, k, rounds, free_permits, queue[256], head, tail, done_clients, uses;

static void serve(void) {
    while (done_clients < np) {
        int x;
        MPI_Status st;
        MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        int to = -1;
#pragma omp critical(server)
        {
            if (st.MPI_TAG == ASK) {
                if (free_permits > 0) free_permits--, to = st.MPI_SOURCE;
                else queue[tail++ % 256] = st.MPI_SOURCE;
            } else if (st.MPI_TAG == RELEASE) {
                if (head < tail) {
                    to = queue[head++ % 256];
#ifdef BROKEN_DOUBLE_GRANT
                    free_permits++;
#endif
                } else {
                    free_permits++;
                }
            } else {
                done_clients++;
            }
        }
        if (to >= 0) MPI_Send(&k, 1, MPI_INT, to, GRANT, MPI_COMM_WORLD);
    }
}

static void client(void) {
    for (int r = 0; r < rounds; r++) {
        int x = me;
        MPI_Send(&x, 1, MPI_INT, 0, ASK, MPI_COMM_WORLD);
        MPI_Recv(&x, 1, MPI_INT, 0, GRANT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("[%d] acquired a permit (round %d)\n", me, r);
#pragma omp atomic
        uses++;
        printf("[%d] released the permit\n", me);
        MPI_Send(&x, 1, MPI_INT, 0, RELEASE, MPI_COMM_WORLD);
    }
    MPI_Send(&me, 1, MPI_INT, 0, DONE, MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    k = argc > 1 ? atoi(argv[1]) : 1;
    rounds = argc > 2 ? atoi(argv[2]) : 1;
    free_permits = k;
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 0) client();
        else if (me == 0) serve();
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) printf("[0] served, %d uses here\n", uses);
    MPI_Finalize();
    return 0;
}
