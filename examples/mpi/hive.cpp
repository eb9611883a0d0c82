// Mason bees in C++ and MPI, written as a newcomer would from docs/mpi.md alone (docs/mpi.md#hive):
// std::thread for the listener blocked in MPI_Recv(MPI_ANY_SOURCE, MPI_ANY_TAG), std::mutex and
// std::condition_variable, MPI_Comm_dup of the world, parameters by MPI_Bcast of an
// MPI_Type_contiguous, a struct type carrying an MPI_Wtime stamp, MPI_Isend + MPI_Request_free and
// MPI_Waitall, a ring of MPI_Sendrecv, MPI_Reduce and MPI_Allreduce at the end, printf in its own
// words (examples/mpi/hive.regex reads them). Bee = rank; bee r sits on reed r mod T behind bee
// r-T, which hands the reed on with REL; flowers by Ricart-Agrawala with K places (enter on P-K
// ACKs). Every bee says BYE to all (itself too) when done; the listener ends on P BYEs.
//
//   mutexlab mpicxx -O2 -o hive examples/mpi/hive.cpp
//   mutexlab test bees --np 5 --regex-file examples/mpi/hive.regex --mpi ./hive
//   mpicxx.openmpi -O2 -o hive examples/mpi/hive.cpp && mpirun.openmpi -np 5 ./hive
//
//   -DBROKEN_COUNT   enters a flower on one ACK too few
//
// Arguments: reeds T, flowers K, eggs per bee, cocoons per reed (default 3 3 5 15, the problem's).
#include <mpi.h>
#include <unistd.h>
#include <algorithm>
#include <cstddef>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

enum Tag { REQ = 10, ACK = 11, REL = 12, BYE = 13 };

struct Msg {
    int kind;
    int clock;
    int reed;
    double sent_at;
};

static MPI_Comm world;
static MPI_Datatype MSG_T, PARAMS_T;
static int me, P, T, K, EGGS, COCOONS;

static std::mutex m;
static std::condition_variable cv;
static int lamport = 0;
static bool wanting = false;
static int my_req = 0, acks = 0;
static std::vector<int> waiting_for_me;  // deferred requests (their clock, 0 = none)
static bool released = false;
static int reed_fill = 0;  // eggs already in my reed when I got it
static int byes = 0;

static void post(int to, int tag, int clock, int reed) {
    Msg msg{tag, clock, reed, MPI_Wtime()};
    MPI_Request r;
    MPI_Isend(&msg, 1, MSG_T, to, tag, world, &r);
    MPI_Request_free(&r);
}

static void listener() {
    for (;;) {
        Msg msg;
        MPI_Status st;
        MPI_Recv(&msg, 1, MSG_T, MPI_ANY_SOURCE, MPI_ANY_TAG, world, &st);
        int n;
        MPI_Get_count(&st, MSG_T, &n);
        if (n != 1) {
            fprintf(stderr, "#%d bad message\n", me);
            MPI_Abort(world, 3);
        }
        std::unique_lock<std::mutex> lk(m);
        lamport = std::max(lamport, msg.clock) + 1;
        switch (st.MPI_TAG) {
        case REQ: {
            bool mine_first = wanting && (my_req < msg.clock || (my_req == msg.clock && me < st.MPI_SOURCE));
            if (mine_first)
                waiting_for_me[st.MPI_SOURCE] = msg.clock;
            else
                post(st.MPI_SOURCE, ACK, msg.clock, 0);
            break;
        }
        case ACK:
            if (wanting && msg.clock == my_req) acks++;
            cv.notify_all();
            break;
        case REL:
            released = true;
            reed_fill = msg.reed;
            cv.notify_all();
            break;
        case BYE:
            byes++;
            break;
        }
        if (byes == P) return;
    }
}

static void think() { usleep(1000 * (1 + rand() % 5)); }

static void visit_flower(int reed, int egg) {
    std::unique_lock<std::mutex> lk(m);
    wanting = true;
    my_req = ++lamport;
    acks = 0;
    std::vector<MPI_Request> reqs;
    std::vector<Msg> out(P);
    for (int b = 0; b < P; b++) {
        if (b == me) continue;
        out[b] = Msg{REQ, my_req, 0, MPI_Wtime()};
        reqs.emplace_back();
        MPI_Isend(&out[b], 1, MSG_T, b, REQ, world, &reqs.back());
    }
    MPI_Waitall((int)reqs.size(), reqs.data(), MPI_STATUSES_IGNORE);
#ifdef BROKEN_COUNT
    cv.wait(lk, [] { return acks >= P - K - 1; });
#else
    cv.wait(lk, [] { return acks >= P - K; });
#endif
    printf("#%d [clock %d] flower: in\n", me, lamport);
    lk.unlock();
    think();
    lk.lock();
    printf("#%d [clock %d] flower: out\n", me, lamport);
    printf("#%d egg no %d put in reed %d, reed now has %d\n", me, egg, reed, reed_fill + egg);
    wanting = false;
    for (int b = 0; b < P; b++)
        if (waiting_for_me[b]) {
            post(b, ACK, waiting_for_me[b], 0);
            waiting_for_me[b] = 0;
        }
}

int main(int argc, char **argv) {
    int got;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &got);
    if (got != MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "need MPI_THREAD_MULTIPLE\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &world);
    MPI_Comm_rank(world, &me);
    MPI_Comm_size(world, &P);
    char host[MPI_MAX_PROCESSOR_NAME];
    int hostlen;
    MPI_Get_processor_name(host, &hostlen);

    MPI_Type_contiguous(4, MPI_INT, &PARAMS_T);
    MPI_Type_commit(&PARAMS_T);
    int params[4] = {3, 3, 5, 15};
    if (me == 0)
        for (int i = 1; i < argc && i <= 4; i++) params[i - 1] = atoi(argv[i]);
    MPI_Bcast(params, 1, PARAMS_T, 0, world);
    T = params[0], K = params[1], EGGS = params[2], COCOONS = params[3];

    int blocks[4] = {1, 1, 1, 1};
    MPI_Aint disp[4] = {offsetof(Msg, kind), offsetof(Msg, clock), offsetof(Msg, reed), offsetof(Msg, sent_at)};
    MPI_Datatype types[4] = {MPI_INT, MPI_INT, MPI_INT, MPI_DOUBLE};
    MPI_Type_create_struct(4, blocks, disp, types, &MSG_T);
    MPI_Type_commit(&MSG_T);

    // say hello around the ring
    int left = (me + P - 1) % P, right = (me + 1) % P, from_left = -1;
    MPI_Sendrecv(&me, 1, MPI_INT, right, 99, &from_left, 1, MPI_INT, left, 99, world, MPI_STATUS_IGNORE);
    printf("#%d on %s, left neighbour %d\n", me, host, from_left);

    srand(me + 1);
    waiting_for_me.assign(P, 0);
    std::thread comm(listener);
    double t0 = MPI_Wtime();

    int reed = me % T, place = me / T, laid = 0;
    if (place >= COCOONS / EGGS) {
        printf("#%d no room, retiring\n", me);
    } else {
        if (place > 0) {
            std::unique_lock<std::mutex> lk(m);
            cv.wait(lk, [] { return released; });
        }
        {
            std::lock_guard<std::mutex> lk(m);
            printf("#%d [clock %d] sits in reed %d\n", me, lamport, reed + 1);
        }
        for (int e = 1; e <= EGGS; e++) {
            think();
            visit_flower(reed + 1, e);
            laid = e;
        }
        {
            std::lock_guard<std::mutex> lk(m);
            printf("#%d [clock %d] flies off reed %d\n", me, lamport, reed + 1);
            if (me + T < P && place + 1 < COCOONS / EGGS) post(me + T, REL, ++lamport, reed_fill + EGGS);
            printf("#%d dead after %d eggs (%.3f s)\n", me, laid, MPI_Wtime() - t0);
        }
    }
    for (int b = 0; b < P; b++) post(b, BYE, 0, 0);
    comm.join();

    int total = 0, latest = 0;
    MPI_Reduce(&laid, &total, 1, MPI_INT, MPI_SUM, 0, world);
    MPI_Allreduce(&lamport, &latest, 1, MPI_INT, MPI_MAX, world);
    if (me == 0) printf("colony laid %d eggs, last clock %d\n", total, latest);
    MPI_Barrier(world);
    MPI_Type_free(&MSG_T);
    MPI_Type_free(&PARAMS_T);
    MPI_Comm_free(&world);
    MPI_Finalize();
    return 0;
}
