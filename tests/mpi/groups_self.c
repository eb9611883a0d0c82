/* Groups, MPI_Comm_create and MPI_COMM_SELF (tests/test_mpi_groups.py), for 4 ranks: each rank
 * checks what it got and, all well, enters and leaves "cs" through mutexlab.h; a wrong value ends
 * the rank with status 1 (the crashed finding), naming the check on stderr.
 * -DBROKEN_ORDER: the test's own check expects MPI_Comm_create's ranks by world rank, not by the
 * group's order (a crash). -DOUTSIDER: MPI_Comm_create with a group of MPI_COMM_SELF's parent's
 * non-member (MPI_ERR_GROUP under any MPI). */
#include <mpi.h>
#include <mutexlab.h>
#include <stdio.h>
#include <stdlib.h>

static void check(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "check failed: %s\n", what);
        exit(1);
    }
}

int main(int argc, char **argv) {
    int rank, size, r, s, x;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    check(size == 4, "4 ranks");

    /* MPI_COMM_SELF: one rank, itself; a message to its rank 0 comes back to this rank */
    MPI_Comm_rank(MPI_COMM_SELF, &r);
    MPI_Comm_size(MPI_COMM_SELF, &s);
    check(r == 0 && s == 1, "MPI_COMM_SELF is this rank alone");
    int sent = 40 + rank;
    MPI_Request to_self; /* not MPI_Send: MPICH's blocks until the receive below is posted */
    MPI_Isend(&sent, 1, MPI_INT, 0, 7, MPI_COMM_SELF, &to_self);
    int flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    check(!flag, "a message on MPI_COMM_SELF is not one of the world");
    MPI_Status st;
    MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_SELF, &st);
    MPI_Wait(&to_self, MPI_STATUS_IGNORE);
    check(x == 40 + rank && st.MPI_SOURCE == 0, "a message to oneself on MPI_COMM_SELF");
    MPI_Comm me;
    MPI_Comm_dup(MPI_COMM_SELF, &me);
    x = rank;
    MPI_Bcast(&x, 1, MPI_INT, 0, me);
    MPI_Barrier(me);
    check(x == rank, "a broadcast on a copy of MPI_COMM_SELF");
    MPI_Comm_free(&me);

    /* groups: the world's, reversed, without rank 0 */
    MPI_Group world, back, tail;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_size(world, &s);
    MPI_Group_rank(world, &r);
    check(s == 4 && r == rank, "the world's group");
    int reversed[3] = {3, 2, 1}, zero[1] = {0};
    MPI_Group_incl(world, 3, reversed, &back);
    MPI_Group_excl(world, 1, zero, &tail);
    MPI_Group_rank(back, &r);
    check(rank == 0 ? r == MPI_UNDEFINED : r == 3 - rank, "a rank in an included group");
    int from[3] = {0, 1, 2}, to[3];
    MPI_Group_translate_ranks(tail, 3, from, back, to);
    check(to[0] == 2 && to[1] == 1 && to[2] == 0, "translated ranks");

    /* MPI_Comm_create: ranks in the group's order; rank 0, outside it, gets MPI_COMM_NULL */
    MPI_Comm three;
#ifdef OUTSIDER
    MPI_Group mine;
    MPI_Comm_group(MPI_COMM_SELF, &mine);
    MPI_Comm_create(MPI_COMM_SELF, back, &three);
#endif
    MPI_Comm_create(MPI_COMM_WORLD, back, &three);
    if (rank == 0) {
        check(three == MPI_COMM_NULL, "MPI_Comm_create outside the group gives MPI_COMM_NULL");
    } else {
        MPI_Comm_rank(three, &r);
        MPI_Comm_size(three, &s);
#ifdef BROKEN_ORDER
        check(r == rank - 1, "MPI_Comm_create ranks by world rank");
#else
        check(r == 3 - rank && s == 3, "MPI_Comm_create ranks in the group's order");
#endif
        int sum = 0;
        MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, three);
        check(sum == 6, "an allreduce on the created communicator");
        x = rank;
        MPI_Bcast(&x, 1, MPI_INT, 0, three); /* its rank 0 is world rank 3 */
        check(x == 3, "a broadcast from the created communicator's rank 0");
        MPI_Comm_free(&three);
    }
    MPI_Group_free(&back);
    MPI_Group_free(&tail);
    MPI_Group_free(&world);
    check(world == MPI_GROUP_NULL, "a freed group is MPI_GROUP_NULL");
    MPI_Barrier(MPI_COMM_WORLD);
    mutexlab_enter("cs");
    mutexlab_exit("cs");
    MPI_Finalize();
    return 0;
}
