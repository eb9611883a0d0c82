// K safety pins shared by the elves -- Ricart-Agrawala with K places (enter with n-K "OK"s).
// C++17, std::thread listener using matched probes (MPI_Improbe + MPI_Mrecv), the way the MPI-3
// book says a multithreaded receiver should probe.  usage: pins_mprobe K [visits]
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace {
constexpr int TAG_ASK = 100, TAG_OK = 101, TAG_QUIT = 102;

struct Elf {
    int id = 0, n = 0, k = 1;
    std::mutex m;
    std::condition_variable cv;
    long clock = 0;
    bool wanting = false, holding = false;
    long my_stamp = 0;
    int my_ask = 0, oks = 0, quits = 0;
    std::vector<std::pair<int, int>> later;  // (elf, ask number) answered after I put the pins back

    bool ahead_of(long stamp, int who) const {
#ifdef BROKEN_STAMP
        return my_stamp < stamp || who < id;  // "ties go to the smaller id"
#else
        return my_stamp < stamp || (my_stamp == stamp && id < who);
#endif
    }

    void ok(int to, int ask) {
        long buf[2] = {++clock, ask};
        MPI_Send(buf, 2, MPI_LONG, to, TAG_OK, MPI_COMM_WORLD);
    }

    void listen() {
        for (;;) {
            int got = 0;
            MPI_Message msg;
            MPI_Status st;
            MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &got, &msg, &st);
            if (!got) {
                std::this_thread::yield();
                continue;
            }
            int count = 0;
            MPI_Get_count(&st, MPI_LONG, &count);
            long buf[2] = {0, 0};
            MPI_Mrecv(buf, count, MPI_LONG, &msg, MPI_STATUS_IGNORE);
            std::unique_lock<std::mutex> lk(m);
            clock = std::max(clock, buf[0]) + 1;
            if (st.MPI_TAG == TAG_QUIT) {
                if (++quits == n) return;
            } else if (st.MPI_TAG == TAG_ASK) {
                if (holding || (wanting && ahead_of(buf[0], st.MPI_SOURCE)))
                    later.emplace_back(st.MPI_SOURCE, (int)buf[1]);
                else
                    ok(st.MPI_SOURCE, (int)buf[1]);
            } else if (st.MPI_TAG == TAG_OK && wanting && buf[1] == my_ask) {
                ++oks;
                cv.notify_all();
            }
        }
    }

    void visit(int v) {
        std::unique_lock<std::mutex> lk(m);
        wanting = true;
        my_stamp = ++clock;
        ++my_ask;
        oks = 0;
        for (int j = 0; j < n; ++j)
            if (j != id) {
                long buf[2] = {my_stamp, my_ask};
                MPI_Send(buf, 2, MPI_LONG, j, TAG_ASK, MPI_COMM_WORLD);
            }
        cv.wait(lk, [&] { return oks >= n - k; });
        wanting = false;
        holding = true;
        std::printf("elf %d grabs a pin (visit %d, stamp %ld)\n", id, v, my_stamp);
        lk.unlock();
        std::this_thread::sleep_for(std::chrono::milliseconds(2 + std::rand() % 3));
        lk.lock();
        std::printf("elf %d hangs the pin back\n", id);
        holding = false;
        for (auto [who, ask] : later) ok(who, ask);
        later.clear();
    }
};
}  // namespace

int main(int argc, char** argv) {
    int level = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &level);
    Elf e;
    MPI_Comm_rank(MPI_COMM_WORLD, &e.id);
    MPI_Comm_size(MPI_COMM_WORLD, &e.n);
    e.k = argc > 1 ? std::atoi(argv[1]) : 1;
    int visits = argc > 2 ? std::atoi(argv[2]) : 1;
    std::srand(e.id + 1);
    std::thread ear([&] { e.listen(); });
    for (int v = 1; v <= visits; ++v) e.visit(v);
    long bye[2] = {0, 0};
    for (int j = 0; j < e.n; ++j) MPI_Send(bye, 2, MPI_LONG, j, TAG_QUIT, MPI_COMM_WORLD);
    ear.join();
    MPI_Finalize();
}
