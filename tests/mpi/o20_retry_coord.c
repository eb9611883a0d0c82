/* Central-server mutex where a client that hears nothing for 1 s (MPI_Wtime)
 * sends its request again ("the message may have been lost").  Requests carry
 * the client's request number, so the server ignores a repeat of a request it
 * has already queued or served: correct under any delivery order.
 * Rank 0 is the server (it never enters), ranks 1.. are clients.
 * Output: "client 1 enters" / "client 1 leaves"
 * Build: mutexlab mpicc -O2 -o retry_coord retry_coord.c
 *        (-DBROKEN: the server forgets to ignore repeats: a repeat of a served
 *         request is queued and granted again to a client that has left, which
 *         never releases it, and the others wait for ever, sending again)
 * Arg: entries per client (default 1)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { REQ = 1, GRANT = 2, REL = 3, BYE = 4 };

static void client(int rank, int entries) {
    for (int e = 1; e <= entries; e++) {
        MPI_Send(&e, 1, MPI_INT, 0, REQ, MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        int flag = 0, tries = 1;
        while (!flag) {
            MPI_Iprobe(0, GRANT, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            if (!flag && MPI_Wtime() - t0 > 1.0) {
                MPI_Send(&e, 1, MPI_INT, 0, REQ, MPI_COMM_WORLD); /* again */
                tries++;
                t0 = MPI_Wtime();
            }
            if (!flag)
                usleep(100);
        }
        int g;
        MPI_Recv(&g, 1, MPI_INT, 0, GRANT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("client %d enters (request %d, %d tries)\n", rank, e, tries);
        usleep(1000);
        printf("client %d leaves\n", rank);
        MPI_Send(&e, 1, MPI_INT, 0, REL, MPI_COMM_WORLD);
    }
    int z = 0;
    MPI_Send(&z, 1, MPI_INT, 0, BYE, MPI_COMM_WORLD);
}

static void server(int size) {
    int last_req[64] = {0}; /* highest request number seen per client */
    int queue[256], qh = 0, qt = 0, holder = -1, byes = 0;
    while (byes < size - 1) {
        int v;
        MPI_Status st;
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        int c = st.MPI_SOURCE;
        switch (st.MPI_TAG) {
        case REQ:
#ifndef BROKEN
            if (v <= last_req[c])
                break; /* a repeat */
#endif
            last_req[c] = v;
            if (holder < 0) {
                holder = c;
                MPI_Send(&v, 1, MPI_INT, c, GRANT, MPI_COMM_WORLD);
            } else {
                queue[qt++ % 256] = c;
            }
            break;
        case REL:
            holder = -1;
            if (qh < qt) {
                holder = queue[qh++ % 256];
                MPI_Send(&v, 1, MPI_INT, holder, GRANT, MPI_COMM_WORLD);
            }
            break;
        case BYE:
            byes++;
            break;
        }
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int entries = argc > 1 ? atoi(argv[1]) : 1;
    if (rank == 0)
        server(size);
    else
        client(rank, entries);
    MPI_Finalize();
    return 0;
}
