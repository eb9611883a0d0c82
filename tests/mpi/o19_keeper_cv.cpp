// A lock keeper in C++, a listener thread beside it: main grants the lock to each other rank in
// turn and waits on a condition variable, with a timeout, for the listener to see the release;
// after 10 timeouts of 50 ms the holder is taken for dead: the keeper uses the lock itself, then
// grants it on. -DPATIENT waits without a timeout; -DPATIENT_TIMED waits in timed waits, however
// many (both no bug).
#include <mpi.h>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>
#include <unistd.h>

static std::mutex mu;
static std::condition_variable cv;
static int released = 0;

static void use_lock(int rank) {
    std::printf("rank %d enters\n", rank);
    std::fflush(stdout);
    std::printf("rank %d leaves\n", rank);
    std::fflush(stdout);
}

int main(int argc, char **argv) {
    int provided, rank, size, token = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
        std::thread listener([size] {
            for (int i = 1; i < size; i++) {
                int t;
                MPI_Recv(&t, 1, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                std::lock_guard<std::mutex> g(mu);
                released++;
                cv.notify_all();
            }
        });
        bool used = false;
        for (int h = 1; h < size; h++) {
            MPI_Send(&token, 1, MPI_INT, h, 1, MPI_COMM_WORLD);
            std::unique_lock<std::mutex> lk(mu);
#if defined(PATIENT)
            cv.wait(lk, [h] { return released >= h; });
#elif defined(PATIENT_TIMED)
            while (released < h) cv.wait_for(lk, std::chrono::milliseconds(50));
#else
            for (int tries = 0; released < h && tries < 10; tries++) cv.wait_for(lk, std::chrono::milliseconds(50));
            if (released < h && !used) {
                lk.unlock();
                use_lock(0);  // the holder is taken for dead
                used = true;
            }
#endif
        }
        if (!used) use_lock(0);
        listener.join();
    } else {
        MPI_Recv(&token, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        std::printf("rank %d enters\n", rank);
        std::fflush(stdout);
        usleep(200000);
        std::printf("rank %d leaves\n", rank);
        std::fflush(stdout);
        MPI_Send(&token, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
