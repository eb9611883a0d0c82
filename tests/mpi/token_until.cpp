// A token ring in C++: rank 0 starts with the token; the holder "works" until a deadline
// (sleep_until on the wall clock), then passes it on.  usage: token_until [laps]
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int laps = argc > 1 ? std::atoi(argv[1]) : 1;
    for (int lap = 0; lap < laps; ++lap) {
        int token = 0;
        if (me != 0 || lap > 0)
            MPI_Recv(&token, 1, MPI_INT, (me + n - 1) % n, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        std::printf("[%d] ENTER CS\n", me);
        auto until = std::chrono::WALLCLOCK::now() + std::chrono::milliseconds(3);
        std::this_thread::sleep_until(until);
        std::printf("[%d] EXIT CS\n", me);
        ++token;
        if (!(lap == laps - 1 && me == n - 1)) MPI_Send(&token, 1, MPI_INT, (me + 1) % n, 0, MPI_COMM_WORLD);
    }
    MPI_Finalize();
}
