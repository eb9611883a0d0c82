// Lamport's mutual exclusion, as a student writes it in C++17: a std::thread listener blocked in
// MPI_Recv(MPI_ANY_SOURCE, MPI_ANY_TAG), the request queue a std::set of (clock, rank) under a
// std::mutex, the main thread on a std::condition_variable; the message a struct sent as a type
// made by MPI_Type_create_struct (displacements by MPI_Aint_diff, the extent checked by
// MPI_Type_get_extent); a ring of MPI_Sendrecv at the start to check everyone is there; each
// rank's clock starts from rand_r seeded by its rank.
// Argument: entries per rank (default 2). -DBROKEN_NO_CLOCK_UPDATE: the listener forgets to move
// its clock past a received stamp, so a later request may be stamped before one it has seen.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

enum Kind { REQUEST = 1, REPLY, RELEASE, DONE };
struct Msg {
    int kind;
    int clock;
    int from;
};

static MPI_Datatype msg_type;
static int me, n;
static std::mutex mtx;
static std::condition_variable cv;
static int lamport = 0, replies = 0;
static std::set<std::pair<int, int>> queue_;

static void send(int to, Kind kind, int clock) {
    Msg m{kind, clock, me};
    MPI_Send(&m, 1, msg_type, to, kind, MPI_COMM_WORLD);
}

static void observe(int stamp) {
#ifndef BROKEN_NO_CLOCK_UPDATE
    lamport = std::max(lamport, stamp);
#else
    (void)stamp;
#endif
    lamport++;
}

static void listener() {
    int done = 0;
    while (done < n) {
        Msg m;
        MPI_Status st;
        MPI_Recv(&m, 1, msg_type, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        std::unique_lock<std::mutex> lk(mtx);
        switch (m.kind) {
        case REQUEST: {
            observe(m.clock);
            queue_.insert({m.clock, m.from});
            int c = ++lamport;
            lk.unlock();
            send(m.from, REPLY, c);
            break;
        }
        case REPLY:
            observe(m.clock);
            replies++;
            cv.notify_all();
            break;
        case RELEASE:
            observe(m.clock);
            for (auto it = queue_.begin(); it != queue_.end(); ++it)
                if (it->second == m.from) {
                    queue_.erase(it);
                    break;
                }
            cv.notify_all();
            break;
        case DONE:
            done++;
            break;
        }
    }
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        std::fprintf(stderr, "need MPI_THREAD_MULTIPLE\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int entries = argc > 1 ? std::atoi(argv[1]) : 2;
    unsigned seed = 7u * (unsigned)me + 1u;
    lamport = (int)(rand_r(&seed) % 20);

    Msg probe;
    MPI_Aint base, addr[3];
    MPI_Get_address(&probe, &base);
    MPI_Get_address(&probe.kind, &addr[0]);
    MPI_Get_address(&probe.clock, &addr[1]);
    MPI_Get_address(&probe.from, &addr[2]);
    int lens[3] = {1, 1, 1};
    MPI_Aint disps[3];
    for (int i = 0; i < 3; i++) disps[i] = MPI_Aint_diff(addr[i], base);
    MPI_Datatype types[3] = {MPI_INT, MPI_INT, MPI_INT};
    MPI_Type_create_struct(3, lens, disps, types, &msg_type);
    MPI_Type_commit(&msg_type);
    MPI_Aint lb, extent;
    MPI_Type_get_extent(msg_type, &lb, &extent);
    if (extent != (MPI_Aint)sizeof(Msg)) MPI_Abort(MPI_COMM_WORLD, 2);

    int left = (me + n - 1) % n, right = (me + 1) % n, hello = -1;
    MPI_Sendrecv(&me, 1, MPI_INT, right, 99, &hello, 1, MPI_INT, left, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (hello != left) MPI_Abort(MPI_COMM_WORLD, 3);

    std::thread t(listener);
    for (int e = 0; e < entries; e++) {
        std::pair<int, int> mine;
        {
            std::lock_guard<std::mutex> lk(mtx);
            mine = {++lamport, me};
            queue_.insert(mine);
            replies = 0;
        }
        for (int i = 0; i < n; i++)
            if (i != me) send(i, REQUEST, mine.first);
        {
            std::unique_lock<std::mutex> lk(mtx);
            cv.wait(lk, [&] { return replies == n - 1 && *queue_.begin() == mine; });
            std::printf("P%d in CS (ts %d)\n", me, mine.first);
        }
        usleep(500);
        int c;
        {
            std::lock_guard<std::mutex> lk(mtx);
            std::printf("P%d out of CS\n", me);
            queue_.erase(mine);
            c = ++lamport;
        }
        for (int i = 0; i < n; i++)
            if (i != me) send(i, RELEASE, c);
    }
    for (int i = 0; i < n; i++) send(i, DONE, 0);
    t.join();
    MPI_Type_free(&msg_type);
    MPI_Finalize();
    return 0;
}
