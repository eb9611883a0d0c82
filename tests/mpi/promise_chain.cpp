// Ranks enter one after another, in rank order, as a student writes it in C++20: a std::thread
// listener receives the baton from the rank before and hands it to the main thread through a
// std::promise; they first meet at a std::latch, the listener flags its start with
// std::atomic::wait/notify_one, and the main thread polls the std::future with wait_for(50 ms),
// counting how late the baton is. All of these wait on libstdc++'s futexes, not on condition
// variables. Argument: rounds (default 1): the baton goes from the last rank back to rank 0.
// -DBROKEN_EARLY: in rounds after the first, rank 0 takes the baton as soon as it has passed it
// on, not when it comes back.
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <latch>
#include <thread>

int main(int argc, char **argv) {
    int rank, size, provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 1;
    for (int round = 0; round < rounds; round++) {
        std::latch started(2);
        std::atomic<int> listening{0};
        std::promise<int> baton;
        std::future<int> arrived = baton.get_future();
        const bool first = rank == 0 && round == 0;
        std::thread listener([&] {
            listening.store(1);
            listening.notify_one();
            started.arrive_and_wait();
            int value = round;
#ifdef BROKEN_EARLY
            const bool wait = !first && rank != 0;
#else
            const bool wait = !first;
#endif
            if (wait)
                MPI_Recv(&value, 1, MPI_INT, (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            baton.set_value(value);
        });
        listening.wait(0);
        started.arrive_and_wait();
        int late = 0;
        while (arrived.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) late++;
        int value = arrived.get();
        std::printf("rank %d enters (round %d, %s)\n", rank, value, late ? "late" : "on time");
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        std::printf("rank %d leaves\n", rank);
        if (rank + 1 < size || round + 1 < rounds) MPI_Send(&value, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD);
        listener.join();
    }
#ifdef BROKEN_EARLY
    if (rank == 0 && rounds > 1) {
        int value;
        MPI_Recv(&value, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
#endif
    MPI_Finalize();
    return 0;
}
