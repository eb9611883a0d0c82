/* Dining philosophers, one MPI rank each, no threads: Ricart-Agrawala between neighbours, one
 * MPI_Irecv kept posted per neighbour (tag = the fork shared with it) and polled with MPI_Testsome
 * between sched_yield()s, a MPI_Sendrecv round the table to say hello, lines stamped with
 * MPI_Wtime. usage: philo_testsome [meals]
 * -DBROKEN_EARLY_RELEASE: a philosopher answers the requests it deferred before it puts its forks
 * down (releases before leaving). */
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { REQ = 1, REP = 2, DONE = 3 };

static int me, n, clk, hungry, eating, my_ts, replies, done;
static int nb[2], fork_with[2], deferred[2], in[2][2];
static MPI_Request rq[2];
static double t0;

static void say(const char *what, int fork) {
    if (fork) printf("[t=%.3f] philosopher %d %s fork %d\n", MPI_Wtime() - t0, me + 1, what, fork);
    else printf("[t=%.3f] philosopher %d %s\n", MPI_Wtime() - t0, me + 1, what);
}

static void send_to(int side, int type, int stamp) {
    int m[2] = {type, stamp};
    MPI_Send(m, 2, MPI_INT, nb[side], fork_with[side], MPI_COMM_WORLD);
}

/* Handles what arrived; never blocks. */
static void poll_once(void) {
    int count, idx[2];
    MPI_Status st[2];
    MPI_Testsome(2, rq, &count, idx, st);
    if (count == 0 || count == MPI_UNDEFINED) {
        sched_yield();
        return;
    }
    for (int k = 0; k < count; k++) {
        int side = idx[k], type = in[side][0], ts = in[side][1];
        clk = (ts > clk ? ts : clk) + 1;
        if (type == REQ) {
            int mine_first = my_ts < ts || (my_ts == ts && me < nb[side]);
            if (eating || (hungry && mine_first)) deferred[side] = 1;
            else send_to(side, REP, ++clk);
        } else if (type == REP) {
            replies++;
        } else {
            done++;
        }
        MPI_Irecv(in[side], 2, MPI_INT, nb[side], fork_with[side], MPI_COMM_WORLD, &rq[side]);
    }
}

static void answer_deferred(void) {
    for (int s = 0; s < 2; s++)
        if (deferred[s]) {
            deferred[s] = 0;
            send_to(s, REP, ++clk);
        }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int meals = argc > 1 ? atoi(argv[1]) : 1;
    t0 = MPI_Wtime();
    nb[0] = (me + n - 1) % n; /* left: shares my fork me+1 */
    nb[1] = (me + 1) % n;     /* right: shares fork (me+1)%n+1 */
    fork_with[0] = me + 1;
    fork_with[1] = (me + 1) % n + 1;

    int hello = me, from_left = -1;
    MPI_Sendrecv(&hello, 1, MPI_INT, nb[1], 0, &from_left, 1, MPI_INT, nb[0], 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (from_left != nb[0]) {
        fprintf(stderr, "seated wrong: %d\n", from_left);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int s = 0; s < 2; s++) MPI_Irecv(in[s], 2, MPI_INT, nb[s], fork_with[s], MPI_COMM_WORLD, &rq[s]);

    for (int m = 0; m < meals; m++) {
        hungry = 1;
        replies = 0;
        my_ts = ++clk;
#ifdef BROKEN_TWO_STAMPS /* each REQ ticks the clock: a neighbour compares with the later one */
        send_to(0, REQ, my_ts);
        send_to(1, REQ, ++clk);
#else
        send_to(0, REQ, my_ts);
        send_to(1, REQ, my_ts);
#endif
        while (replies < 2) poll_once();
        hungry = 0;
        eating = 1;
        say("picks up", fork_with[0]);
        say("picks up", fork_with[1]);
        say("starts its meal", 0);
        usleep(1000);
#ifdef BROKEN_EARLY_RELEASE
        eating = 0;
        answer_deferred();
#endif
        say("ends its meal", 0);
        say("puts down", fork_with[0]);
        say("puts down", fork_with[1]);
        eating = 0;
        answer_deferred();
        say("thinks", 0);
    }
    send_to(0, DONE, ++clk);
    send_to(1, DONE, ++clk);
    while (done < 2) poll_once();
    for (int s = 0; s < 2; s++) {
        MPI_Cancel(&rq[s]);
        MPI_Wait(&rq[s], MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
