/* k-mutual exclusion with a coordinator, as a student writes it in C: rank 0 hands out K passes
 * and the other ranks are the clients. The coordinator keeps one MPI_Irecv posted per client and
 * serves them from one loop of MPI_Testsome and usleep (no blocking call anywhere: "so that it never
 * hangs"), a FIFO ring of waiting clients, tags as message kinds. A client asks, waits for its
 * pass with MPI_Recv, prints, sleeps inside, and gives it back; after its rounds it says BYE.
 * Before its first request each client waits a little for the coordinator's hello (a bounded poll:
 * MPI_Iprobe 200 times with usleep, then it goes on without it, and takes the hello later).
 * usage: mpirun -np N ./kmutex K ROUNDS
 *   -DBROKEN_DOUBLE_FREE  a pass handed on to a waiting client is also counted as given back
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ASK 10
#define GIVE_BACK 11
#define BYE 12
#define PASS 20
#define HELLO 21
#define MAXN 64

int main(int argc, char *argv[])
{
    int rank, nprocs, k = argc > 1 ? atoi(argv[1]) : 2, rounds = argc > 2 ? atoi(argv[2]) : 2;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (nprocs > MAXN || nprocs < 2) MPI_Abort(MPI_COMM_WORLD, 1);

    if (rank == 0) {
        int nclients = nprocs - 1, inside = 0, byes = 0, head = 0, tail = 0;
        int queue[MAXN], buf[MAXN], idx[MAXN], outcount;
        MPI_Request req[MAXN];
        MPI_Status st[MAXN];
        for (int c = 0; c < nclients; c++) {
            int hello = k;
            MPI_Send(&hello, 1, MPI_INT, c + 1, HELLO, MPI_COMM_WORLD);
        }
        for (int c = 0; c < nclients; c++)
            MPI_Irecv(&buf[c], 1, MPI_INT, c + 1, MPI_ANY_TAG, MPI_COMM_WORLD, &req[c]);
        while (byes < nclients) {
            MPI_Testsome(nclients, req, &outcount, idx, st);
            if (outcount == MPI_UNDEFINED) break;
            if (outcount == 0) {
                usleep(50);
                continue;
            }
            for (int i = 0; i < outcount; i++) {
                int c = idx[i], who = c + 1, one = 1;
                switch (st[i].MPI_TAG) {
                case ASK:
                    if (inside < k) {
                        inside++;
                        MPI_Send(&one, 1, MPI_INT, who, PASS, MPI_COMM_WORLD);
                    } else {
                        queue[tail] = who;
                        tail = (tail + 1) % MAXN;
                    }
                    break;
                case GIVE_BACK:
                    if (head != tail) {
                        int next = queue[head];
                        head = (head + 1) % MAXN;
                        MPI_Send(&one, 1, MPI_INT, next, PASS, MPI_COMM_WORLD);
#ifdef BROKEN_DOUBLE_FREE
                        inside--;
#endif
                    } else {
                        inside--;
                    }
                    break;
                case BYE:
                    byes++;
                    break;
                }
                if (st[i].MPI_TAG != BYE)
                    MPI_Irecv(&buf[c], 1, MPI_INT, who, MPI_ANY_TAG, MPI_COMM_WORLD, &req[c]);
            }
        }
        fprintf(stderr, "coordinator: all %d clients said bye\n", nclients);
    } else {
        int flag = 0, tries, x = rank;
        for (tries = 0; tries < 200 && !flag; tries++) {
            MPI_Iprobe(0, HELLO, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            if (!flag) usleep(100);
        }
        if (!flag) fprintf(stderr, "client %d: no hello after %d tries, asking anyway\n", rank, tries);
        MPI_Recv(&x, 1, MPI_INT, 0, HELLO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        x = rank;
        for (int r = 0; r < rounds; r++) {
            MPI_Send(&x, 1, MPI_INT, 0, ASK, MPI_COMM_WORLD);
            MPI_Recv(&x, 1, MPI_INT, 0, PASS, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            printf("client %d enters (round %d)\n", rank, r + 1);
            usleep(500);
            printf("client %d leaves\n", rank);
            MPI_Send(&x, 1, MPI_INT, 0, GIVE_BACK, MPI_COMM_WORLD);
        }
        MPI_Send(&x, 1, MPI_INT, 0, BYE, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
