// Ricart-Agrawala, written against the "test any program" page only.
// Style: a reader std::thread feeding a std::deque under a mutex + condition_variable, the main
// thread as the worker; output through std::cout with '\n' and one std::flush per answer;
// a hand-rolled "parser" that looks keys up by string search at the top level.
// -DBROKEN_TIE: the priority test compares timestamps only, so two requests with the same
// Lamport time each defer the other: both wait for ever (the classic missing tie-break).
#include <condition_variable>
#include <deque>
#include <iostream>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

static std::mutex mu;
static std::condition_variable cv;
static std::deque<std::string> inbox;
static bool eof = false;

// value of a top-level numeric key (the body object is skipped by brace depth)
static long num(const std::string& line, const std::string& key) {
    int depth = 0;
    std::string pat = "\"" + key + "\":";
    for (size_t i = 0; i < line.size(); ++i) {
        char c = line[i];
        if (c == '{') depth++;
        else if (c == '}') depth--;
        else if (depth == 1 && line.compare(i, pat.size(), pat) == 0) return std::stol(line.substr(i + pat.size()));
    }
    return -1;
}
static std::string str(const std::string& line, const std::string& key, int want_depth) {
    int depth = 0;
    std::string pat = "\"" + key + "\":\"";
    for (size_t i = 0; i < line.size(); ++i) {
        char c = line[i];
        if (c == '{') depth++;
        else if (c == '}') depth--;
        else if (depth == want_depth && line.compare(i, pat.size(), pat) == 0) {
            size_t s = i + pat.size();
            return line.substr(s, line.find('"', s) - s);
        }
    }
    return "";
}

struct Node {
    long me = 0, n = 0, clock = 0, my_ts = 0;
    bool wanting = false, inside = false;
    std::set<long> replied;
    std::vector<long> deferred, peers;
    std::ostringstream out;

    void send(long to, const char* type, long ts) {
        out << "{\"type\":\"send\",\"to\":" << to << ",\"body\":{\"type\":\"" << type << "\",\"ts\":" << ts
            << ",\"from\":" << me << "}}\n";
    }
    bool they_win(long ts, long from) const {
#ifdef BROKEN_TIE
        return ts < my_ts;  // forgot the ids
#else
        return ts < my_ts || (ts == my_ts && from < me);
#endif
    }
    void maybe_enter() {
        if (wanting && !inside && replied.size() == peers.size()) {
            inside = true;
            out << "{\"type\":\"enter\",\"resource\":\"cs\"}\n";
        }
    }
    void handle(const std::string& line) {
        std::string type = str(line, "type", 1);
        if (type == "init") {
            me = num(line, "id");
            n = num(line, "nodes");
            clock = my_ts = 0;
            wanting = inside = false;
            replied.clear();
            deferred.clear();
            peers.clear();
            for (long p = 1; p <= n; ++p)
                if (p != me) peers.push_back(p);
        } else if (type == "request") {
            clock++;
            my_ts = clock;
            wanting = true;
            replied.clear();
            for (long p : peers) send(p, "REQUEST", my_ts);
            maybe_enter();
        } else if (type == "release") {
            inside = wanting = false;
            out << "{\"type\":\"exit\",\"resource\":\"cs\"}\n";
            clock++;
            for (long p : deferred) send(p, "REPLY", clock);
            deferred.clear();
        } else if (type == "recv") {
            long from = num(line, "from");
            std::string kind = str(line, "type", 2);
            size_t b = line.find("\"body\":");
            long ts = num(line.substr(b + 7), "ts");
            clock = std::max(clock, ts) + 1;
            if (kind == "REQUEST") {
                if (inside || (wanting && !they_win(ts, from)))
                    deferred.push_back(from);
                else
                    send(from, "REPLY", clock);
            } else if (kind == "REPLY" && wanting) {
                replied.insert(from);
                maybe_enter();
            }
        }
        out << "{\"type\":\"done\"}\n";
        std::cout << out.str() << std::flush;
        out.str("");
    }
};

int main() {
    std::ios::sync_with_stdio(false);
    std::cin.tie(nullptr);
    std::thread reader([] {
        std::string line;
        while (std::getline(std::cin, line)) {
            std::lock_guard<std::mutex> g(mu);
            inbox.push_back(line);
            cv.notify_one();
        }
        std::lock_guard<std::mutex> g(mu);
        eof = true;
        cv.notify_one();
    });
    Node node;
    for (;;) {
        std::unique_lock<std::mutex> lk(mu);
        cv.wait(lk, [] { return !inbox.empty() || eof; });
        if (inbox.empty()) break;
        std::string line = inbox.front();
        inbox.pop_front();
        lk.unlock();
        node.handle(line);
    }
    reader.join();
    return 0;
}
