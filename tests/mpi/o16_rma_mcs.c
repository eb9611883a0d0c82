/* The MCS queue lock over one-sided communication, after "Using Advanced MPI" (Gropp, Hoefler,
 * Thakur, Lusk), as a course hands it in: one passive epoch for the whole run (MPI_Win_lock_all),
 * each rank's window holding its `locked` flag and its successor `next`, rank 0's also the queue's
 * tail. Acquire: swap itself into the tail (MPI_Fetch_and_op, MPI_REPLACE); with a predecessor, set
 * its own flag, link itself as the predecessor's next (MPI_Accumulate, MPI_REPLACE) and spin on its
 * own flag (MPI_Fetch_and_op MPI_NO_OP + MPI_Win_flush on itself). Release: if no successor, swing
 * the tail back with MPI_Compare_and_swap; if that fails, wait for the successor to link itself,
 * then clear its flag. -DBROKEN_LINK_FIRST links itself to its predecessor before setting its own
 * flag: a predecessor that releases in between clears a flag the rank then sets, and it spins for
 * ever. Argument: entries per rank (default 1). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { LOCKED = 0, NEXT = 1, TAIL = 2 };
static int me;
static int *mem;
static MPI_Win win;

static int read_own(int at) {
    int v;
    MPI_Fetch_and_op(NULL, &v, MPI_INT, me, at, MPI_NO_OP, win);
    MPI_Win_flush(me, win);
    return v;
}

static void write_at(int rank, int at, int value) {
    MPI_Accumulate(&value, 1, MPI_INT, rank, at, 1, MPI_INT, MPI_REPLACE, win);
    MPI_Win_flush(rank, win);
}

static void acquire(void) {
    int pred, nobody = -1;
    write_at(me, NEXT, -1);
    MPI_Fetch_and_op(&me, &pred, MPI_INT, 0, TAIL, MPI_REPLACE, win);
    MPI_Win_flush(0, win);
    if (pred == -1) return;
#ifdef BROKEN_LINK_FIRST
    write_at(pred, NEXT, me);
    write_at(me, LOCKED, 1);
#else
    write_at(me, LOCKED, 1);
    write_at(pred, NEXT, me);
#endif
    (void)nobody;
    while (read_own(LOCKED) == 1) {
    }
}

static void release(void) {
    int next = read_own(NEXT);
    if (next == -1) {
        int old, nobody = -1;
        MPI_Compare_and_swap(&nobody, &me, &old, MPI_INT, 0, TAIL, win);
        MPI_Win_flush(0, win);
        if (old == me) return;
        while ((next = read_own(NEXT)) == -1) {
        }
    }
    write_at(next, LOCKED, 0);
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Win_allocate(3 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    mem[LOCKED] = 0;
    mem[NEXT] = -1;
    mem[TAIL] = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    for (int r = 0; r < rounds; r++) {
        acquire();
        printf("Process %d: entering section\n", me);
        printf("Process %d: leaving section\n", me);
        release();
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
