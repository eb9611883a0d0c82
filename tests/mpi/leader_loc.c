/* A leader elected by MPI_MAXLOC (MPI_2INT: the greatest value, the least rank among equals), the
 * quickest rank by MPI_MINLOC (MPI_DOUBLE_INT), both by MPI_Allreduce and MPI_Reduce; a wrong
 * answer is exit status 1. The leader alone enters the critical section, once. Any number of ranks. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    int me, n, bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    struct { int value, rank; } mine = {me % 2 ? 10 : 5 + me, me}, best, least;
    struct { double value; int rank; } time = {1.5 - 0.25 * (me % 3), me}, fastest;
    MPI_Allreduce(&mine, &best, 1, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD);
    MPI_Allreduce(&mine, &least, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
    MPI_Reduce(&time, &fastest, 1, MPI_DOUBLE_INT, MPI_MINLOC, n - 1, MPI_COMM_WORLD);
    int want = 0, low = 0, quick = 0; /* what every rank computes alone */
    for (int r = 1; r < n; r++) {
        int v = r % 2 ? 10 : 5 + r, w = want % 2 ? 10 : 5 + want, l = low % 2 ? 10 : 5 + low;
        if (v > w) want = r;
        if (v < l) low = r;
        if (1.5 - 0.25 * (r % 3) < 1.5 - 0.25 * (quick % 3)) quick = r;
    }
    int wanted = want % 2 ? 10 : 5 + want, lowest = low % 2 ? 10 : 5 + low;
    if (best.rank != want || best.value != wanted || least.rank != low || least.value != lowest) bad = 1;
    if (me == n - 1 && (fastest.rank != quick || fastest.value != 1.5 - 0.25 * (quick % 3))) bad = 1;
    if (me == best.rank) {
        printf("rank %d enters\n", me);
        printf("rank %d leaves\n", me);
    }
    MPI_Finalize();
    return bad;
}
