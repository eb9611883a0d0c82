// Ricart–Agrawala in C++17 as written for a course whose template has every thread call MPI.
//
// Style: MPI_Init_thread(MPI_THREAD_MULTIPLE); one std::thread listener receiving
// MPI_ANY_SOURCE/MPI_ANY_TAG, the tag saying what a message is (REQ, REP, BYE) and MPI_Get_count
// how many ints it holds (a REQ carries its clock and its sender's rank, a REP nothing, a BYE one
// int); each REQ answered at once gets a std::thread of its own, detached, that sends the REP;
// std::scoped_lock, std::condition_variable::wait with a predicate, std::atomic for the count of
// replies; printf from every thread. The parameters come by MPI_Bcast from rank 0 and the ranks
// meet at an MPI_Barrier before MPI_Finalize.
//
// -DBROKEN_NO_TIE: a request is deferred only for an older stamp, not for an equal one from a
// lower rank, so two ranks asking with the same stamp both answer and both enter.
#include <mpi.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace {

enum Tag { REQ = 11, REP = 12, BYE = 13 };

int me, np;
std::mutex m;
std::condition_variable cv;
int lamport = 0;     // guarded by m
bool wanting = false;  // guarded by m
int my_stamp = 0;      // guarded by m
std::vector<int> deferred;  // guarded by m
std::atomic<int> replies{0};
int byes = 0;  // the listener's own

void reply_later(int to) {
    // a thread of its own per reply: MPI_THREAD_MULTIPLE lets it
    std::thread([to] {
        int none = 0;
        MPI_Send(&none, 0, MPI_INT, to, REP, MPI_COMM_WORLD);
    }).detach();
}

void listener() {
    for (;;) {
        MPI_Status st;
        MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        int count = 0;
        MPI_Get_count(&st, MPI_INT, &count);
        std::vector<int> body(count > 0 ? count : 1);
        MPI_Recv(body.data(), count, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (st.MPI_TAG == REQ) {
            bool defer;
            {
                std::scoped_lock lock(m);
                lamport = std::max(lamport, body[0]) + 1;
#ifdef BROKEN_NO_TIE
                defer = wanting && my_stamp < body[0];
#else
                defer = wanting && (my_stamp < body[0] || (my_stamp == body[0] && me < body[1]));
#endif
                if (defer) deferred.push_back(body[1]);
            }
            if (!defer) reply_later(body[1]);
        } else if (st.MPI_TAG == REP) {
            replies.fetch_add(1);
            std::scoped_lock lock(m);
            cv.notify_all();
        } else if (st.MPI_TAG == BYE) {
            if (++byes == np) return;  // every rank, this one too, said BYE
        }
    }
}

}  // namespace

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        std::fprintf(stderr, "need MPI_THREAD_MULTIPLE\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int rounds = 1;
    if (me == 0 && argc > 1) rounds = std::atoi(argv[1]);
    MPI_Bcast(&rounds, 1, MPI_INT, 0, MPI_COMM_WORLD);

    std::thread t(listener);
    for (int round = 0; round < rounds; round++) {
        int stamp;
        {
            std::scoped_lock lock(m);
            stamp = ++lamport;
            my_stamp = stamp;
            wanting = true;
            replies = 0;
        }
        int req[2] = {stamp, me};
        for (int r = 0; r < np; r++)
            if (r != me) MPI_Send(req, 2, MPI_INT, r, REQ, MPI_COMM_WORLD);
        {
            std::unique_lock lock(m);
            cv.wait(lock, [] { return replies.load() == np - 1; });
        }
        std::printf("[%d] ENTER CS (stamp %d)\n", me, stamp);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        std::printf("[%d] EXIT CS\n", me);
        std::vector<int> owed;
        {
            std::scoped_lock lock(m);
            wanting = false;
            owed.swap(deferred);
        }
        for (int to : owed) reply_later(to);
    }
    int bye = me;
    for (int r = 0; r < np; r++) MPI_Send(&bye, 1, MPI_INT, r, BYE, MPI_COMM_WORLD);
    t.join();
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
