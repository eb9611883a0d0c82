// Dining philosophers, one MPI rank per philosopher.
// Ricart-Agrawala between neighbours: a hungry philosopher asks both neighbours (Lamport
// clock in an int[3] message), eats with both replies; a listener thread waits with
// MPI_Waitany over one pre-posted MPI_Irecv per neighbour.
// Build: mpicxx -O2 -std=c++17 philo_waitany.cpp    Run: mpirun -np 3 ./a.out [meals]
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <thread>
#include <vector>

namespace {

enum Kind { REQUEST = 1, REPLY = 2, DONE = 3 };

class Philosopher {
public:
    Philosopher(int rank, int size, MPI_Comm world) : rank_(rank), size_(size) {
        MPI_Comm_dup(world, &comm_);
        int left = (rank + size - 1) % size, right = (rank + 1) % size;
        if (left != rank) neighbours_.push_back(left);
        if (right != rank && right != left) neighbours_.push_back(right);
        fork_a_ = rank + 1;
        fork_b_ = (rank + 1) % size + 1;
        seed_ = 99u + 31u * static_cast<unsigned>(rank);
    }
    ~Philosopher() { MPI_Comm_free(&comm_); }

    void start() { listener_ = std::thread(&Philosopher::listen, this); }

    void dine(int meals) {
        say() << "thinks" << '\n';
        for (int m = 0; m < meals; ++m) {
            std::this_thread::sleep_for(std::chrono::microseconds(rand_r(&seed_) % 2000));
            acquire();
            say() << "takes fork " << fork_a_ << '\n';
            if (fork_b_ != fork_a_) say() << "takes fork " << fork_b_ << '\n';
            say() << "starts eating (meal " << m + 1 << ")" << std::endl;
            std::this_thread::sleep_for(std::chrono::milliseconds(1 + rand_r(&seed_) % 3));
            say() << "stops eating" << '\n';
            say() << "drops fork " << fork_a_ << '\n';
            if (fork_b_ != fork_a_) say() << "drops fork " << fork_b_ << '\n';
            release();
            say() << "thinks" << std::endl;
            ++eaten_;
        }
        for (int n : neighbours_) send(n, DONE, 0);
        send(rank_, DONE, 0);  // wakes my own listener: I ask for nothing more
        listener_.join();
    }

    int eaten() const { return eaten_; }

private:
    std::ostream &say() { return std::cout << "P" << rank_ + 1 << ": "; }

    void send(int to, int kind, int clock) {
        int msg[3] = {kind, clock, rank_};
        MPI_Send(msg, 3, MPI_INT, to, 0, comm_);
    }

    void acquire() {
        std::unique_lock<std::mutex> lk(mu_);
        hungry_ = true;
        my_clock_ = ++clock_;
        replies_ = 0;
        for (int n : neighbours_) send(n, REQUEST, my_clock_);
#ifdef BROKEN_ONE_REPLY
        cv_.wait(lk, [&] { return replies_ >= 1; });
#else
        cv_.wait(lk, [&] { return replies_ == static_cast<int>(neighbours_.size()); });
#endif
        hungry_ = false;
        eating_ = true;
    }

    void release() {
        std::lock_guard<std::mutex> lk(mu_);
        eating_ = false;
        for (int d : deferred_) send(d, REPLY, ++clock_);
        deferred_.clear();
    }

    bool before_me(int clock, int who) const {
#ifdef BROKEN_TIE
        (void)who;
        return clock <= my_clock_;
#else
        return clock < my_clock_ || (clock == my_clock_ && who < rank_);
#endif
    }

    // One pre-posted receive per neighbour, and one from myself (my own DONE).  A
    // neighbour's DONE says it asks for nothing more, but it may still owe me a REPLY:
    // its slot stays posted until I am done too.
    void listen() {
        const int n = static_cast<int>(neighbours_.size());
        std::vector<int> peers(neighbours_);
        peers.push_back(rank_);
        std::vector<MPI_Request> reqs(n + 1);
        std::vector<std::vector<int>> bufs(n + 1, std::vector<int>(3));
        for (int i = 0; i <= n; ++i)
            MPI_Irecv(bufs[i].data(), 3, MPI_INT, peers[i], MPI_ANY_TAG, comm_, &reqs[i]);
        int finished = 0;
        bool me_done = false;
        while (!(me_done && finished == n)) {
            int idx;
            MPI_Status st;
            MPI_Waitany(n + 1, reqs.data(), &idx, &st);
            if (idx == MPI_UNDEFINED) break;
            int kind = bufs[idx][0], c = bufs[idx][1], from = bufs[idx][2];
            if (idx == n) {
                me_done = true;
                continue;
            }
            {
                std::lock_guard<std::mutex> lk(mu_);
                clock_ = std::max(clock_, c) + 1;
                if (kind == REQUEST) {
                    if (eating_ || (hungry_ && !before_me(c, from)))
                        deferred_.push_back(from);
                    else
                        send(from, REPLY, ++clock_);
                } else if (kind == REPLY) {
                    ++replies_;
                    cv_.notify_all();
                }
            }
            if (kind == DONE) ++finished;
#ifdef BROKEN_DONE_EARLY
            if (kind == DONE) continue;  // stop listening to it: a REPLY it still owes is lost
#endif
            MPI_Irecv(bufs[idx].data(), 3, MPI_INT, peers[idx], MPI_ANY_TAG, comm_, &reqs[idx]);
        }
        for (int i = 0; i < n; ++i) {
            if (reqs[i] != MPI_REQUEST_NULL) {
                MPI_Cancel(&reqs[i]);
                MPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
            }
        }
    }

    int rank_, size_;
    MPI_Comm comm_;
    std::vector<int> neighbours_;
    int fork_a_, fork_b_;
    unsigned seed_;
    std::thread listener_;
    std::mutex mu_;
    std::condition_variable cv_;
    int clock_ = 0, my_clock_ = 0, replies_ = 0, eaten_ = 0;
    bool hungry_ = false, eating_ = false;
    std::vector<int> deferred_;
};

}  // namespace

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        std::cerr << "need MPI_THREAD_MULTIPLE\n";
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        std::cerr << "at least two philosophers\n";
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int meals = argc > 1 ? std::atoi(argv[1]) : 1;
    {
        Philosopher p(rank, size, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        p.start();
        p.dine(meals);
        int total = 0, mine = p.eaten();
        MPI_Reduce(&mine, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0) std::cout << "meals eaten: " << total << '\n';
    }
    MPI_Finalize();
    return 0;
}
