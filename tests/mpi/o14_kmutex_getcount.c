/* K permits kept by a coordinator (rank 0) that takes requests and releases from any rank as text
 * of varying length: it probes MPI_ANY_SOURCE, sizes each message with MPI_Get_count and receives
 * it into a buffer of that size. Clients (ranks 1..) ask, wait for their grant (also text), hold a
 * permit a moment and give it back; the coordinator queues itself too, and holds its permit
 * between two messages.
 *
 *   mpicc -O2 -o permits o14_kmutex_getcount.c && mpirun -np 4 ./permits 2 2   (K=2, 2 entries each)
 *
 * -DBROKEN_OFF_BY_ONE: the coordinator grants while fewer than K+1 permits are out. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TAG 3

static char *receive_text(int *from) { /* a message of any length from any rank, as a string */
    MPI_Status status;
    int count;
    MPI_Probe(MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &status);
    MPI_Get_count(&status, MPI_CHAR, &count);
    char *text = malloc((size_t)count + 1);
    MPI_Recv(text, count, MPI_CHAR, status.MPI_SOURCE, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    text[count] = 0;
    if (from) *from = status.MPI_SOURCE;
    return text;
}

static void send_text(int to, const char *text) {
    MPI_Send(text, (int)strlen(text), MPI_CHAR, to, TAG, MPI_COMM_WORLD);
}

static void hold(int me) {
    printf("rank %d acquired\n", me);
    usleep(1000);
    printf("rank %d released\n", me);
}

static void coordinate(int np, int k, int entries) {
    int out = 0, released = 0, waiting[64], head = 0, tail = 0, mine = 1;
    waiting[tail++] = 0; /* its own first entry */
    int limit = k;
#ifdef BROKEN_OFF_BY_ONE
    limit = k + 1;
#endif
    for (;;) {
        while (out < limit && head < tail) {
            char grant[96];
            int to = waiting[head++ % 64];
            if (to == 0) { /* its own turn: held now, given back at once */
                hold(0);
                released++;
                if (mine++ < entries) waiting[tail++ % 64] = 0;
                continue;
            }
            snprintf(grant, sizeof grant, "granted to rank %d, %d of %d permits out", to, out + 1, k);
            send_text(to, grant);
            out++;
        }
        if (released == np * entries) break;
        int from;
        char *text = receive_text(&from);
        if (strncmp(text, "request", 7) == 0) {
            waiting[tail++ % 64] = from;
        } else {
            out--;
            released++;
        }
        free(text);
    }
}

int main(int argc, char **argv) {
    int me, np;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int k = argc > 1 ? atoi(argv[1]) : 1, entries = argc > 2 ? atoi(argv[2]) : 1;
    if (me == 0) {
        coordinate(np, k, entries);
    } else {
        for (int e = 0; e < entries; e++) {
            char ask[128];
            /* a longer message each time: the coordinator cannot know its size before it probes */
            snprintf(ask, sizeof ask, "request from rank %d, entry %d%*s", me, e, e * 17 + me, "");
            send_text(0, ask);
            free(receive_text(NULL));
            hold(me);
            send_text(0, "release");
        }
    }
    MPI_Finalize();
    return 0;
}
