/* Lamport's mutual exclusion as a student hands it in, single-threaded: the messages are text
 * ("REQ 4 2", "ACK 5 1", "REL 7 2": kind, clock, sender), found by MPI_Iprobe(MPI_ANY_SOURCE,
 * MPI_ANY_TAG) in a loop with usleep, their length read by MPI_Get_count into a malloc'd buffer;
 * the ranks split by role (MPI_Comm_split: even and odd teams), each team's leader MPI_Bcast's the
 * number of jobs to its team and MPI_Reduce's the team's count at the end. A rank enters when its
 * request heads its queue (by clock, then rank) and it has heard a later message from every other.
 * usage: lamport_text [jobs]  -DBROKEN_NO_TIEBREAK: the queue orders by clock alone (ties by arrival). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXN 32
static int me, n, clk, queued[MAXN], qclock[MAXN], last_heard[MAXN];

static void say(const char *kind, int to) {
    char text[64];
    int len = snprintf(text, sizeof text, "%s %d %d", kind, ++clk, me);
    MPI_Send(text, len + 1, MPI_CHAR, to, kind[0], MPI_COMM_WORLD);
}

static int ahead(int a, int b) { /* a's request before b's */
#ifdef BROKEN_NO_TIEBREAK
    return qclock[a] < qclock[b] || (qclock[a] == qclock[b] && a == me);
#else
    return qclock[a] < qclock[b] || (qclock[a] == qclock[b] && a < b);
#endif
}

static int my_turn(void) {
    if (!queued[me]) return 0;
    for (int r = 0; r < n; r++) {
        if (r == me) continue;
        if (queued[r] && ahead(r, me)) return 0;
        if (last_heard[r] <= qclock[me]) return 0;
    }
    return 1;
}

static int serve(void) { /* one message, if there is one: 1 */
    int flag, len;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    if (!flag) return 0;
    MPI_Get_count(&st, MPI_CHAR, &len);
    char *text = malloc((size_t)len);
    MPI_Recv(text, len, MPI_CHAR, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    char kind[8];
    int when, from;
    if (sscanf(text, "%7s %d %d", kind, &when, &from) != 3 || from != st.MPI_SOURCE) {
        fprintf(stderr, "P%d: cannot read '%s'\n", me, text);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    free(text);
    clk = (when > clk ? when : clk) + 1;
    last_heard[from] = when;
    if (!strcmp(kind, "REQ")) {
        queued[from] = 1;
        qclock[from] = when;
        say("ACK", from);
    } else if (!strcmp(kind, "REL")) {
        queued[from] = 0;
    }
    return 1;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n > MAXN) MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Comm team;
    int role = me % 2, team_rank, jobs = 0;
    MPI_Comm_split(MPI_COMM_WORLD, role, me, &team);
    MPI_Comm_rank(team, &team_rank);
    if (team_rank == 0) jobs = argc > 1 ? atoi(argv[1]) : 1;
    MPI_Bcast(&jobs, 1, MPI_INT, 0, team);
    for (int r = 0; r < n; r++) last_heard[r] = -1;

    for (int j = 0; j < jobs; j++) {
        queued[me] = 1;
        qclock[me] = ++clk;
        char text[64];
        int len = snprintf(text, sizeof text, "REQ %d %d", qclock[me], me);
        for (int r = 0; r < n; r++)
            if (r != me) MPI_Send(text, len + 1, MPI_CHAR, r, 'R', MPI_COMM_WORLD);
        while (!my_turn())
            if (!serve()) usleep(100);
        printf("P%d (team %d): entering section, clock %d\n", me, role, qclock[me]);
        usleep(300);
        printf("P%d (team %d): leaving section\n", me, role);
        queued[me] = 0;
        for (int r = 0; r < n; r++)
            if (r != me) say("REL", r);
    }
    /* everyone's requests answered: a barrier of our own, serving while we wait */
    MPI_Request bar;
    int passed = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &bar);
    while (!passed) {
        MPI_Test(&bar, &passed, MPI_STATUS_IGNORE);
        if (!passed && !serve()) usleep(100);
    }
    int total = 0;
    MPI_Reduce(&jobs, &total, 1, MPI_INT, MPI_SUM, 0, team);
    if (team_rank == 0) printf("P%d: team %d did %d jobs\n", me, role, total);
    MPI_Comm_free(&team);
    MPI_Finalize();
    return 0;
}
