// Suzuki-Kasami's broadcast token algorithm in C++17 as a student hands it in: MPI_THREAD_MULTIPLE,
// a std::thread listener blocked in MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG) that sizes a
// std::vector<int> by MPI_Get_count (the token carries LN and its queue: its length varies),
// std::mutex + std::condition_variable for the main thread to wait for the token, std::atomic for
// the count of ranks done, requests broadcast with MPI_Isend + MPI_Waitall, std::cout lines.
// Rank 0 holds the token first. usage: suzuki_kasami [entries]
// -DBROKEN_IN_CS: the listener hands the token to a requester even while its own rank is inside.
// -DBROKEN_DONE_OTHERS: DONE goes to the other ranks only: no rank's listener ends, nor its main,
// which joins it (a run that never ends under any MPI).
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {
enum Tag { REQUEST = 1, TOKEN = 2, DONE = 3 };

int me = 0, n = 1;
std::mutex mu;
std::condition_variable token_came;
bool have_token = false, inside = false;
std::vector<int> RN, LN;  // highest request number seen from each rank; the token's last served
std::deque<int> Q;        // the token's queue
std::atomic<int> done_ranks{0};

void send_token(int to) {  // under mu: LN, then the queue, as one message of ints
    std::vector<int> msg(LN);
    msg.insert(msg.end(), Q.begin(), Q.end());
    Q.clear();
    have_token = false;
    MPI_Send(msg.data(), static_cast<int>(msg.size()), MPI_INT, to, TOKEN, MPI_COMM_WORLD);
}

void listener() {
    while (done_ranks.load() < n) {
        MPI_Status st;
        MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        int count = 0;
        MPI_Get_count(&st, MPI_INT, &count);
        std::vector<int> msg(static_cast<size_t>(count > 0 ? count : 1));
        MPI_Recv(msg.data(), count, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        std::unique_lock<std::mutex> lock(mu);
        if (st.MPI_TAG == DONE) {
            done_ranks++;
        } else if (st.MPI_TAG == REQUEST) {
            int j = st.MPI_SOURCE;
            RN[j] = std::max(RN[j], msg[0]);
#ifdef BROKEN_IN_CS
            bool idle = true;
#else
            bool idle = !inside;
#endif
            if (have_token && idle && RN[j] == LN[j] + 1) send_token(j);
        } else {  // the token
            LN.assign(msg.begin(), msg.begin() + n);
            Q.assign(msg.begin() + n, msg.end());
            have_token = true;
            token_came.notify_all();
        }
    }
}

void broadcast(int tag, int value) {
    std::vector<MPI_Request> sent;
    static int word[64];
    word[me] = value;
    for (int r = 0; r < n; r++) {
#ifdef BROKEN_DONE_OTHERS
        if (r == me) continue;
#else
        if (r == me && tag != DONE) continue;
#endif
        sent.emplace_back();
        MPI_Isend(&word[me], 1, MPI_INT, r, tag, MPI_COMM_WORLD, &sent.back());
    }
    MPI_Waitall(static_cast<int>(sent.size()), sent.data(), MPI_STATUSES_IGNORE);
}
}  // namespace

int main(int argc, char** argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n > 64) MPI_Abort(MPI_COMM_WORLD, 2);
    int entries = argc > 1 ? std::stoi(argv[1]) : 1;
    RN.assign(static_cast<size_t>(n), 0);
    LN.assign(static_cast<size_t>(n), 0);
    have_token = me == 0;
    std::thread listen(listener);

    for (int e = 0; e < entries; e++) {
        int number = 0;
        {
            std::unique_lock<std::mutex> lock(mu);
            if (!have_token) number = ++RN[me];
        }
        if (number) broadcast(REQUEST, number);  // outside the lock: the listener must go on
        {
            std::unique_lock<std::mutex> lock(mu);
            token_came.wait(lock, [] { return have_token; });
            inside = true;
        }
        std::cout << "[" << me << "] in the critical section" << std::endl;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        std::cout << "[" << me << "] out of the critical section" << std::endl;
        std::unique_lock<std::mutex> lock(mu);
        inside = false;
        LN[me] = RN[me];
        for (int j = 0; j < n; j++) {
            bool waiting = RN[j] == LN[j] + 1, queued = false;
            for (int q : Q) queued |= q == j;
            if (j != me && waiting && !queued) Q.push_back(j);
        }
        if (!Q.empty()) {
            int next = Q.front();
            Q.pop_front();
            send_token(next);
        }
    }
    broadcast(DONE, 0);  // to every rank, this one too: its listener ends once all are done
    listen.join();
    MPI_Finalize();
    return 0;
}
