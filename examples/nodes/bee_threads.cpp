// A mason bee for `mutexlab test bees`, written like an MPI program: a communication thread
// (main) that receives, and the bee's life in a thread of its own that blocks until it may go on.
//
// Reeds: bee r lives on reed (r-1) % T + 1, the bees of a reed in turn by id: bee r waits for
// REED_DONE from bee r - T. Bees beyond C/E per reed retire. Flowers: Raymond's K-entry
// Ricart-Agrawala among all P bees (a bee enters after P - K replies; a dead bee still answers).
//
//   g++ -O2 -pthread -o bee-threads examples/nodes/bee_threads.cpp
//   mutexlab test bees --node ./bee-threads --nodes 4 -o reeds=2 -o flowers=1 -o eggs=1 -o cocoons=2
//
// The node protocol wants every input answered, then done, and nothing unasked: the
// communication thread hands an input to the bee, waits until the bee blocks again (waitFor
// marks it idle) or has finished, and only then writes what the bee said and the done line.
// The node does not start afresh on a second init (its bee thread is gone): mutexlab starts it
// anew for every run.
//
// -DBROKEN_HANDOFF hands the reed on (REED_DONE) before leaving it: the next bee may enter while
// this one is still inside, by happened-before (the send precedes the exit).
#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

static std::mutex mtx;
static std::condition_variable cv;
static std::vector<std::string> outbox;  // lines the bee wrote since the last done
static bool idle = false, finished = false;

static int rank_ = 0, size_ = 0, K = 3, T = 3, E = 5, C = 15;
static long clk = 0;
static bool reedFree = false;
static bool wantFlower = false, onFlower = false;
static long myTs = 0, myReq = 0;
static int replies = 0;
static std::vector<std::pair<int, long>> deferred;  // (bee, its request number)

// -- tiny JSON helpers: find "key": at any depth and read an integer (keys are unique here) --
static long num(const std::string& s, const std::string& key, long dflt = 0) {
    size_t p = s.find("\"" + key + "\":");
    if (p == std::string::npos) return dflt;
    return std::stol(s.substr(p + key.size() + 3));
}
static std::string str(const std::string& s, const std::string& key) {
    size_t p = s.find("\"" + key + "\":\"");
    if (p == std::string::npos) return "";
    p += key.size() + 4;
    return s.substr(p, s.find('"', p) - p);
}

static void emit(const std::string& line) { outbox.push_back(line); }  // mtx held
static void send(int to, const std::string& type, long req, long ts) {
    emit("{\"type\":\"send\",\"to\":" + std::to_string(to) + ",\"body\":{\"type\":\"" + type +
         "\",\"ts\":" + std::to_string(ts) + ",\"req\":" + std::to_string(req) + "}}");
}
static void send(int to, const std::string& type, long req) { send(to, type, req, ++clk); }

// the bee blocks here; the communication thread sees it idle and answers done
template <class Pred> static void waitFor(std::unique_lock<std::mutex>& lk, Pred pred) {
    while (!pred()) {
        idle = true;
        cv.notify_all();
        cv.wait(lk);
    }
}

static void bee() {
    std::unique_lock<std::mutex> lk(mtx);
    int reed = (rank_ - 1) % T + 1, slot = (rank_ - 1) / T;
    if (slot >= C / E) {
        emit("{\"type\":\"state\",\"state\":\"RETIRED\"}");
        finished = true;
        cv.notify_all();
        return;
    }
    reedFree = slot == 0;
    waitFor(lk, [] { return reedFree; });
    std::string r = "\"reed:" + std::to_string(reed) + "\"";
    emit("{\"type\":\"enter\",\"resource\":" + r + "}");
    for (int egg = 1; egg <= E; egg++) {
        wantFlower = true;
        replies = 0;
        myTs = ++clk;
        myReq++;
        for (int p = 1; p <= size_; p++)
            if (p != rank_) send(p, "FREQ", myReq, myTs);  // every copy carries the request's time
        waitFor(lk, [] { return replies >= std::max(0, size_ - K); });
        wantFlower = false;
        onFlower = true;
        emit("{\"type\":\"enter\",\"resource\":\"flower\"}");
        emit("{\"type\":\"exit\",\"resource\":\"flower\"}");
        onFlower = false;
        for (auto& d : deferred) send(d.first, "FREP", d.second);
        deferred.clear();
        emit("{\"type\":\"event\",\"event\":\"egg\",\"reed\":" + std::to_string(reed) + ",\"count\":" +
             std::to_string(egg) + ",\"in_reed\":" + std::to_string(slot * E + egg) + "}");
    }
    int next = rank_ + T;
#ifdef BROKEN_HANDOFF
    if (next <= size_) send(next, "REED_DONE", 0);  // BROKEN: hands the reed on before leaving it
    emit("{\"type\":\"exit\",\"resource\":" + r + "}");
#else
    emit("{\"type\":\"exit\",\"resource\":" + r + "}");
    if (next <= size_) send(next, "REED_DONE", 0);
#endif
    emit("{\"type\":\"state\",\"state\":\"DEAD\"}");
    finished = true;
    cv.notify_all();
}

static void receive(const std::string& line) {  // mtx held
    long from = num(line, "from"), ts = num(line, "ts"), req = num(line, "req");
    std::string kind = str(line, "type");  // the body comes first: its type is the first "type"
    clk = std::max(clk, ts) + 1;
    if (kind == "REED_DONE") {
        reedFree = true;
    } else if (kind == "FREP") {
        if (wantFlower && req == myReq) replies++;
    } else if (kind == "FREQ") {
        bool mineFirst = wantFlower && (myTs < ts || (myTs == ts && rank_ < from));
        if (onFlower || mineFirst) deferred.push_back({(int)from, req});
        else send((int)from, "FREP", req);
    }
}

int main() {
    std::ios::sync_with_stdio(false);
    std::string line;
    std::thread life;
    while (std::getline(std::cin, line)) {
        std::unique_lock<std::mutex> lk(mtx);
        if (line.find("\"type\":\"init\"") != std::string::npos) {
            rank_ = num(line, "id");
            size_ = num(line, "nodes");
            K = num(line, "flowers", 3);
            T = num(line, "reeds", 3);
            E = num(line, "eggs", 5);
            C = num(line, "cocoons", 15);
            idle = false;
            lk.unlock();
            life = std::thread(bee);
            lk.lock();
        } else {
            receive(line);
            idle = false;
            cv.notify_all();
        }
        cv.wait(lk, [] { return idle || finished; });
        for (auto& out : outbox) std::cout << out << "\n";
        outbox.clear();
        std::cout << "{\"type\":\"done\"}" << std::endl;
    }
    {
        std::lock_guard<std::mutex> g(mtx);
        if (!finished) {  // end of input: leave without waiting for the bee
            std::_Exit(0);
        }
    }
    if (life.joinable()) life.join();
    return 0;
}
