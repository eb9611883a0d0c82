/* Murarki (mason bees) -- one process per bee, no threads: the main loop polls with MPI_Iprobe
 * and naps a little when nothing came in.  Reeds: one Lamport queue per reed.  Flowers:
 * Ricart-Agrawala with K places (enter with P-K permissions).  A bee that is done keeps
 * answering until every bee said BYE.
 * usage: bees_poll [reeds flowers eggs cocoons] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define T_REQ_REED 10
#define T_ACK_REED 11
#define T_REL_REED 12
#define T_REQ_FLOWER 20
#define T_ACK_FLOWER 21
#define T_BYE 30

enum { REST, WAIT_REED, ON_REED, WAIT_FLOWER, ON_FLOWER, DEAD };

typedef struct { int ts, pid, reed, extra; } msg_t; /* extra: request number / cocoons */

static int P, me, T = 3, K = 3, EGGS = 5, COCOONS = 15;
static int lclock;
static int state = REST;
static unsigned seed;

/* reeds */
typedef struct { int ts, pid; } req_t;
static req_t queue[16][64];
static int qlen[16];
static int cocoons[16];
static int my_reed = -1, reed_acks, reed_req_ts;
/* flowers */
static int fl_ts, fl_no, fl_acks;
static int deferred[64], ndeferred;
static int eggs_laid, byes;

static int before(int ts1, int p1, int ts2, int p2) {
    return ts1 < ts2 || (ts1 == ts2 && p1 < p2);
}

static void q_insert(int r, int ts, int pid) {
    int i = qlen[r]++;
    while (i > 0 && before(ts, pid, queue[r][i - 1].ts, queue[r][i - 1].pid)) {
        queue[r][i] = queue[r][i - 1];
        i--;
    }
    queue[r][i].ts = ts;
    queue[r][i].pid = pid;
}

static void q_remove(int r, int pid) {
    int j = 0;
    for (int i = 0; i < qlen[r]; i++)
        if (queue[r][i].pid != pid) queue[r][j++] = queue[r][i];
    qlen[r] = j;
}

static void post(int to, int tag, int reed, int extra) {
    msg_t m = {lclock, me, reed, extra};
    MPI_Send(&m, 4, MPI_INT, to, tag, MPI_COMM_WORLD);
}

static void to_all(int tag, int reed, int extra) {
    lclock++;
    for (int i = 0; i < P; i++)
        if (i != me) post(i, tag, reed, extra);
}

static void nap(long ns) {
    struct timespec ts = {0, ns};
    nanosleep(&ts, NULL);
}

static int pick_reed(void) {
    for (int k = 0; k < T; k++) {
        int r = (me + k) % T;
        if (cocoons[r] < COCOONS) return r;
    }
    return -1;
}

static void ask_reed(void) {
    my_reed = pick_reed();
    if (my_reed < 0) {
        printf("bee#%d (t=%d): every reed is full, I give up\n", me, lclock);
        state = DEAD;
        to_all(T_BYE, 0, 0);
        return;
    }
    to_all(T_REQ_REED, my_reed, 0);
    reed_req_ts = lclock;
    q_insert(my_reed, reed_req_ts, me);
    reed_acks = 0;
    state = WAIT_REED;
}

static void leave_reed(void) {
    printf("bee#%d (t=%d): flies off reed %d\n", me, lclock, my_reed + 1);
    q_remove(my_reed, me);
    to_all(T_REL_REED, my_reed, cocoons[my_reed]);
}

static void ask_flower(void) {
    to_all(T_REQ_FLOWER, my_reed, ++fl_no);
    fl_ts = lclock;
    fl_acks = 0;
    state = WAIT_FLOWER;
}

static void handle(MPI_Status *st) {
    msg_t m;
    MPI_Recv(&m, 4, MPI_INT, st->MPI_SOURCE, st->MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    lclock = (m.ts > lclock ? m.ts : lclock) + 1;
    switch (st->MPI_TAG) {
    case T_REQ_REED:
        q_insert(m.reed, m.ts, m.pid);
        post(m.pid, T_ACK_REED, m.reed, 0);
        break;
    case T_ACK_REED:
        if (state == WAIT_REED) reed_acks++;
        break;
    case T_REL_REED:
        q_remove(m.reed, m.pid);
        if (m.extra > cocoons[m.reed]) cocoons[m.reed] = m.extra;
        break;
    case T_REQ_FLOWER: {
        int wait = state == ON_FLOWER ||
                   #ifdef BROKEN_TIE
                   (state == WAIT_FLOWER && fl_ts < m.ts); /* equal stamps: let the other go */
#else
                   (state == WAIT_FLOWER && before(fl_ts, me, m.ts, m.pid));
#endif
        if (wait)
            deferred[ndeferred++] = m.pid * 1000 + m.extra;
        else
            post(m.pid, T_ACK_FLOWER, 0, m.extra);
        break;
    }
    case T_ACK_FLOWER:
        #ifdef BROKEN_LATE_ACK
        if (state == WAIT_FLOWER) fl_acks++;
#else
        if (state == WAIT_FLOWER && m.extra == fl_no) fl_acks++;
#endif
        break;
    case T_BYE:
        byes++;
        break;
    }
}

static void step(void) {
    if (state == WAIT_REED && reed_acks == P - 1 && qlen[my_reed] > 0 && queue[my_reed][0].pid == me) {
        state = ON_REED;
        printf("bee#%d (t=%d): lands on reed %d\n", me, lclock, my_reed + 1);
        if (cocoons[my_reed] >= COCOONS) { /* filled up meanwhile */
            leave_reed();
            ask_reed();
        }
    } else if (state == ON_REED) {
        ask_flower();
    } else if (state == WAIT_FLOWER && fl_acks >= P - K) {
        state = ON_FLOWER;
        printf("bee#%d (t=%d): sips nectar\n", me, lclock);
        usleep(100 + rand_r(&seed) % 400);
        printf("bee#%d (t=%d): done with the flower\n", me, lclock);
        lclock++;
        for (int i = 0; i < ndeferred; i++) post(deferred[i] / 1000, T_ACK_FLOWER, 0, deferred[i] % 1000);
        ndeferred = 0;
        eggs_laid++;
        cocoons[my_reed]++;
        printf("bee#%d: egg %d laid in reed %d (reed holds %d)\n", me, eggs_laid, my_reed + 1, cocoons[my_reed]);
        if (eggs_laid == EGGS) {
            leave_reed();
            printf("bee#%d: dies, %d eggs\n", me, eggs_laid);
            state = DEAD;
            to_all(T_BYE, 0, 0);
        } else if (cocoons[my_reed] >= COCOONS) {
            leave_reed();
            ask_reed();
        } else {
            state = ON_REED;
        }
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    int params[4] = {T, K, EGGS, COCOONS};
    if (me == 0 && argc > 4)
        for (int i = 0; i < 4; i++) params[i] = atoi(argv[i + 1]);
    MPI_Bcast(params, 4, MPI_INT, 0, MPI_COMM_WORLD);
    T = params[0], K = params[1], EGGS = params[2], COCOONS = params[3];
    if (K >= P) K = P; /* everybody fits */
    seed = 1234u + 77u * (unsigned)me;
    lclock = rand_r(&seed) % 50; /* random priorities, as the task wants */

    ask_reed();
    while (state != DEAD || byes < P - 1) {
        int flag;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (flag) {
            handle(&st);
            continue;
        }
        int before_state = state;
        step();
        if (state == before_state && state != ON_REED) nap(200000);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) printf("all bees finished\n");
    MPI_Finalize();
    return 0;
}
