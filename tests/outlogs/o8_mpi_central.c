/* Central lock server over MPI: rank 0 grants "cs" to one client at a time (broken: two at once).
   Each rank prints one line per event to stdout: "host=rankR clock={...} | event", vector clocks
   as JSON maps over "rankR@HOST" names, idle ranks missing. mpirun --tag-output interleaves them.
   mpicc -o central o8_mpi_central.c && mpirun -n 4 --oversubscribe --tag-output ./central ROUNDS [broken] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define MAXR 16
enum { REQ = 1, GRANT = 2, REL = 3 };
int rank, size, vc[MAXR + 1];
char host[64];

void logev(const char *fmt, const char *what) {
    char line[4096];
    int len;
    vc[rank]++;
    len = snprintf(line, sizeof line, "host=rank%d@%s clock={", rank, host);
    for (int p = 0, first = 1; p < size; p++)
        if (vc[p]) len += snprintf(line + len, sizeof line - len, "%s\"rank%d@%s\":%d", first ? "" : ", ", p, host, vc[p]), first = 0;
    len += snprintf(line + len, sizeof line - len, "} | ");
    len += snprintf(line + len, sizeof line - len, fmt, what);
    printf("%s\n", line);
    fflush(stdout);
}

void send_to(int to, int tag, const char *name) {
    char txt[64];
    snprintf(txt, sizeof txt, "rank%d", to);
    logev(name, txt);
    MPI_Send(vc, MAXR + 1, MPI_INT, to, tag, MPI_COMM_WORLD);
}

int recv_any(int *from) {
    int c[MAXR + 1];
    MPI_Status st;
    char txt[64];
    MPI_Recv(c, MAXR + 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    for (int p = 0; p < size; p++) vc[p] = vc[p] > c[p] ? vc[p] : c[p];
    *from = st.MPI_SOURCE;
    snprintf(txt, sizeof txt, "tag %d from rank%d", st.MPI_TAG, st.MPI_SOURCE);
    logev("got %s", txt);
    return st.MPI_TAG;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    gethostname(host, sizeof host);
    strcpy(host, "hpc-node07"); /* a fixed host name keeps the log reproducible */
    int rounds = atoi(argv[1]), broken = argc > 2, from;
    if (rank == 0) {
        int queue[MAXR * 64], head = 0, tail = 0, busy = 0, left = (size - 1) * rounds;
        while (left > 0) {
            int tag = recv_any(&from);
            if (tag == REQ) queue[tail++] = from;
            else { busy--; left--; }
            while (head < tail && (busy == 0 || (broken && busy < 2))) {
                busy++;
                send_to(queue[head++], GRANT, "grant to %s");
            }
        }
    } else {
        for (int r = 0; r < rounds; r++) {
            logev("request %s", "cs");
            send_to(0, REQ, "ask %s");
            recv_any(&from);
            logev("enter %s", "cs");
            usleep(2000 + 1000 * rank);
            logev("exit %s", "cs");
            send_to(0, REL, "release to %s");
        }
    }
    MPI_Finalize();
    return 0;
}
