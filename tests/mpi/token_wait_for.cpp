// A token ring in C++ as a student writes it: a std::thread listener blocked in MPI_Recv hands
// the token to the main thread through a std::mutex and a std::condition_variable; the main
// thread waits for it with wait_for(200 ms) and logs when it is late; rank 0 counts the laps and,
// after the last, sends STOP to every rank (itself too, so its own listener ends). MPI_Abort on
// fewer than 2 ranks. Argument: laps (default 1).
// -DBROKEN_REGENERATE: rank 0 takes a late token for lost and makes a new one: two tokens.
#include <mpi.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

enum { TOKEN = 1, STOP = 2 };

static std::mutex mu;
static std::condition_variable cv;
static bool have = false, stopped = false;
static int token = 0;

static void listen() {
    for (;;) {
        int value;
        MPI_Status st;
        MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        std::lock_guard<std::mutex> lock(mu);
        if (st.MPI_TAG == STOP) {
            stopped = true;
            cv.notify_all();
            return;
        }
        have = true;
        token = value;
        cv.notify_all();
    }
}

int main(int argc, char **argv) {
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        std::fprintf(stderr, "a ring needs 2 ranks at least\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int laps = argc > 1 ? std::atoi(argv[1]) : 1;
    std::thread listener(listen);
    if (rank == 0) {
        std::lock_guard<std::mutex> lock(mu);
        have = true;
    }
    for (;;) {
        std::unique_lock<std::mutex> lock(mu);
        while (!have && !stopped) {
            if (cv.wait_for(lock, std::chrono::milliseconds(200)) == std::cv_status::timeout) {
                std::printf("P%d: token late\n", rank);
#ifdef BROKEN_REGENERATE
                if (rank == 0 && !have && !stopped) {
                    std::printf("P0: token lost, making a new one\n");
                    have = true;
                }
#endif
            }
        }
        if (stopped) break;
        have = false;
        int value = token;
        lock.unlock();
        if (rank == 0 && value == laps) {
            for (int p = 0; p < size; p++) MPI_Send(&value, 1, MPI_INT, p, STOP, MPI_COMM_WORLD);
            break;
        }
        std::printf("P%d: in CS (lap %d)\n", rank, value);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        std::printf("P%d: out of CS\n", rank);
        if (rank == size - 1) value++;
        MPI_Send(&value, 1, MPI_INT, (rank + 1) % size, TOKEN, MPI_COMM_WORLD);
    }
    listener.join();
    MPI_Finalize();
    return 0;
}
