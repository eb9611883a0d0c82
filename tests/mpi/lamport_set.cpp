// Lamport's mutual exclusion, C++17: a std::thread receiver, std::condition_variable with a
// predicate, a std::set of requests, messages as MPI_Type_contiguous of 3 ints,
// every broadcast MPI_Isend + MPI_Waitall, std::cout with std::endl.
#include <mpi.h>
#include <algorithm>
#include <condition_variable>
#include <iostream>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

enum Kind { REQUEST = 0, REPLY = 1, RELEASE = 2, FINISH = 3 };
struct Msg { int clock, rank, kind; };

class Node {
  public:
    Node(int rank, int size) : rank_(rank), size_(size), last_(size, 0) {
        MPI_Type_contiguous(3, MPI_INT, &type_);
        MPI_Type_commit(&type_);
    }
    ~Node() { MPI_Type_free(&type_); }

    void run(int times) {
        std::thread receiver(&Node::receive, this);
        for (int i = 0; i < times; i++) {
            lock();
            std::cout << "Node " << rank_ << " -> CS" << std::endl;
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
            std::cout << "Node " << rank_ << " <- CS" << std::endl;
            unlock();
        }
        broadcast(FINISH);
        receiver.join();
    }

  private:
    void broadcast(Kind kind) {
        std::vector<MPI_Request> reqs;
        std::vector<Msg> out;
        {
            std::lock_guard<std::mutex> g(m_);
            clock_++;
            if (kind == REQUEST) {
                mine_ = {clock_, rank_};
                queue_.insert(mine_);
            }
            out.assign(size_, Msg{clock_, rank_, kind});
        }
        reqs.reserve(size_);
        for (int i = 0; i < size_; i++) {
            if (i == rank_) continue;
            reqs.emplace_back();
            MPI_Isend(&out[i], 1, type_, i, kind, MPI_COMM_WORLD, &reqs.back());
        }
        MPI_Waitall((int)reqs.size(), reqs.data(), MPI_STATUSES_IGNORE);
    }

    bool may_enter() {  // -DBROKEN_HEAD: every other node heard from later, the queue not looked at
#ifndef BROKEN_HEAD
        if (queue_.empty() || *queue_.begin() != mine_) return false;
#endif
        for (int i = 0; i < size_; i++)
            if (i != rank_ && last_[i] <= mine_.first) return false;
        return true;
    }

    void lock() {
        broadcast(REQUEST);
        std::unique_lock<std::mutex> g(m_);
        cv_.wait(g, [this] { return may_enter(); });
    }

    void unlock() {
        {
            std::lock_guard<std::mutex> g(m_);
            queue_.erase(mine_);
        }
        broadcast(RELEASE);
    }

    void receive() {
        int finished = 0;
        while (finished < size_ - 1) {
            Msg in;
            MPI_Status st;
            MPI_Recv(&in, 1, type_, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            std::unique_lock<std::mutex> g(m_);
            clock_ = std::max(clock_, in.clock) + 1;
            last_[in.rank] = in.clock;
            switch (st.MPI_TAG) {
            case REQUEST: {
                queue_.insert({in.clock, in.rank});
                Msg reply{++clock_, rank_, REPLY};
                g.unlock();
                MPI_Send(&reply, 1, type_, in.rank, REPLY, MPI_COMM_WORLD);
                g.lock();
                break;
            }
            case RELEASE:
                for (auto it = queue_.begin(); it != queue_.end(); ++it)
                    if (it->second == in.rank) { queue_.erase(it); break; }
                break;
            case FINISH:
                finished++;
                break;
            }
            cv_.notify_all();
        }
    }

    int rank_, size_, clock_ = 0;
    std::pair<int, int> mine_;
    std::set<std::pair<int, int>> queue_;
    std::vector<int> last_;
    std::mutex m_;
    std::condition_variable cv_;
    MPI_Datatype type_;
};

int main(int argc, char **argv) {
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int times = argc > 1 ? std::stoi(argv[1]) : 1;
    {
        Node node(rank, size);
        node.run(times);
    }
    MPI_Finalize();
}
