// The hamster killers in C++ and MPI, as a student hands them in (docs/mpi.md#elves): rank 0 is
// the mayor, ranks 1..N-1 the elves. The mayor draws each round's contracts (hamsters each) with
// rand(), sends INIT_CONTRACTS to every elf, counts CONTRACT_COMPLETED and sends STOP. An elf has
// a listener thread blocked in MPI_Recv(MPI_ANY_SOURCE, MPI_ANY_TAG) and, per resource
// (contracts, pins, poison), a queue of requests ordered by Lamport clock: with a REPLY from every
// other elf it sums the units of the requests ahead of its own and takes the resource when
// total - ahead >= its own units; a contract is the position of its request (never removed), a
// position past the last contract means none is left. printf says everything
// (examples/mpi/elves.regex reads the lines); nothing of mutexlab in it.
//
//   mutexlab mpicxx -O2 -o elves-mpi examples/mpi/elves.cpp
//   mutexlab test elves --np 4 --regex-file examples/mpi/elves.regex --mpi ./elves-mpi
//   mpicxx.openmpi -O2 -o elves examples/mpi/elves.cpp && mpirun.openmpi -np 4 ./elves
//
//   -DBROKEN_TIES          orders the requests by their timestamps alone: a request with the same
//                          timestamp as the elf's own is not ahead of it (the tie is not broken by
//                          the rank), so two elves can take the same contract
//   -DBROKEN_MAYOR_STOP    the mayor stops a round once all its contracts but one are done
//
// Arguments: pins, poison portions, contracts per round, rounds, fewest and most hamsters per
// contract (default 3 10 6 2 1 5, the problem's). An elf needs 1 pin and 1 portion per hamster.
#include <mpi.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

enum Kind { INIT_CONTRACTS = 1, CONTRACT_COMPLETED = 2, STOP = 3, REQUEST = 10, REPLY = 11, RELEASE = 12 };
enum Res { CONTRACT = 0, PINS = 1, POISON = 2 };
static const char *NAMES[] = {"contract", "pins", "poison"};

const int MAX_CONTRACTS = 32;
struct Packet {
    int kind, res, sender, ts, round, units, count;
    int hamsters[MAX_CONTRACTS];
};
const int WORDS = sizeof(Packet) / sizeof(int);

struct Request {
    int ts, rank, units;
};

struct Resource {
    int total = 0;
    std::vector<Request> queue;
    int my_ts = 0, replies = 0;
    bool asking = false;
};

static int me, size, elves, pins, poison, contracts_per_round, rounds, hmin, hmax;
static std::mutex m;
static std::condition_variable cv;
static int lamport = 0;
static Resource res[3];
static int round_no = 0;      // the round this elf is in
static bool active = false;   // INIT_CONTRACTS of round_no came, its STOP not yet
static bool finished = false;  // the last STOP came
static std::vector<int> contracts;
static std::vector<Packet> later;  // messages of a round whose INIT_CONTRACTS has not come yet

static void send(int to, Packet p) { MPI_Send(&p, WORDS, MPI_INT, to, p.kind, MPI_COMM_WORLD); }

static Packet packet(int kind, int r, int ts, int units = 0) {
    Packet p{};
    p.kind = kind;
    p.res = r;
    p.sender = me;
    p.ts = ts;
    p.round = round_no;
    p.units = units;
    return p;
}

static bool before(const Request &a, const Request &b) {
#ifdef BROKEN_TIES
    return a.ts < b.ts;
#else
    return a.ts < b.ts || (a.ts == b.ts && a.rank < b.rank);
#endif
}

static int ahead(int r) {  // units of the requests ordered before mine
    Request mine{res[r].my_ts, me, 0};
    int sum = 0;
    for (const Request &q : res[r].queue)
        if (q.rank != me || q.ts != mine.ts)
            if (before(q, mine)) sum += q.units;
    return sum;
}

static void handle(const Packet &p) {
    if (p.kind == INIT_CONTRACTS) {
        round_no = p.round;
        active = true;
        contracts.assign(p.hamsters, p.hamsters + p.count);
        for (Resource &r : res) r = Resource();
        res[CONTRACT].total = p.count;
        res[PINS].total = pins;
        res[POISON].total = poison;
        std::vector<Packet> early;
        early.swap(later);
        for (const Packet &q : early) handle(q);
        return;
    }
    if (p.kind == STOP) {
        active = false;
        finished = p.units == 1;
        return;
    }
    if (p.round > round_no) {  // another elf began a round before its INIT_CONTRACTS came here
        later.push_back(p);
        return;
    }
    if (p.round < round_no || !active) return;  // a round that is over here: nobody waits for it
    Resource &r = res[p.res];
    if (p.kind == REQUEST) {
        r.queue.push_back({p.ts, p.sender, p.units});
        send(p.sender, packet(REPLY, p.res, ++lamport));
    } else if (p.kind == REPLY) {
        if (r.asking) r.replies++;
    } else if (p.kind == RELEASE) {
        for (size_t i = 0; i < r.queue.size(); i++)
            if (r.queue[i].rank == p.sender) {
                r.queue.erase(r.queue.begin() + i);
                break;
            }
    }
}

static void listener() {
    for (;;) {
        Packet p;
        MPI_Status status;
        MPI_Recv(&p, WORDS, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
        std::lock_guard<std::mutex> lock(m);
        lamport = std::max(lamport, p.ts) + 1;
        handle(p);
        cv.notify_all();
        if (finished) return;
    }
}

// Ask for `units` of resource r; the position of the request for contracts. -1: STOP came first.
static int ask(int r, int units, std::unique_lock<std::mutex> &lock) {
    Resource &x = res[r];
    x.my_ts = ++lamport;
    x.replies = 0;
    x.asking = true;
    x.queue.push_back({x.my_ts, me, units});
    Packet p = packet(REQUEST, r, x.my_ts, units);
    for (int e = 1; e < size; e++)
        if (e != me) send(e, p);
    int round = round_no;
    cv.wait(lock, [&] { return x.replies == elves - 1 || !active || round_no != round; });
    if (!active || round_no != round) return -1;
    if (r == CONTRACT) {
        x.asking = false;
        int position = 1;
        for (const Request &q : x.queue)
            if ((q.rank != me || q.ts != x.my_ts) && before(q, Request{x.my_ts, me, 0})) position++;
        return position;
    }
    if (x.total - ahead(r) < units) {
        printf("[elf %d | t=%d] waits for %s\n", me, lamport, NAMES[r]);
        cv.wait(lock, [&] { return x.total - ahead(r) >= units; });
    }
    x.asking = false;
    printf("[elf %d | t=%d] takes %d %s\n", me, lamport, units, NAMES[r]);
    return 0;
}

static void give_back(int r, int units) {
    Resource &x = res[r];
    for (size_t i = 0; i < x.queue.size(); i++)
        if (x.queue[i].rank == me) {
            x.queue.erase(x.queue.begin() + i);
            break;
        }
    Packet p = packet(RELEASE, r, ++lamport, units);
    printf("[elf %d | t=%d] returns %d %s\n", me, lamport, units, NAMES[r]);  // before the RELEASE
    for (int e = 1; e < size; e++)
        if (e != me) send(e, p);
}

static void elf() {
    std::thread comm(listener);
    std::unique_lock<std::mutex> lock(m);
    int done = 0;
    for (;;) {
        cv.wait(lock, [&] { return finished || (active && round_no > done); });
        if (finished) break;
        int round = round_no;
        for (;;) {
            int position = ask(CONTRACT, 1, lock);
            if (position < 0) break;
            if (position > (int)contracts.size()) {
                printf("[elf %d | t=%d] no contract left in round %d\n", me, lamport, round);
                break;
            }
            int hamsters = contracts[position - 1];
            printf("[elf %d | t=%d] takes contract %d.%d (%d hamsters)\n", me, lamport, round, position, hamsters);
            ask(PINS, 1, lock);
            ask(POISON, hamsters, lock);
            printf("[elf %d | t=%d] kills %d hamsters, contract %d.%d\n", me, lamport, hamsters, round, position);
            give_back(PINS, 1);
            give_back(POISON, hamsters);
            printf("[elf %d | t=%d] reports contract %d.%d to the mayor\n", me, lamport, round, position);
            Packet p = packet(CONTRACT_COMPLETED, CONTRACT, ++lamport, position);
            send(0, p);
        }
        done = round;
    }
    printf("[elf %d | t=%d] goes home\n", me, lamport);
    lock.unlock();
    comm.join();
}

static void mayor() {
    srand(2024);  // the same town every run: a run played again must do the same
    for (int r = 1; r <= rounds; r++) {
        Packet p = packet(INIT_CONTRACTS, CONTRACT, ++lamport);
        p.round = r;
        p.count = contracts_per_round;
        std::string list;
        for (int i = 0; i < contracts_per_round; i++) {
            p.hamsters[i] = hmin + rand() % (hmax - hmin + 1);
            list += " " + std::to_string(p.hamsters[i]);
        }
        printf("[mayor | t=%d] round %d begins, contracts (hamsters):%s\n", lamport, r, list.c_str());
        for (int e = 1; e < size; e++) send(e, p);
        int completed = 0;
#ifdef BROKEN_MAYOR_STOP
        int needed = contracts_per_round > 1 ? contracts_per_round - 1 : 1;
#else
        int needed = contracts_per_round;
#endif
        while (completed < needed) {
            Packet in;
            MPI_Status status;
            MPI_Recv(&in, WORDS, MPI_INT, MPI_ANY_SOURCE, CONTRACT_COMPLETED, MPI_COMM_WORLD, &status);
            lamport = std::max(lamport, in.ts) + 1;
            completed++;
            printf("[mayor | t=%d] contract %d.%d done by elf %d\n", lamport, in.round, in.units, in.sender);
        }
        printf("[mayor | t=%d] round %d is over, STOP to every elf\n", lamport, r);
        Packet stop = packet(STOP, CONTRACT, ++lamport, r == rounds ? 1 : 0);
        stop.round = r;
        for (int e = 1; e < size; e++) send(e, stop);
    }
    printf("[mayor | t=%d] no more rounds: the town is clean\n", lamport);
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    elves = size - 1;
    int given[6] = {3, 10, 6, 2, 1, 5};
    for (int i = 0; i < 6 && i + 1 < argc; i++) given[i] = atoi(argv[i + 1]);
    pins = given[0], poison = given[1], contracts_per_round = given[2], rounds = given[3];
    hmin = given[4], hmax = given[5];
    if (size < 2 || contracts_per_round > MAX_CONTRACTS || hmin < 1 || hmax < hmin || hmax > poison || pins < 1) {
        if (me == 0) fprintf(stderr, "usage: mpirun -np 1+ELVES elves [pins poison contracts rounds hmin hmax]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (me == 0)
        mayor();
    else
        elf();
    MPI_Finalize();
    return 0;
}
