// A token passed in rank order, in C++17: the main thread holds a std::unique_lock of a
// std::shared_mutex over its critical section (and sleeps in it), while a std::thread listener
// answers a peer's question under a std::shared_lock of the same mutex, so the listener waits for
// the lock while the main thread is inside. libstdc++'s std::shared_mutex is a pthread_rwlock.
// -DBROKEN_PASS_EARLY: the token is sent on before the rank leaves.
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <shared_mutex>
#include <thread>

enum { ASK = 0, TOKEN = 1 };

static std::shared_mutex state_lock;
static bool inside = false;

int main(int argc, char **argv) {
    int rank, size, provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::thread listener([&] {
        int x;
        MPI_Status st;
        MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, ASK, MPI_COMM_WORLD, &st);
        std::shared_lock<std::shared_mutex> lock(state_lock);
        std::printf("P%d: rank %d asked, inside=%d\n", rank, st.MPI_SOURCE, static_cast<int>(inside));
    });
    int token = 0;
    MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, ASK, MPI_COMM_WORLD);
    if (rank > 0) MPI_Recv(&token, 1, MPI_INT, rank - 1, TOKEN, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    {
        std::unique_lock<std::shared_mutex> lock(state_lock);
        inside = true;
        std::printf("P%d enters\n", rank);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
#ifdef BROKEN_PASS_EARLY
        if (rank + 1 < size) MPI_Send(&token, 1, MPI_INT, rank + 1, TOKEN, MPI_COMM_WORLD);
#endif
        std::printf("P%d leaves\n", rank);
        inside = false;
    }
#ifndef BROKEN_PASS_EARLY
    if (rank + 1 < size) MPI_Send(&token, 1, MPI_INT, rank + 1, TOKEN, MPI_COMM_WORLD);
#endif
    listener.join();
    MPI_Finalize();
    return 0;
}
