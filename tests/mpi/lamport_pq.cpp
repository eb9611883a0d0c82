// Lamport's mutual exclusion with ACK counting, C++17, as a student hands it in: a std::thread
// receiver under MPI_THREAD_MULTIPLE polling MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG) between
// nanosleep()s, a std::priority_queue of (clock, rank) requests rebuilt on RELEASE, a struct sent
// as an MPI_Type_create_struct type, std::cout with "\n" and never flushed. Argument: entries
// per rank (default 1). Clocks start at rand() % 100, seeded by rank. A rank enters with an ACK
// from every other rank and its own request at the head of its queue.
// -DBROKEN_ACKS: enters one ACK short. -DBROKEN_NO_CLOCK_UPDATE: a receive only ticks the clock,
// never takes the sender's, so a later request may carry an earlier stamp; its two ranks inside
// at once need a REQUEST answered while one sleeps in its section: that sleep is a pause the
// director wakes (docs/mpi.md), so other ranks move meanwhile and the overlap is found.
#include <mpi.h>
#include <time.h>

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

enum Kind { REQUEST = 1, ACK = 2, RELEASE = 3, DONE = 4 };

struct Msg {
    int kind;
    int clock;
    int from;
};

struct Req {
    int clock, rank;
    // priority_queue keeps the greatest on top: the earliest (clock, rank) must be "greatest"
    bool operator<(const Req &o) const {
        if (clock != o.clock) return clock > o.clock;
        return rank > o.rank;
    }
};

static int me, nprocs;
static MPI_Datatype MSG_T;
static std::mutex mtx;
static std::condition_variable cv;
static int lamport = 0;
static int acks = 0;
static int dones = 0;
static std::priority_queue<Req> waiting;

static void send_msg(int to, int kind, int clock) {
    Msg m{kind, clock, me};
    MPI_Send(&m, 1, MSG_T, to, kind, MPI_COMM_WORLD);
}

static void drop_request(int rank) {
    std::priority_queue<Req> rest;
    while (!waiting.empty()) {
        if (waiting.top().rank != rank) rest.push(waiting.top());
        waiting.pop();
    }
    waiting = rest;
}

static void receiver() {
    for (;;) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (!flag) {
            struct timespec ts = {0, 500000};
            nanosleep(&ts, nullptr);
            continue;
        }
        Msg m;
        MPI_Recv(&m, 1, MSG_T, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        std::unique_lock<std::mutex> lk(mtx);
#ifdef BROKEN_NO_CLOCK_UPDATE
        lamport++;
#else
        lamport = std::max(lamport, m.clock) + 1;
#endif
        switch (m.kind) {
        case REQUEST:
            waiting.push(Req{m.clock, m.from});
            lamport++;
            send_msg(m.from, ACK, lamport);
            break;
        case ACK:
            acks++;
            break;
        case RELEASE:
            drop_request(m.from);
            break;
        case DONE:
            dones++;
            break;
        }
        cv.notify_all();
        if (dones == nprocs) return;
    }
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        std::cerr << "need MPI_THREAD_MULTIPLE\n";
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int entries = argc > 1 ? std::atoi(argv[1]) : 1;
    std::srand(me + 1); // random first priorities, as the bees' statement asks; seeded by rank
    lamport = std::rand() % 100;

    int lens[3] = {1, 1, 1};
    MPI_Aint disp[3] = {offsetof(Msg, kind), offsetof(Msg, clock), offsetof(Msg, from)};
    MPI_Datatype types[3] = {MPI_INT, MPI_INT, MPI_INT};
    MPI_Type_create_struct(3, lens, disp, types, &MSG_T);
    MPI_Type_commit(&MSG_T);

    std::thread rx(receiver);
#ifdef BROKEN_ACKS
    const int needed = nprocs - 2;
#else
    const int needed = nprocs - 1;
#endif
    for (int e = 0; e < entries; e++) {
        int stamp;
        {
            std::unique_lock<std::mutex> lk(mtx);
            stamp = ++lamport;
            waiting.push(Req{stamp, me});
            acks = 0;
            for (int j = 0; j < nprocs; j++)
                if (j != me) send_msg(j, REQUEST, stamp);
            cv.wait(lk, [&] { return acks >= needed && waiting.top().rank == me; });
        }
        std::cout << "Process " << me << " [" << stamp << "]: entering section\n";
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        std::cout << "Process " << me << ": leaving section\n";
        {
            std::unique_lock<std::mutex> lk(mtx);
            drop_request(me);
            lamport++;
            for (int j = 0; j < nprocs; j++)
                if (j != me) send_msg(j, RELEASE, lamport);
        }
    }
    for (int j = 0; j < nprocs; j++) send_msg(j, DONE, 0);
    rx.join();
    MPI_Type_free(&MSG_T);
    MPI_Finalize();
    return 0;
}
