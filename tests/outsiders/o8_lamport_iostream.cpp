// Lamport's mutual exclusion in C++, written from docs/test-any-program.md: std::getline on
// std::cin, answers written with std::cout and '\n', never flushed by hand (std::cin's tie to
// std::cout flushes before each read), debugging chatter on std::cerr after every input.
// -DBROKEN_ACKS enters with one acknowledgement too few; -DUNTIE unties std::cin (the usual
// "fast I/O" lines), so nothing flushes std::cout any more.
#include <iostream>
#include <set>
#include <string>
#include <utility>

static long field(const std::string &s, const std::string &key, size_t from = 0) {
    size_t at = s.find("\"" + key + "\":", from);
    return at == std::string::npos ? -1 : std::stol(s.substr(at + key.size() + 3));
}

int main() {
#ifdef UNTIE
    std::ios::sync_with_stdio(false);
    std::cin.tie(nullptr);
#endif
    long me = 0, n = 0, clock = 0;
    std::set<std::pair<long, long>> queue;
    std::set<long> acks;
    std::pair<long, long> mine{-1, -1};
    bool inside = false;
    auto send = [&](long to, const char *type) {
        std::cout << "{\"type\":\"send\",\"to\":" << to << ",\"body\":{\"kind\":\"" << type
                  << "\",\"ts\":" << clock << "}}\n";
    };
#ifdef BROKEN_ACKS
    const long missing = 1;
#else
    const long missing = 0;
#endif
    auto try_enter = [&]() {
        if (mine.first < 0 || inside || (long)acks.size() + missing < n - 1) return;
        if (!queue.empty() && *queue.begin() == mine) {
            inside = true;
            std::cout << "{\"type\":\"enter\",\"resource\":\"cs\"}\n";
        }
    };
    std::string line;
    long count = 0;
    while (std::getline(std::cin, line)) {
        if (line.find_first_not_of(" \r\t") == std::string::npos) continue;
        size_t body = line.find("\"body\":{");
        size_t after = body == std::string::npos ? 0 : line.find('}', body);
        std::string top = body == std::string::npos ? line : line.substr(0, body) + line.substr(after + 1);
        std::string in_body = body == std::string::npos ? "" : line.substr(body, after - body + 1);
        if (top.find("\"type\":\"init\"") != std::string::npos) {
            me = field(top, "id");
            n = field(top, "nodes");
            clock = 0;
            queue.clear();
            acks.clear();
            mine = {-1, -1};
            inside = false;
            std::cout << "{\"type\":\"done\",\"reinit\":true}\n";
        } else {
            if (top.find("\"type\":\"request\"") != std::string::npos) {
                mine = {++clock, me};
                queue.insert(mine);
                acks.clear();
                for (long p = 1; p <= n; p++)
                    if (p != me) send(p, "REQ");
                try_enter();
            } else if (top.find("\"type\":\"release\"") != std::string::npos) {
                inside = false;
                queue.erase(mine);
                mine = {-1, -1};
                ++clock;
                std::cout << "{\"type\":\"exit\",\"resource\":\"cs\"}\n";
                for (long p = 1; p <= n; p++)
                    if (p != me) send(p, "REL");
            } else {
                long from = field(top, "from"), ts = field(in_body, "ts");
                clock = std::max(clock, ts) + 1;
                if (in_body.find("\"REQ\"") != std::string::npos) {
                    queue.insert({ts, from});
                    send(from, "ACK");
                } else if (in_body.find("\"ACK\"") != std::string::npos) {
                    acks.insert(from);
                } else {
                    for (auto it = queue.begin(); it != queue.end();)
                        it = it->second == from ? queue.erase(it) : std::next(it);
                }
                try_enter();
            }
            std::cout << "{\"type\":\"done\"}\n";
        }
        std::cerr << "[node " << me << "] input " << ++count << ": " << line << " queue=" << queue.size() << '\n';
    }
}
