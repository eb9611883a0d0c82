// Mason bees, "hive keeper" style: rank 0 runs a keeper thread that hands out reeds and
// flowers; every rank (rank 0 too) is a bee whose helper thread receives with
// MPI_Probe(ANY_SOURCE, ANY_TAG) and hands grants to the bee through a mailbox.
// Usage: hivekeeper [reeds flowers eggs cocoons]
// -DUNSYNCED: std::ios_base::sync_with_stdio(false), lines ended by "\n" (std::cout buffers alone)
// -DBROKEN_FLOWERS: the keeper grants a flower without counting; -DBROKEN_FORGET: a released
// flower is not handed to the next bee waiting (a deadlock); -DYIELD: a bee waits for its grant
// spinning on std::this_thread::yield() instead of a condition variable
#include <mpi.h>
#include <condition_variable>
#include <deque>
#include <iostream>
#include <iomanip>
#include <mutex>
#include <thread>
#include <vector>
#include <unistd.h>

enum Tag { REQ_REED = 10, REQ_FLOWER, REL_FLOWER, REL_REED, BYE, GRANT_REED, GRANT_FLOWER, NOROOM, STOP };

static int rank_, size_;
static int T = 3, K = 3, EGGS = 5, COCOONS = 15;
static std::mutex mx;
static std::condition_variable cv;
static long lamport = 0;                 // kept by hand
static std::deque<std::pair<int, int>> mailbox;  // (tag, value)

static long tick(long seen = 0) {
    std::lock_guard<std::mutex> g(mx);
    lamport = std::max(lamport, seen) + 1;
    return lamport;
}

static void post(int to, int tag, int value) {
    long msg[2];
    msg[0] = tick();
    msg[1] = value;
    MPI_Request rq;
    MPI_Isend(msg, 2, MPI_LONG, to, tag, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
}

// the keeper's books (rank 0's helper thread only)
struct Keeper {
    std::vector<int> assigned, occupied;  // bees given each reed; who sits there (-1: nobody)
    int flowers_busy = 0, byes = 0;
    std::deque<int> want_reed, want_flower;
    int slots() const { return COCOONS / EGGS; }
    void try_reeds() {
        while (!want_reed.empty()) {
            bool any_room = false;
            int pick = -1;
            for (int r = 0; r < T; r++) {
                if (assigned[r] < slots()) {
                    any_room = true;
                    if (occupied[r] < 0) { pick = r; break; }
                }
            }
            int bee = want_reed.front();
            if (!any_room) { want_reed.pop_front(); post(bee, NOROOM, 0); continue; }
            if (pick < 0) return;
            want_reed.pop_front();
            assigned[pick]++;
            occupied[pick] = bee;
            post(bee, GRANT_REED, pick + 1);
        }
    }
    void try_flowers() {
#ifdef BROKEN_FLOWERS
        while (!want_flower.empty()) {
#else
        while (!want_flower.empty() && flowers_busy < K) {
#endif
            flowers_busy++;
            int bee = want_flower.front();
            want_flower.pop_front();
            post(bee, GRANT_FLOWER, 0);
        }
    }
};

static void helper() {
    Keeper k;
    k.assigned.assign(T, 0);
    k.occupied.assign(T, -1);
    for (;;) {
        MPI_Status st;
        MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        long msg[2];
        MPI_Recv(msg, 2, MPI_LONG, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        tick(msg[0]);
        switch (st.MPI_TAG) {
        case REQ_REED: k.want_reed.push_back(st.MPI_SOURCE); k.try_reeds(); break;
        case REL_REED: k.occupied[msg[1] - 1] = -1; k.try_reeds(); break;
        case REQ_FLOWER: k.want_flower.push_back(st.MPI_SOURCE); k.try_flowers(); break;
#ifdef BROKEN_FORGET
        case REL_FLOWER: k.flowers_busy--; break;
#else
        case REL_FLOWER: k.flowers_busy--; k.try_flowers(); break;
#endif
        case BYE:
            if (++k.byes == size_)
                for (int r = 0; r < size_; r++) post(r, STOP, 0);
            break;
        case STOP: return;
        default: {
            std::lock_guard<std::mutex> g(mx);
            mailbox.emplace_back(st.MPI_TAG, (int)msg[1]);
        }
            cv.notify_all();
        }
    }
}

static std::pair<int, int> await() {
#ifdef YIELD
    for (;;) {  // a bee that spins until its helper thread has posted
        {
            std::lock_guard<std::mutex> g(mx);
            if (!mailbox.empty()) break;
        }
        std::this_thread::yield();
    }
    std::unique_lock<std::mutex> g(mx);
#else
    std::unique_lock<std::mutex> g(mx);
    cv.wait(g, [] { return !mailbox.empty(); });
#endif
    auto m = mailbox.front();
    mailbox.pop_front();
    return m;
}

#ifdef UNSYNCED
#define NL "\n"
#else
#define NL std::endl
#endif

static std::ostream &say() {
    return std::cout << "bee#" << std::setw(2) << std::setfill('0') << rank_ + 1 << " @" << std::setfill(' ')
                     << std::setw(4) << lamport << " | ";
}

int main(int argc, char **argv) {
#ifdef UNSYNCED
    std::ios_base::sync_with_stdio(false);
#endif
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) { std::cerr << "no MPI_THREAD_MULTIPLE\n"; MPI_Abort(MPI_COMM_WORLD, 3); }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    if (argc == 5) { T = atoi(argv[1]); K = atoi(argv[2]); EGGS = atoi(argv[3]); COCOONS = atoi(argv[4]); }
    srand(rank_ + 1);
    lamport = rand() % 5;
    MPI_Barrier(MPI_COMM_WORLD);
    std::thread h(helper);

    post(0, REQ_REED, 0);
    auto got = await();
    if (got.first == NOROOM) {
        say() << "no free reed ever again -> retired" << NL;
    } else {
        int reed = got.second;
        say() << "IN reed[" << reed << "]" << NL;
        for (int e = 1; e <= EGGS; e++) {
            post(0, REQ_FLOWER, 0);
            await();
            say() << "IN flower" << NL;
            usleep(1000 * (rand() % 3));
            say() << "OUT flower" << NL;
            post(0, REL_FLOWER, 0);
            say() << "egg " << e << " -> reed[" << reed << "]" << NL;
        }
        say() << "OUT reed[" << reed << "]" << NL;
        post(0, REL_REED, reed);
        say() << "died, " << EGGS << " eggs laid" << NL;
    }
    post(0, BYE, 0);
    h.join();
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
