// A ledger of 5,000 bytes (past Open MPI's eager size) passed round a ring in lock step, C++ style:
// each round every rank shifts the ledger one place on with MPI_Sendrecv on a duplicate of the
// world; the rank whose turn it is writes its line into the ledger between two prints, so the
// shifts order the turns. At the end MPI_Allreduce of the ledger's checksum. -DBROKEN_LAST_SEND:
// in the last round the last rank, which needs nothing more, only MPI_Sends its ledger on: its
// neighbour's Sendrecv sends to a rank that never receives, which waits for ever under Open MPI
// and MPICH at this size. Usage: sendrecv_ledger [ROUNDS]
#include <mpi.h>

#include <cstdlib>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm ring;
    MPI_Comm_dup(MPI_COMM_WORLD, &ring);
    int me = 0, np = 1;
    MPI_Comm_rank(ring, &me);
    MPI_Comm_size(ring, &np);
    const int rounds = (argc > 1 ? std::atoi(argv[1]) : 1) * np;
    std::vector<char> ledger(5000, '.'), incoming(5000);
    const int next = (me + 1) % np, prev = (me + np - 1) % np;
    for (int round = 0; round < rounds; ++round) {
        if (round % np == me) {
            std::cout << "rank " << me << " takes the ledger (round " << round << ")" << std::endl;
            std::string line = "round " + std::to_string(round) + " by " + std::to_string(me) + ";";
            std::copy(line.begin(), line.end(), ledger.begin() + (round * 16) % 4900);
            std::cout << "rank " << me << " passes it on" << std::endl;
        }
#ifdef BROKEN_LAST_SEND
        if (round == rounds - 1 && me == np - 1) {
            MPI_Send(ledger.data(), 5000, MPI_CHAR, next, 7, ring);
            continue;
        }
#endif
        MPI_Status st;
        MPI_Sendrecv(ledger.data(), 5000, MPI_CHAR, next, 7, incoming.data(), 5000, MPI_CHAR, prev, 7, ring, &st);
        ledger.swap(incoming);
    }
    long mine = std::accumulate(ledger.begin(), ledger.end(), 0L), all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_SUM, ring);
    if (me == 0) std::cout << "checksum " << all << std::endl;
    MPI_Comm_free(&ring);
    MPI_Finalize();
    return 0;
}
