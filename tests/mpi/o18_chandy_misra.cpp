// The dining philosophers by Chandy and Misra, as written for a course in C++ with no threads:
// rank r is philosopher r+1, eating with fork r and fork (r+1) mod N (printed 1-based). A fork is
// a message; it starts dirty at the lower-numbered of its two philosophers. A philosopher gives a
// dirty fork up when asked (cleaning it), keeps a clean one while hungry and defers the request,
// and after a meal, its forks dirty, hands on every fork whose request it deferred. One loop:
// MPI_Recv(MPI_ANY_SOURCE, MPI_ANY_TAG) into a small class, tags as message kinds, a
// std::array of forks, a lambda to send. After its meals it says DONE for each fork and serves
// requests until each neighbour has said DONE. Prints as examples/mpi/philosophers.regex reads.
//   usage: mpirun -np N ./chandy_misra MEALS
//   -DBROKEN_NO_ASK_BACK  a hungry philosopher giving up a dirty fork forgets to ask for it back
#include <mpi.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace {

enum Tag { REQUEST = 1, FORK = 2, DONE = 3 };

struct Fork {
    int id = 0, neighbour = 0;
    bool held = false, dirty = true, asked = false, deferred = false;
};

class Philosopher {
  public:
    Philosopher(int me, int n) : me_(me), n_(n) {
        for (int side = 0; side < 2; side++) {
            Fork &f = forks_[side];
            f.id = (me + side) % n;
            f.neighbour = side == 0 ? (me + n - 1) % n : (me + 1) % n;
            int lo = (f.id + n - 1) % n < f.id ? (f.id + n - 1) % n : f.id;
            f.held = lo == me;
        }
    }

    void dine(int meals) {
        for (int meal = 0; meal < meals; meal++) {
            hungry_ = true;
            for (Fork &f : forks_) ask(f);
            while (!(forks_[0].held && forks_[1].held)) handle();
            eat();
        }
        for (Fork &f : forks_) send(f.neighbour, DONE, f.id);
        while (dones_ < 2) handle();
    }

  private:
    void send(int to, Tag tag, int fork) { MPI_Send(&fork, 1, MPI_INT, to, tag, MPI_COMM_WORLD); }

    Fork &fork(int id) { return forks_[0].id == id && !(n_ == 1) ? forks_[0] : forks_[1]; }

    void ask(Fork &f) {
        if (!f.held && !f.asked) {
            f.asked = true;
            send(f.neighbour, REQUEST, f.id);
        }
    }

    void give(Fork &f) {
        f.held = false;
        f.deferred = false;
        f.dirty = false;  // cleaned on its way
        send(f.neighbour, FORK, f.id);
#ifndef BROKEN_NO_ASK_BACK
        if (hungry_) ask(f);
#endif
    }

    void handle() {
        int id;
        MPI_Status st;
        MPI_Recv(&id, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        if (st.MPI_TAG == DONE) {
            dones_++;
            return;
        }
        Fork &f = fork(id);
        if (st.MPI_TAG == FORK) {
            f.held = true;
            f.asked = false;
            f.dirty = false;
        } else if (f.held && (f.dirty || !hungry_)) {
            give(f);
        } else {
            f.deferred = true;
        }
    }

    void eat() {
        std::printf("philosopher %d picks up fork %d\n", me_ + 1, forks_[0].id + 1);
        std::printf("philosopher %d picks up fork %d\n", me_ + 1, forks_[1].id + 1);
        std::printf("philosopher %d starts its meal\n", me_ + 1);
        usleep(300);
        std::printf("philosopher %d ends its meal\n", me_ + 1);
        std::printf("philosopher %d puts down fork %d\n", me_ + 1, forks_[0].id + 1);
        std::printf("philosopher %d puts down fork %d\n", me_ + 1, forks_[1].id + 1);
        hungry_ = false;
        for (Fork &f : forks_) f.dirty = true;
        for (Fork &f : forks_)
            if (f.deferred) give(f);
        std::printf("philosopher %d thinks\n", me_ + 1);
    }

    int me_, n_, dones_ = 0;
    bool hungry_ = false;
    std::array<Fork, 2> forks_;
};

}  // namespace

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n < 2) {
        std::fprintf(stderr, "chandy_misra: two philosophers at least\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    Philosopher(me, n).dine(argc > 1 ? std::atoi(argv[1]) : 1);
    MPI_Finalize();
    return 0;
}
