// The mason bees with an auction for reeds, in C++ as another group wrote it: rank 0 runs an
// auctioneer std::thread (MPI_THREAD_MULTIPLE) and is a bee too. A bee bids for a reed (its price:
// its rank, the higher bid wins); bids wait in a std::priority_queue, and a reed with room for
// another bee's eggs goes to the best bid whenever it is free. Flowers are counted out by the same
// thread in arrival order (a std::deque). Requests come on one duplicated communicator (tags as
// kinds, MPI_ANY_TAG), answers on another, so rank 0's bee never takes a request for its answer.
// Prints as examples/mpi/bees_printf.regex reads. Arguments: reeds flowers eggs cocoons.
//   -DBROKEN_OUTBID  a bid better than a busy reed's holder's takes that reed too (re-auctioned)
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <queue>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

enum Kind { BID = 1, REED_BACK = 2, FLOWER_ASK = 3, FLOWER_BACK = 4, BYE = 5 };

struct Bid {
    int price, bee;
    bool operator<(const Bid &o) const { return price < o.price; }
};

int reeds = 3, flowers = 3, eggs = 5, cocoons = 15, np_ = 0;
MPI_Comm asks, answers;

struct Reed {
    bool busy = false;
    int holder_price = 0, bees = 0, laid = 0;
};

void award(int bee, int reed, int laid) {
    int a[2] = {reed, laid};
    MPI_Send(a, 2, MPI_INT, bee, BID, answers);
}

void auctioneer() {
    std::vector<Reed> reed(reeds);
    std::priority_queue<Bid> bids;
    std::deque<int> flower_queue;
    int flowers_out = 0, byes = 0;
    auto has_room = [&](const Reed &r) { return (r.bees + 1) * eggs <= cocoons; };
    auto auction = [&]() {
        while (!bids.empty()) {
            auto free = std::find_if(reed.begin(), reed.end(), [&](const Reed &r) { return !r.busy && has_room(r); });
            bool any_room = std::any_of(reed.begin(), reed.end(), has_room);
            if (!any_room) {  // no reed will ever take another bee: everyone still bidding retires
                award(bids.top().bee, 0, 0);
                bids.pop();
                continue;
            }
            if (free == reed.end()) return;
            Bid best = bids.top();
            bids.pop();
            free->busy = true;
            free->holder_price = best.price;
            free->bees++;
            award(best.bee, int(free - reed.begin()) + 1, free->laid);
        }
    };
    while (byes < np_) {
        int m[3];
        MPI_Status st;
        MPI_Recv(m, 3, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, asks, &st);
        switch (st.MPI_TAG) {
        case BID: {
#ifdef BROKEN_OUTBID
            auto outbid = std::find_if(reed.begin(), reed.end(),
                                       [&](const Reed &r) { return r.busy && has_room(r) && m[1] > r.holder_price; });
            if (outbid != reed.end()) {
                outbid->holder_price = m[1];
                outbid->bees++;
                award(m[0], int(outbid - reed.begin()) + 1, outbid->laid);
                break;
            }
#endif
            bids.push({m[1], m[0]});
            auction();
            break;
        }
        case REED_BACK:
            reed[m[1] - 1].busy = false;
            reed[m[1] - 1].laid += m[2];
            auction();
            break;
        case FLOWER_ASK:
            if (flowers_out < flowers) {
                flowers_out++;
                MPI_Send(m, 1, MPI_INT, m[0], FLOWER_ASK, answers);
            } else {
                flower_queue.push_back(m[0]);
            }
            break;
        case FLOWER_BACK:
            if (!flower_queue.empty()) {
                int next = flower_queue.front();
                flower_queue.pop_front();
                MPI_Send(m, 1, MPI_INT, next, FLOWER_ASK, answers);
            } else {
                flowers_out--;
            }
            break;
        case BYE:
            byes++;
            break;
        }
    }
}

void ask(int kind, int a, int b, int c) {
    int m[3] = {a, b, c};
    MPI_Send(m, 3, MPI_INT, 0, kind, asks);
}

}  // namespace

int main(int argc, char **argv) {
    int provided, me;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_Comm_dup(MPI_COMM_WORLD, &asks);
    MPI_Comm_dup(MPI_COMM_WORLD, &answers);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np_);
    if (argc > 4) reeds = std::atoi(argv[1]), flowers = std::atoi(argv[2]), eggs = std::atoi(argv[3]), cocoons = std::atoi(argv[4]);
    std::thread keeper;
    if (me == 0) keeper = std::thread(auctioneer);

    const int bee = me + 1;
    int got[2];
    ask(BID, me, 10 * bee, 0);
    MPI_Recv(got, 2, MPI_INT, 0, BID, answers, MPI_STATUS_IGNORE);
    if (got[0] == 0) {
        std::printf("bee %d retires\n", bee);
    } else {
        int in_reed = got[1];
        std::printf("bee %d enters reed %d\n", bee, got[0]);
        for (int egg = 1; egg <= eggs; egg++) {
            int ok;
            ask(FLOWER_ASK, me, 0, 0);
            MPI_Recv(&ok, 1, MPI_INT, 0, FLOWER_ASK, answers, MPI_STATUS_IGNORE);
            std::printf("bee %d enters flower\n", bee);
            usleep(200);
            std::printf("bee %d leaves flower\n", bee);
            ask(FLOWER_BACK, me, 0, 0);
            std::printf("bee %d lays egg %d in reed %d (%d in reed)\n", bee, egg, got[0], ++in_reed);
        }
        std::printf("bee %d leaves reed %d\n", bee, got[0]);
        ask(REED_BACK, me, got[0], eggs);
        std::printf("bee %d dies after %d eggs\n", bee, eggs);
    }
    ask(BYE, me, 0, 0);
    if (keeper.joinable()) keeper.join();
    MPI_Comm_free(&asks);
    MPI_Comm_free(&answers);
    MPI_Finalize();
    return 0;
}
