/* Central lock server over MPI (rank 0 grants), Lamport clocks only, JSON Lines on stdout.
   mpicc -o mpi_lock mpi_lock.c && mpirun -np 4 ./mpi_lock ROUNDS [broken] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
enum { REQ = 1, GRANT, RELEASE };
static const char *tname[] = {"", "REQ", "GRANT", "RELEASE"};
int me, lam, seq;
void ev(const char *kind, const char *extra) {
    lam++;
    printf("{\"event\":\"%s\",\"pid\":\"rank-%d\",\"lamport\":%d%s}\n", kind, me, lam, extra);
    fflush(stdout);
}
void snd(int to, int tag) {
    char x[200]; int msg[3];
    seq++;
    snprintf(x, sizeof x, ",\"type\":\"%s\",\"to\":\"rank-%d\",\"id\":\"%d-%d\"", tname[tag], to, me, seq);
    ev("send", x);
    msg[0] = lam; msg[1] = me; msg[2] = seq;
    MPI_Send(msg, 3, MPI_INT, to, tag, MPI_COMM_WORLD);
}
int rcv(int from, int *tag, int *src) {
    int msg[3]; char x[200]; MPI_Status st;
    MPI_Recv(msg, 3, MPI_INT, from, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    if (msg[0] > lam) lam = msg[0];
    snprintf(x, sizeof x, ",\"type\":\"%s\",\"from\":\"rank-%d\",\"id\":\"%d-%d\"", tname[st.MPI_TAG], msg[1], msg[1], msg[2]);
    ev("recv", x);
    *tag = st.MPI_TAG; *src = msg[1];
    return 0;
}
int main(int argc, char **argv) {
    int n, rounds = atoi(argv[1]), broken = argc > 2, tag, src;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (me == 0) {
        int holders = 0, queue[64], qn = 0, releases = 0, total = (n - 1) * rounds;
        while (releases < total) {
            rcv(MPI_ANY_SOURCE, &tag, &src);
            if (tag == REQ) {
                if (holders == 0 || (broken && holders < 2)) { holders++; snd(src, GRANT); }
                else queue[qn++] = src;
            } else {
                holders--; releases++;
                if (qn) { holders++; snd(queue[0], GRANT); memmove(queue, queue + 1, --qn * sizeof(int)); }
            }
        }
    } else {
        for (int r = 0; r < rounds; r++) {
            ev("request", ",\"resource\":\"cs\"");
            snd(0, REQ);
            rcv(0, &tag, &src);
            ev("enter", ",\"resource\":\"cs\"");
            ev("exit", ",\"resource\":\"cs\"");
            snd(0, RELEASE);
        }
    }
    MPI_Finalize();
    return 0;
}
