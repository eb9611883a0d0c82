// The dining philosophers as a student hands them in, in C++: Chandy-Misra's forks (a fork is a
// message; a dirty fork is given up on request, a clean one kept by a hungry philosopher), a
// communication std::thread polling MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG) between
// sleep_for()s, a std::mutex and std::condition_variable between it and main, messages as a
// packed struct sent as MPI_BYTE, think times from rand() seeded by rank, the meals read from
// argv, MPI_Gather of the meals at the end, and no MPI_Finalize (the student forgot it).
// Prints "philosopher 2 picks up fork 2", "philosopher 2 starts its meal", ... as
// examples/mpi/philosophers.regex reads them.
//   -DSEED_TIME             rand() seeded by time(NULL): the fork asked for first differs per run
//   -DBROKEN_LEND           a dirty fork given up while hungry is still counted as held
//   -DBROKEN_FORGET         a request deferred while eating is never served
#include <mpi.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <thread>
#include <vector>

namespace {

enum Kind : std::uint8_t { REQUEST = 1, FORK = 2, DONE = 3 };

struct __attribute__((packed)) Msg {
    Kind kind;
    std::int32_t fork;  // 0-based fork index
};

struct Fork {
    int neighbour;
    bool held, dirty, asked, wanted_by_neighbour;
};

int me, n;
std::mutex m;
std::condition_variable cv;
Fork forks[2];  // [0] left: fork me, [1] right: fork (me+1)%n
bool hungry = false, eating = false;
int finished = 0;

void send(int to, Kind kind, int fork) {
    Msg msg{kind, fork};
    MPI_Send(&msg, sizeof msg, MPI_BYTE, to, 0, MPI_COMM_WORLD);
}

int index_of(int fork) { return fork == me ? 0 : 1; }
int fork_id(int i) { return i == 0 ? me : (me + 1) % n; }

// Under m: hand the fork on if its neighbour asked and we may give it.
void maybe_give(int i) {
    Fork &f = forks[i];
    if (!f.held || !f.wanted_by_neighbour) return;
    if (eating || (!f.dirty && hungry)) return;
#ifdef BROKEN_LEND
    f.held = !hungry;  // "lent" while hungry: it comes back anyway, so why wait for it
#else
    f.held = false;
#endif
    f.dirty = false;
    f.wanted_by_neighbour = false;
    send(f.neighbour, FORK, fork_id(i));
    if (hungry) {  // a dirty fork given up while hungry: ask for it back at once
        f.asked = true;
        send(f.neighbour, REQUEST, fork_id(i));
    }
}

void listener() {
    for (;;) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (!flag) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            continue;
        }
        Msg msg;
        MPI_Recv(&msg, sizeof msg, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        std::unique_lock<std::mutex> lock(m);
        if (msg.kind == DONE) {
            if (++finished == n) return;
            continue;
        }
        // with two philosophers both forks are shared with the same neighbour
        int i = n == 2 ? (msg.fork == me ? 0 : 1) : index_of(msg.fork);
        if (msg.kind == REQUEST) {
            forks[i].wanted_by_neighbour = true;
            maybe_give(i);
        } else {
            forks[i].held = true;
            forks[i].dirty = false;  // a fork arrives clean
            forks[i].asked = false;
            cv.notify_all();
        }
    }
}

}  // namespace

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int meals = argc > 1 ? std::atoi(argv[1]) : 1;
#ifdef SEED_TIME
    std::srand(static_cast<unsigned>(std::time(nullptr)) ^ static_cast<unsigned>(me));
#else
    std::srand(static_cast<unsigned>(me) + 1);
#endif
    // fork f lies between philosophers f-1 and f; the lower-ranked one starts with it, dirty
    int left = (me + n - 1) % n, right = (me + 1) % n;
    forks[0] = {left, me < left, true, false, false};
    forks[1] = {right, me < right, true, false, false};
    std::thread comm(listener);

    for (int meal = 0; meal < meals; meal++) {
        std::this_thread::sleep_for(std::chrono::milliseconds(std::rand() % 50));
        std::unique_lock<std::mutex> lock(m);
        hungry = true;
        int first = std::rand() % 2;
        for (int k = 0; k < 2; k++) {
            int i = (first + k) % 2;
            if (!forks[i].held && !forks[i].asked) {
                forks[i].asked = true;
                send(forks[i].neighbour, REQUEST, fork_id(i));
            }
        }
        cv.wait(lock, [] { return forks[0].held && forks[1].held; });
        eating = true;
        std::printf("philosopher %d picks up fork %d\n", me + 1, fork_id(0) + 1);
        std::printf("philosopher %d picks up fork %d\n", me + 1, fork_id(1) + 1);
        std::printf("philosopher %d starts its meal\n", me + 1);
        lock.unlock();
        std::this_thread::sleep_for(std::chrono::milliseconds(10 + std::rand() % 20));
        lock.lock();
        std::printf("philosopher %d ends its meal\n", me + 1);
        std::printf("philosopher %d puts down fork %d\n", me + 1, fork_id(0) + 1);
        std::printf("philosopher %d puts down fork %d\n", me + 1, fork_id(1) + 1);
        std::printf("philosopher %d thinks\n", me + 1);
        eating = false;
        hungry = false;
        forks[0].dirty = forks[1].dirty = true;
#ifdef BROKEN_FORGET
        forks[0].wanted_by_neighbour = forks[1].wanted_by_neighbour = false;
#endif
        maybe_give(0);
        maybe_give(1);
    }
    {
        std::lock_guard<std::mutex> lock(m);
        for (int p = 0; p < n; p++) send(p, DONE, 0);  // itself too: its listener ends on its own DONE
    }
    comm.join();
    std::vector<int> all(n);
    MPI_Gather(&meals, 1, MPI_INT, all.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (me == 0) {
        int total = 0;
        for (int x : all) total += x;
        std::fprintf(stderr, "%d meals in all\n", total);
    }
    return 0;  // no MPI_Finalize
}
