// Ricart–Agrawala as a mutexlab node in C++, written the way a threaded program often is: a
// reader thread blocks on standard input and queues each line; a worker thread takes them off the
// queue (a mutex and a condition variable between the two) and answers on std::cout.
//
//   g++ -O2 -pthread -o ra-threads examples/nodes/ricart_agrawala_threads.cpp
//   mutexlab test mutex --node ./ra-threads --nodes 3
//
// Two things the node protocol asks of any such program (docs/test-any-program.md):
//  * std::cout into a pipe is buffered: the done line is written with std::endl, which flushes
//    (with "\n" alone nothing reaches mutexlab and the node stalls at its first init);
//  * one input is answered completely before the next is taken: the worker handles the lines
//    in order, one at a time, so the answer to a line is everything written before its done.
// Inputs come compact with their keys sorted, so a recv's body (with a "type" of its own) comes
// before the line's "type": field() reads the top-level keys only.
//
// -DBROKEN_TIE compares requests by timestamp alone, forgetting the tie-break on ids: two
// requests of the same time both lose to each other: each replies, and both nodes enter.
#include <iostream>
#include <string>
#include <thread>
#include <mutex>
#include <condition_variable>
#include <queue>
#include <vector>
#include <set>
#include <sstream>

std::mutex mtx;
std::condition_variable cv;
std::queue<std::string> inbox;
bool eof = false;

// the value of "key" at the top level of the JSON object s (a string without its quotes, else
// the text of the number, array or object)
static size_t skipValue(const std::string& s, size_t p) {
    if (s[p] == '"') { size_t e = p + 1; while (s[e] != '"') { if (s[e] == '\\') e++; e++; } return e + 1; }
    if (s[p] == '[' || s[p] == '{') {
        int depth = 0; bool str = false;
        for (size_t i = p; i < s.size(); i++) {
            char c = s[i];
            if (str) { if (c == '\\') i++; else if (c == '"') str = false; continue; }
            if (c == '"') str = true;
            else if (c == '[' || c == '{') depth++;
            else if ((c == ']' || c == '}') && --depth == 0) return i + 1;
        }
        return s.size();
    }
    size_t e = p;
    while (e < s.size() && s[e] != ',' && s[e] != '}' && s[e] != ']') e++;
    return e;
}

static std::string field(const std::string& s, const std::string& key) {
    size_t p = s.find('{');
    if (p == std::string::npos) return "";
    p++;
    while (p < s.size()) {
        while (p < s.size() && (s[p] == ' ' || s[p] == ',')) p++;
        if (p >= s.size() || s[p] != '"') return "";
        size_t e = skipValue(s, p);
        std::string k = s.substr(p + 1, e - p - 2);
        p = s.find(':', e) + 1;
        while (s[p] == ' ') p++;
        size_t v = skipValue(s, p);
        if (k == key) {
            if (s[p] == '"') return s.substr(p + 1, v - p - 2);
            return s.substr(p, v - p);
        }
        p = v;
    }
    return "";
}

void reader() {
    std::string line;
    while (std::getline(std::cin, line)) {
        std::lock_guard<std::mutex> g(mtx);
        inbox.push(line);
        cv.notify_one();
    }
    std::lock_guard<std::mutex> g(mtx);
    eof = true;
    cv.notify_one();
}

int me = 0, clk = 0, myTs = 0;
std::vector<int> peers;
bool requesting = false, holding = false;
std::set<int> replies;
std::vector<int> deferred;

void sendReply(int to) {
    clk++;
    std::cout << "{\"type\":\"send\",\"to\":" << to << ",\"body\":{\"type\":\"REPLY\",\"ts\":" << clk << "}}\n";
}

void handle(const std::string& line) {
    std::string type = field(line, "type");
    if (type == "init") {
        me = std::stoi(field(line, "id"));
        peers.clear();
        std::string ps = field(line, "peers");
        std::stringstream ss(ps.substr(1, ps.size() - 2));
        std::string tok;
        while (std::getline(ss, tok, ',')) if (!tok.empty()) peers.push_back(std::stoi(tok));
        clk = myTs = 0; requesting = holding = false; replies.clear(); deferred.clear();
        std::cout << "{\"type\":\"done\",\"reinit\":true}" << std::endl;  // it starts afresh on init
        return;
    } else if (type == "request") {
        clk++; myTs = clk; requesting = true; replies.clear();
        for (int p : peers)
            std::cout << "{\"type\":\"send\",\"to\":" << p << ",\"body\":{\"type\":\"REQUEST\",\"ts\":" << myTs << "}}\n";
    } else if (type == "release") {
        holding = false;
        std::cout << "{\"type\":\"exit\",\"resource\":\"cs\"}\n";
        for (int p : deferred) sendReply(p);
        deferred.clear();
    } else if (type == "recv") {
        int from = std::stoi(field(line, "from"));
        std::string body = field(line, "body");
        std::string btype = field(body, "type");
        int ts = std::stoi(field(body, "ts"));
        if (btype == "REQUEST") {
            clk = std::max(clk, ts) + 1;
            bool mineFirst = myTs < ts || (myTs == ts && me < from);
#ifdef BROKEN_TIE
            mineFirst = myTs < ts;  // forgets the tie-break on ids: a tie is the other's
#endif
            if (holding || (requesting && mineFirst)) deferred.push_back(from);
            else sendReply(from);
        } else if (btype == "REPLY") {
            replies.insert(from);
        }
    }
    if (requesting && replies.size() == peers.size()) {
        requesting = false; holding = true;
        std::cout << "{\"type\":\"enter\",\"resource\":\"cs\"}\n";
    }
    std::cout << "{\"type\":\"done\"}" << std::endl;
}

void worker() {
    while (true) {
        std::unique_lock<std::mutex> lk(mtx);
        cv.wait(lk, [] { return !inbox.empty() || eof; });
        if (inbox.empty() && eof) return;
        std::string line = inbox.front(); inbox.pop();
        lk.unlock();
        handle(line);
    }
}

int main() {
    std::thread r(reader), w(worker);
    r.join();
    w.join();
    return 0;
}
