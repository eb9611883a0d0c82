// Lamport's mutual exclusion (request queue + REPLY + RELEASE) as written outside mutexlab,
// C++17 + MPI: a struct sent as MPI_BYTE with sizeof (its tail partly unset), std::cout with
// '\n' and no flush, std::cerr with std::endl, a listener std::thread on an MPI_Comm_dup of the
// world ending on a BYE from every rank, itself too; the main thread busy-waits with
// std::this_thread::yield; MPI_Gather of the message counts at the end. Broken: BROKEN_TIE (a
// request is first unless one is strictly earlier: ties let both in), BROKEN_NO_RELEASE (no
// RELEASE), BROKEN_ABORT (rank 1 sends a message of an unknown kind, whose receiver MPI_Aborts).
// Usage: lamport_bytes [rounds]; lines "[1] ENTER CS at 3", "[1] EXIT CS".
#include <mpi.h>
#include <atomic>
#include <chrono>
#include <iostream>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

enum Kind { REQUEST = 1, REPLY = 2, RELEASE = 3, BYE = 4 };
struct Msg {
    int kind;
    int clock;
    int from;
    char note[6];  // padding-ish tail, left partly unset
};

static int me, n;
static MPI_Comm comm;
static std::mutex mu;
static int lclock = 0;
static std::set<std::pair<int, int>> queue_;  // (clock, rank)
static std::vector<int> last_seen;            // last clock seen from each rank
static std::atomic<int> replies{0};
static int sent = 0, received = 0;

static void post(int to, int kind, int clock) {
    Msg m;
    m.kind = kind;
    m.clock = clock;
    m.from = me;
    m.note[0] = 'm';
    MPI_Send(&m, sizeof m, MPI_BYTE, to, 0, comm);
    sent++;
}

static void listener() {
    int byes = 0;
    while (byes < n) {  // every other rank's BYE and our own
        Msg m;
        MPI_Status st;
        MPI_Recv(&m, sizeof m, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st);
        std::lock_guard<std::mutex> g(mu);
        received++;
        lclock = std::max(lclock, m.clock) + 1;
        last_seen[st.MPI_SOURCE] = m.clock;
        switch (m.kind) {
        case REQUEST:
            queue_.insert({m.clock, st.MPI_SOURCE});
            post(st.MPI_SOURCE, REPLY, ++lclock);
            break;
        case REPLY:
            replies++;
            break;
        case RELEASE:
            for (auto it = queue_.begin(); it != queue_.end(); ++it)
                if (it->second == st.MPI_SOURCE) { queue_.erase(it); break; }
            break;
        case BYE:
            byes++;
            break;
        default:
            std::cerr << "rank " << me << ": unknown message " << m.kind << std::endl;
            MPI_Abort(MPI_COMM_WORLD, 4);
        }
    }
}

static bool may_enter(std::pair<int, int> mine) {
    std::lock_guard<std::mutex> g(mu);
    if (replies.load() < n - 1) return false;
#ifdef BROKEN_TIE
    for (auto &q : queue_)  // ties: "mine is as early, so mine"
        if (q.first < mine.first) return false;
#else
    if (queue_.empty() || *queue_.begin() != mine) return false;
#endif
    return true;
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int rounds = argc > 1 ? std::atoi(argv[1]) : 1;
    last_seen.assign(n, 0);
    std::thread t(listener);
    for (int r = 0; r < rounds; r++) {
        std::pair<int, int> mine;
        {
            std::lock_guard<std::mutex> g(mu);
            mine = {++lclock, me};
            queue_.insert(mine);
            replies = 0;
            for (int i = 0; i < n; i++)
                if (i != me) post(i, REQUEST, mine.first);
        }
        while (!may_enter(mine)) std::this_thread::yield();
        std::cout << "[" << me << "] ENTER CS at " << mine.first << '\n';
        std::this_thread::sleep_for(std::chrono::milliseconds(3));
        std::cout << "[" << me << "] EXIT CS" << '\n';
        {
            std::lock_guard<std::mutex> g(mu);
            queue_.erase(mine);
#ifdef BROKEN_ABORT
            if (r == 0 && me == 1) post((me + 1) % n, 7, ++lclock);
#endif
#ifndef BROKEN_NO_RELEASE
            ++lclock;
            for (int i = 0; i < n; i++)
                if (i != me) post(i, RELEASE, lclock);
#endif
        }
    }
    for (int i = 0; i < n; i++) post(i, BYE, 0);
    t.join();
    int stats[2] = {sent, received};
    std::vector<int> all(2 * n);
    MPI_Gather(stats, 2, MPI_INT, all.data(), 2, MPI_INT, 0, comm);
    if (me == 0) {
        for (int i = 0; i < n; i++)
            std::cout << "rank " << i << " sent " << all[2 * i] << " received " << all[2 * i + 1] << '\n';
    }
    MPI_Comm_free(&comm);
    MPI_Finalize();
}
