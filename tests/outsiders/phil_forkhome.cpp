// Dining philosophers for mutexlab's node protocol: every fork has a home,
// fork i lives with philosopher i, who lends it (FIFO queue) to whoever asks,
// itself included. A hungry philosopher borrows the lower-numbered of its two
// forks first, then the other (the resource-ordering rule), and gives both back
// after its meal.
// I/O: std::getline on std::cin, std::cout << ... << '\n'; flushed once per
// answer with std::cout.flush().
//   -DBROKEN_LEFT_FIRST  borrows its left fork first whatever its number
//   -DNO_FLUSH           never flushes std::cout by hand (std::cin, tied to it,
//                        flushes it before every std::getline: still fine)
//   -DUNTIE              std::cin.tie(nullptr), the "fast I/O" idiom: with
//                        -DNO_FLUSH nothing flushes std::cout any more
//   -DDEBUG_STDOUT       prints a debugging line among its protocol lines
// g++ -O2 -std=c++17 -o phil phil_forkhome.cpp
#include <deque>
#include <iostream>
#include <map>
#include <string>

static int me, n;
static bool hungry = false;
static int have = 0;     // forks in hand (0, 1, 2)
static int first_fork, second_fork;
// home of fork `me`
static int lent_to = 0;  // 0: at home, free
static std::deque<int> queue_;

// --- tiny field readers: the input lines are flat enough for this, except a
// recv's body, which comes first: look for keys from the end of the line.
static long num_after(const std::string& line, const std::string& key, size_t from = 0) {
    size_t p = line.find("\"" + key + "\":", from);
    if (p == std::string::npos) return -1;
    return std::stol(line.substr(p + key.size() + 3));
}
static std::string str_after(const std::string& line, const std::string& key, size_t from = 0) {
    size_t p = line.find("\"" + key + "\":\"", from);
    if (p == std::string::npos) return "";
    p += key.size() + 4;
    return line.substr(p, line.find('"', p) - p);
}

static int left_of(int i) { return i; }
static int right_of(int i) { return i % n + 1; }

static void send(int to, const std::string& kind, int fork) {
    std::cout << "{\"type\":\"send\",\"to\":" << to << ",\"body\":{\"type\":\"" << kind
              << "\",\"fork\":" << fork << "}}" << '\n';
}

static void got_fork();

// fork `f` wanted by philosopher `who`
static void want(int who, int f) {
    if (f != me) { send(f, "ASK", f); return; }
    if (lent_to == 0) {
        lent_to = who;
        if (who == me) got_fork(); else send(who, "LEND", f);
    } else {
        queue_.push_back(who);
    }
}

static void give_back(int f) {
    if (f != me) { send(f, "BACK", f); return; }
    lent_to = 0;
    if (!queue_.empty()) {
        int who = queue_.front(); queue_.pop_front();
        lent_to = who;
        if (who == me) got_fork(); else send(who, "LEND", f);
    }
}

static void got_fork() {
    have++;
#ifdef DEBUG_STDOUT
    std::cout << "philosopher " << me << " now has " << have << " fork(s)" << '\n';
#endif
    if (have == 1) { want(me, second_fork); return; }
    std::cout << "{\"type\":\"enter\",\"resource\":\"fork:" << left_of(me) << "\"}" << '\n';
    std::cout << "{\"type\":\"enter\",\"resource\":\"fork:" << right_of(me) << "\"}" << '\n';
    std::cout << "{\"type\":\"enter\",\"resource\":\"meal\"}" << '\n';
    std::cout << "{\"type\":\"state\",\"state\":\"EATING\"}" << '\n';
}

int main() {
    std::ios::sync_with_stdio(false);
#ifdef UNTIE
    std::cin.tie(nullptr);  // the "fast I/O" idiom: reading no longer flushes std::cout
#endif
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.empty()) continue;
        // the input's own type is the last "type" on the line (keys are sorted)
        std::string type = str_after(line, "type", line.rfind("\"type\":"));
        if (type == "init") {
            me = (int)num_after(line, "id");
            n = (int)num_after(line, "nodes");
            hungry = false; have = 0; lent_to = 0; queue_.clear();
#ifdef BROKEN_LEFT_FIRST
            first_fork = left_of(me); second_fork = right_of(me);
#else
            first_fork = std::min(left_of(me), right_of(me));
            second_fork = std::max(left_of(me), right_of(me));
#endif
            std::cout << "{\"type\":\"done\",\"reinit\":true}" << '\n';
        } else if (type == "request") {
            hungry = true;
            std::cout << "{\"type\":\"state\",\"state\":\"HUNGRY\"}" << '\n';
            want(me, first_fork);
            std::cout << "{\"type\":\"done\"}" << '\n';
        } else if (type == "release") {
            std::cout << "{\"type\":\"exit\",\"resource\":\"meal\"}" << '\n';
            std::cout << "{\"type\":\"exit\",\"resource\":\"fork:" << left_of(me) << "\"}" << '\n';
            std::cout << "{\"type\":\"exit\",\"resource\":\"fork:" << right_of(me) << "\"}" << '\n';
            std::cout << "{\"type\":\"state\",\"state\":\"THINKING\"}" << '\n';
            hungry = false; have = 0;
            give_back(second_fork);
            give_back(first_fork);
            std::cout << "{\"type\":\"done\"}" << '\n';
        } else if (type == "recv") {
            size_t body_end = line.rfind("\"from\":");
            int from = (int)num_after(line, "from", body_end);
            std::string kind = str_after(line.substr(0, body_end), "type");
            int fork = (int)num_after(line.substr(0, body_end), "fork");
            if (kind == "ASK") want(from, fork);
            else if (kind == "LEND") got_fork();
            else if (kind == "BACK") give_back(fork);
            std::cout << "{\"type\":\"done\"}" << '\n';
        } else {
            std::cerr << "unknown input: " << line << std::endl;
            std::cout << "{\"type\":\"done\"}" << '\n';
        }
#ifndef NO_FLUSH
        std::cout.flush();
#endif
    }
    return 0;
}
