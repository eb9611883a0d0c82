// A token ring laid out as a Cartesian topology, in C++ as a course hands it in: MPI_Dims_create
// and MPI_Cart_create make a periodic one-dimensional grid, MPI_Cart_shift finds the neighbours,
// MPI_Cart_coords names the rank by its place; the token carries a round and a hop count the
// holder checks (a token that is not the one expected: fprintf(stderr) and MPI_Abort). Lines on
// std::cout, some ended by std::endl and some by '\n'; diagnostics on std::cerr and stderr, mixed.
// Coordinate 0 starts with the token. -DBROKEN_OPEN_GRID makes the grid not periodic (periods
// {0}): the last rank's right neighbour is MPI_PROC_NULL, its token vanishes, and coordinate 0's
// next receive from MPI_PROC_NULL completes at once, empty. Argument: rounds (default 1).
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

struct Token {
    int round;
    int hops;
};

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int size, rounds = argc > 1 ? std::atoi(argv[1]) : 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int dims[1] = {0};
#ifdef BROKEN_OPEN_GRID
    int periods[1] = {0};
#else
    int periods[1] = {1};
#endif
    MPI_Dims_create(size, 1, dims);
    MPI_Comm ring;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 1, &ring);
    if (ring == MPI_COMM_NULL) {
        std::fprintf(stderr, "no place on the grid\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    int me, coords[1], left, right, ndims = 0, status = 0;
    MPI_Comm_rank(ring, &me);
    MPI_Cart_coords(ring, me, 1, coords);
    MPI_Cart_shift(ring, 0, 1, &left, &right);
    MPI_Cartdim_get(ring, &ndims);
    MPI_Topo_test(ring, &status);
    if (ndims != 1 || status != MPI_CART) {
        std::cerr << "rank " << me << ": not a one-dimensional grid" << std::endl;
        MPI_Abort(MPI_COMM_WORLD, 4);
    }
    std::cerr << "(" << coords[0] << ") left " << left << ", right " << right << '\n';
    Token token{0, 0};
    for (int r = 0; r < rounds; r++) {
        if (coords[0] != 0 || r > 0) {
            MPI_Status st;
            MPI_Recv(&token, 2, MPI_INT, left, 7, ring, &st);
            if (st.MPI_SOURCE != MPI_PROC_NULL && token.round != r) {
                std::fprintf(stderr, "(%d) got the token of round %d in round %d\n", coords[0], token.round, r);
                MPI_Abort(MPI_COMM_WORLD, 5);
            }
        }
        std::cout << "(" << coords[0] << ") holds the token, round " << r << std::endl;
        std::cout << "(" << coords[0] << ") passes the token on\n";
        token.hops++;
        if (coords[0] == dims[0] - 1) token.round = r + 1;
        if (!(coords[0] == dims[0] - 1 && r == rounds - 1)) MPI_Send(&token, 2, MPI_INT, right, 7, ring);
    }
    std::fprintf(stderr, "(%d) done after %d hops\n", coords[0], token.hops);
    MPI_Comm_free(&ring);
    MPI_Finalize();
    return 0;
}
