/* C++ threads under mutexlab's MPI (tests/test_mpi_calls.py): a std::thread receives the token and
 * wakes the main thread through a std::condition_variable; the main thread enters "cs" (mutexlab.h),
 * sleeps with std::this_thread::sleep_for, leaves and passes the token on. Each waits in libstdc++,
 * which the library must see as waiting, or every step would stall. -DWAIT_FOR: the main thread
 * waits with wait_for in a loop (a timed wait: a poll). */
#include <mpi.h>
#include <mutexlab.h>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

static std::mutex m;
static std::condition_variable cv;
static bool token;

int main(int argc, char **argv) {
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::thread listener([] {
        int t;
        MPI_Recv(&t, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        std::lock_guard<std::mutex> lock(m);
        token = true;
        cv.notify_one();
    });
    if (rank == 0) {
        std::lock_guard<std::mutex> lock(m);
        token = true;
    }
    {
        std::unique_lock<std::mutex> lock(m);
#ifdef WAIT_FOR /* a timed wait, looked at again until the token is there */
        while (!cv.wait_for(lock, std::chrono::milliseconds(10), [] { return token; })) {
        }
#else
        cv.wait(lock, [] { return token; });
#endif
    }
    mutexlab_enter("cs");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    mutexlab_exit("cs");
    int t = 1;
    MPI_Send(&t, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD); /* rank 0's listener takes the last */
    listener.join();
    MPI_Finalize();
    return 0;
}
