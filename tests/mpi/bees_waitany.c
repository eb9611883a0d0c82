/* Mason bees, one MPI rank per bee, single-threaded.
 * Every other bee has one pre-posted MPI_Irecv; the bee waits with MPI_Waitany
 * (-DUSE_TESTSOME: polls with MPI_Testsome; -DUSE_PERSISTENT: MPI_Recv_init/MPI_Start).
 * Messages are int[4]: {type, Lamport clock, sender, extra}.
 * Reeds: Lamport-style queue, a bee's reed from its rank among all reed requests.
 * Flowers: Ricart-Agrawala with K places (needs alive others - (K-1) ACKs).
 * usage: mpirun -np P ./bees [reeds flowers eggs cocoons]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXB 64
enum { REQREED = 1, ACKREED, REQFLOWER, ACKFLOWER, RELEASE };
enum { WAIT_REED, WAIT_FLOWER, DEAD, RETIRED };

static int me, P, T, K, E, C;
static int lamport, state;
static int reed_ts, reed, position;                /* my reed request, my reed, my place on it */
static int req_ts[MAXB], have_req[MAXB], ackreed[MAXB], gone[MAXB];
static int flower_ts, ackflower[MAXB], deferred[MAXB], deferred_ts[MAXB];
static int eggs;

static void send_to(int to, int type, int ts, int extra)
{
    int m[4] = {type, ts, me, extra};
    MPI_Send(m, 4, MPI_INT, to, 0, MPI_COMM_WORLD);
}

static void broadcast(int type, int extra)
{
    int ts = ++lamport;
    for (int j = 0; j < P; j++)   /* a RELEASE to the gone too: each waits to hear from all */
        if (j != me && (!gone[j] || type == RELEASE))
            send_to(j, type, ts, extra);
    if (type == REQREED) reed_ts = ts;
    if (type == REQFLOWER) flower_ts = ts;
}

static int before(int ts_a, int a, int ts_b, int b) { return ts_a < ts_b || (ts_a == ts_b && a < b); }

/* how many known reed requests come before bee b's */
static int rank_of(int b)
{
    int r = 0;
    for (int j = 0; j < P; j++)
        if (j != b && have_req[j] && before(req_ts[j], j, req_ts[b], b)) r++;
    return r;
}

static void ask_flower(void)
{
    memset(ackflower, 0, sizeof ackflower);
    state = WAIT_FLOWER;
    broadcast(REQFLOWER, 0);
}

static int progress(void)
{
    if (state == WAIT_REED && reed == 0) {
        for (int j = 0; j < P; j++)
            if (j != me && !gone[j] && !ackreed[j]) return 0;
        int r = rank_of(me);
        if (r >= (C / E) * T) {
            state = RETIRED;
            printf("bee %d: retires (rank %d, would get reed %d)\n", me + 1, r, r % T + 1);
            broadcast(RELEASE, 0);
            return 1;
        }
#ifndef BROKEN_REED_ORDER
        for (int j = 0; j < P; j++)   /* an earlier bee of the same reed still on it? */
            if (j != me && have_req[j] && !gone[j] && before(req_ts[j], j, reed_ts, me) &&
                rank_of(j) % T == r % T)
                return 0;
#endif
        reed = r % T + 1;
        position = r / T;
        printf("bee %d: reed %d taken (ts %d)\n", me + 1, reed, reed_ts);
        ask_flower();
        return 1;
    }
    if (state == WAIT_FLOWER) {
        int alive = 0, acks = 0;
        for (int j = 0; j < P; j++)
            if (j != me && !gone[j]) {
                alive++;
                acks += ackflower[j];
            }
#ifdef BROKEN_FLOWER_COUNT
        if (acks < alive - K) return 0;
#else
        if (acks < alive - (K - 1)) return 0;
#endif
        printf("bee %d: on flower\n", me + 1);
        usleep(200);                                   /* collecting nectar */
        printf("bee %d: off flower\n", me + 1);
        eggs++;
        printf("bee %d: egg %d laid in reed %d (reed has %d)\n", me + 1, eggs, reed, position * E + eggs);
        state = -1;                                    /* not waiting: answer the deferred */
        for (int j = 0; j < P; j++)
            if (deferred[j]) {
                deferred[j] = 0;
                send_to(j, ACKFLOWER, ++lamport, deferred_ts[j]);
            }
        if (eggs == E) {
            printf("bee %d: leaves reed %d\n", me + 1, reed);
            printf("bee %d: dead after %d eggs\n", me + 1, eggs);
            state = DEAD;
            broadcast(RELEASE, reed);
        } else {
            ask_flower();
        }
        return 1;
    }
    return 0;
}

static void handle(const int *m)
{
    int type = m[0], ts = m[1], j = m[2], extra = m[3];
    if (ts > lamport) lamport = ts;
    lamport++;
    if (state == DEAD || state == RETIRED) {
        if (type == RELEASE) gone[j] = 1;
        return;
    }
    switch (type) {
    case REQREED:
        req_ts[j] = ts;
        have_req[j] = 1;
        send_to(j, ACKREED, ++lamport, ts);
        break;
    case ACKREED:
        if (extra == reed_ts) ackreed[j] = 1;
        break;
    case REQFLOWER:
        if (state == WAIT_FLOWER && before(flower_ts, me, ts, j)) {
            deferred[j] = 1;
            deferred_ts[j] = ts;
        } else {
            send_to(j, ACKFLOWER, ++lamport, ts);
        }
        break;
    case ACKFLOWER:
        if (state == WAIT_FLOWER && extra == flower_ts) ackflower[j] = 1;
        break;
    case RELEASE:
        gone[j] = 1;
        deferred[j] = 0;
        break;
    default:
        fprintf(stderr, "bee %d: unknown message %d from %d\n", me + 1, type, j + 1);
        MPI_Abort(MPI_COMM_WORLD, 4);
    }
    while (progress())
        ;
}

static int all_done(void)
{
    if (state != DEAD && state != RETIRED) return 0;
    for (int j = 0; j < P; j++)
        if (j != me && !gone[j]) return 0;
    return 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    T = argc > 1 ? atoi(argv[1]) : 3;
    K = argc > 2 ? atoi(argv[2]) : 3;
    E = argc > 3 ? atoi(argv[3]) : 5;
    C = argc > 4 ? atoi(argv[4]) : 15;
    if (P > MAXB || T < 1 || K < 1 || E < 1 || C % E != 0) {
        if (me == 0) fprintf(stderr, "bees: bad parameters (reeds %d flowers %d eggs %d cocoons %d)\n", T, K, E, C);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    unsigned seed = 7u + (unsigned)me;
    lamport = rand_r(&seed) % (100 * P);

    int n = 0, peer[MAXB], buf[MAXB][4];
    MPI_Request rq[MAXB];
    for (int j = 0; j < P; j++)
        if (j != me) {
            peer[n] = j;
#ifdef USE_PERSISTENT
            MPI_Recv_init(buf[n], 4, MPI_INT, j, 0, MPI_COMM_WORLD, &rq[n]);
#else
            MPI_Irecv(buf[n], 4, MPI_INT, j, 0, MPI_COMM_WORLD, &rq[n]);
#endif
            n++;
        }
#ifdef USE_PERSISTENT
    MPI_Startall(n, rq);
#endif
    state = WAIT_REED;
    broadcast(REQREED, 0);
    have_req[me] = 1;
    req_ts[me] = reed_ts;
    while (progress())
        ;

    while (!all_done()) {
#ifdef USE_TESTSOME
        int count, idx[MAXB];
        MPI_Status sts[MAXB];
        MPI_Testsome(n, rq, &count, idx, sts);
        if (count == MPI_UNDEFINED) break;
        if (count == 0) {
            usleep(100);
            continue;
        }
#else
        int count = 1, idx[1];
        MPI_Status st;
        MPI_Waitany(n, rq, &idx[0], &st);
        if (idx[0] == MPI_UNDEFINED) break;
#endif
        for (int c = 0; c < count; c++) {
            int i = idx[c];
            int m[4];
            memcpy(m, buf[i], sizeof m);
            if (m[0] != RELEASE) {   /* a RELEASE is a bee's last message */
#ifdef USE_PERSISTENT
                MPI_Start(&rq[i]);
#else
                MPI_Irecv(buf[i], 4, MPI_INT, peer[i], 0, MPI_COMM_WORLD, &rq[i]);
#endif
            }
            handle(m);
        }
    }
#ifdef USE_PERSISTENT
    for (int i = 0; i < n; i++) MPI_Request_free(&rq[i]);
#endif
    MPI_Finalize();
    return 0;
}
