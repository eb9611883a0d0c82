/* K-mutual exclusion as written outside mutexlab: Ricart-Agrawala with K places (enter with N-K
 * ACKs, each ACK naming the request it answers), a C struct sent through MPI_Type_create_struct,
 * one thread polling a pre-posted MPI_Irecv with MPI_Test and napping between polls (select;
 * SLEEP_PSELECT, SLEEP_PPOLL, SLEEP_EPOLL; SLEEP_WTIME or a third argument "wtime": sched_yield
 * until an MPI_Wtime deadline),
 * MPI_Cancel of the last receive, MPI_Comm_split by parity and MPI_Allreduce at the end. Broken:
 * BROKEN_ONLY_INSIDE (defers only while inside), BROKEN_COUNT (one ACK too few), BROKEN_STALE_ACKS
 * (a late ACK of the previous request counted for the next). Usage: kmutex_struct K [entries [wtime]];
 * lines "rank 1: got place (acks 2, clock 3)", "rank 1: left place". */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <sched.h>
#include <sys/select.h>
#include <poll.h>
#ifdef SLEEP_EPOLL
#include <sys/epoll.h>
#endif
#include <signal.h>

typedef struct { int type; int clock; int answers; double sent_at; char who[8]; } msg_t;
enum { REQ = 10, ACK = 11, END = 12 };

static MPI_Datatype MSG;
static int rank, size, K, clock_ = 0, want = 0, inside = 0, acks = 0, my_clock = 0;
static int *held_back;
static MPI_Request rreq;
static msg_t in;

#ifdef SLEEP_WTIME
static int wtime_naps = 1;
#else
static int wtime_naps = 0;
#endif

static void nap(void) {
#if defined(SLEEP_PSELECT)
    struct timespec ts = {0, 500000};
    pselect(0, NULL, NULL, NULL, &ts, NULL);
#elif defined(SLEEP_PPOLL)
    struct timespec ts = {0, 500000};
    ppoll(NULL, 0, &ts, NULL);
#elif defined(SLEEP_EPOLL)
    static int ep = -1;
    struct epoll_event ev;
    if (ep < 0) ep = epoll_create1(0);
    epoll_wait(ep, &ev, 1, 1);
#else
    if (wtime_naps) {
        double t0 = MPI_Wtime();
        while (MPI_Wtime() - t0 < 0.0005) sched_yield();
    } else {
        struct timeval tv = {0, 500};
        select(0, NULL, NULL, NULL, &tv);
    }
#endif
}

static void send_to(int to, int type, int answers) {
    msg_t m;
    memset(&m, 0, sizeof m);
    m.type = type;
    m.clock = type == REQ ? my_clock : clock_;
    m.answers = answers;
    m.sent_at = MPI_Wtime();
    snprintf(m.who, sizeof m.who, "r%d", rank);
    MPI_Send(&m, 1, MSG, to, type, MPI_COMM_WORLD);
}

static int ends = 0;
static void handle(const msg_t *m, int from) {
    if (m->clock > clock_) clock_ = m->clock;
    clock_++;
    if (m->type == REQ) {
        int mine_first = want && (my_clock < m->clock || (my_clock == m->clock && rank < from));
#ifdef BROKEN_ONLY_INSIDE
        mine_first = 0;
#endif
        if (inside || mine_first) held_back[from] = 1;
        else send_to(from, ACK, m->clock);
        if (held_back[from]) held_back[from] = m->clock;
    } else if (m->type == ACK) {
#ifndef BROKEN_STALE_ACKS
        if (m->answers == my_clock)
#endif
            acks++;
    } else {
        ends++;
    }
}

static void progress(void) {
    int flag;
    MPI_Status st;
    MPI_Test(&rreq, &flag, &st);
    if (flag) {
        handle(&in, st.MPI_SOURCE);
        MPI_Irecv(&in, 1, MSG, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rreq);
    } else {
        nap();
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    K = argc > 1 ? atoi(argv[1]) : 2;
    int entries = argc > 2 ? atoi(argv[2]) : 1;
    if (argc > 3 && strcmp(argv[3], "wtime") == 0) wtime_naps = 1;
    int lens[5] = {1, 1, 1, 1, 8};
    MPI_Aint disp[5] = {offsetof(msg_t, type), offsetof(msg_t, clock), offsetof(msg_t, answers), offsetof(msg_t, sent_at), offsetof(msg_t, who)};
    MPI_Datatype types[5] = {MPI_INT, MPI_INT, MPI_INT, MPI_DOUBLE, MPI_CHAR};
    MPI_Type_create_struct(5, lens, disp, types, &MSG);
    MPI_Type_commit(&MSG);
    held_back = calloc(size, sizeof(int));
    MPI_Irecv(&in, 1, MSG, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rreq);
    int need = size - K;
#ifdef BROKEN_COUNT
    need = size - K - 1;
#endif
    for (int e = 0; e < entries; e++) {
        want = 1;
        acks = 0;
        my_clock = ++clock_;
        for (int i = 0; i < size; i++) if (i != rank) send_to(i, REQ, 0);
        while (acks < need) progress();
        want = 0;
        inside = 1;
        printf("rank %d: got place (acks %d, clock %d)\n", rank, acks, my_clock);
        for (int i = 0; i < 3; i++) progress();   /* keeps answering while inside */
        printf("rank %d: left place\n", rank);
        inside = 0;
        for (int i = 0; i < size; i++)
            if (held_back[i]) { send_to(i, ACK, held_back[i]); held_back[i] = 0; }
    }
    for (int i = 0; i < size; i++) if (i != rank) send_to(i, END, 0);
    while (ends < size - 1) progress();
    MPI_Cancel(&rreq);
    MPI_Wait(&rreq, MPI_STATUS_IGNORE);
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int mine = entries, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, half);
    int hr; MPI_Comm_rank(half, &hr);
    if (hr == 0) printf("group %d: %d entries\n", rank % 2, sum);
    MPI_Comm_free(&half);
    MPI_Type_free(&MSG);
    free(held_back);
    MPI_Finalize();
    return 0;
}
