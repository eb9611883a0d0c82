/* Persistent requests and MPI_Comm_split (tests/test_mpi_persistent.py), for 4 ranks: each rank
 * checks what it got and, all well, enters and leaves "cs" through mutexlab.h; a wrong value ends
 * the rank with status 1 (the crashed finding), naming the check on stderr.
 * -DBROKEN_KEY_ORDER: the test's own check expects split ranks by old rank, not by key (a crash).
 * -DSTART_ACTIVE: a persistent receive started twice (MPI_ERR_REQUEST under any MPI). */
#include <mpi.h>
#include <mutexlab.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 20

static void check(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "check failed: %s\n", what);
        exit(1);
    }
}

static void persistent(int rank, int size) {
    int out = 0, in = -1, right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Request ring[2];
    MPI_Status st[2];
    /* a send and a receive made once, started ROUNDS times together (Startall over mixed kinds) */
    MPI_Recv_init(&in, 1, MPI_INT, left, 1, MPI_COMM_WORLD, &ring[0]);
    MPI_Send_init(&out, 1, MPI_INT, right, 1, MPI_COMM_WORLD, &ring[1]);
    for (int i = 0; i < ROUNDS; i++) {
        out = rank * 100 + i; /* the buffer is read when the send starts */
        MPI_Startall(2, ring);
        MPI_Waitall(2, ring, st);
        check(in == left * 100 + i, "a restarted persistent receive gets the round's message");
        check(st[0].MPI_SOURCE == left && st[0].MPI_TAG == 1, "a persistent receive's status");
        check(ring[0] != MPI_REQUEST_NULL && ring[1] != MPI_REQUEST_NULL, "a completed persistent request stays");
    }
    /* inactive: a wait returns at once with an empty status, a test says done, Waitany finds none */
    int flag = 0, index = 0;
    MPI_Wait(&ring[0], &st[0]);
    check(st[0].MPI_SOURCE == MPI_ANY_SOURCE && st[0].MPI_TAG == MPI_ANY_TAG, "a wait of an inactive request");
    MPI_Test(&ring[1], &flag, MPI_STATUS_IGNORE);
    check(flag == 1, "a test of an inactive request");
    MPI_Waitany(2, ring, &index, MPI_STATUS_IGNORE);
    check(index == MPI_UNDEFINED, "MPI_Waitany over inactive requests only");
    MPI_Request_free(&ring[0]);
    MPI_Request_free(&ring[1]);
    check(ring[0] == MPI_REQUEST_NULL && ring[1] == MPI_REQUEST_NULL, "MPI_Request_free of inactive requests");

    /* a started receive is posted when started: an MPI_Irecv posted before it is matched first */
    if (rank == 0) {
        int a = -1, b = -1;
        MPI_Request late, early;
        MPI_Recv_init(&a, 1, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &late);
        MPI_Irecv(&b, 1, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &early);
        MPI_Start(&late);
        MPI_Wait(&early, MPI_STATUS_IGNORE);
        MPI_Wait(&late, MPI_STATUS_IGNORE);
        check(b == 1 && a == 2, "the receive posted first gets the first message");
        MPI_Request_free(&late);
#ifdef START_ACTIVE
        MPI_Recv_init(&a, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &late);
        MPI_Start(&late);
        MPI_Start(&late); /* erroneous: it is active */
#endif
    } else if (rank == 1) {
        int one = 1, two = 2;
        MPI_Send(&one, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
        MPI_Ssend(&two, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
    }
    /* a synchronous persistent send, restarted: each start waits for its receive */
    int token = rank;
    MPI_Request s;
    MPI_Ssend_init(&token, 1, MPI_INT, right, 3, MPI_COMM_WORLD, &s);
    for (int i = 0; i < 3; i++) {
        int got = -1;
        token = rank + i;
        MPI_Start(&s);
        MPI_Recv(&got, 1, MPI_INT, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&s, MPI_STATUS_IGNORE);
        check(got == left + i, "a restarted synchronous persistent send");
    }
    MPI_Request_free(&s);
}

static void split(int rank, int size) {
    /* two colors, keys reversing the order: world 0 1 2 3 -> evens {2, 0}, odds {3, 1} */
    MPI_Comm half, again, most;
    int hrank = -1, hsize = 0;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    MPI_Comm_rank(half, &hrank);
    MPI_Comm_size(half, &hsize);
    check(hsize == size / 2, "the size of a color's communicator");
#ifdef BROKEN_KEY_ORDER
    check(hrank == rank / 2, "ranks by old rank (a wrong expectation: by key first)");
#endif
    check(hrank == (size - 1 - rank) / 2, "ranks ordered by key");
    /* point to point on the half: ranks are the half's; a message on the world with the same tag
     * is not taken by a receive on the half, though it was sent first */
    int peer = 1 - hrank, mine = 1000 + rank, got = -1, world_got = -1;
    MPI_Status st;
    if (hrank == 0) {
        MPI_Send(&mine, 1, MPI_INT, rank + 2 < size ? rank + 2 : rank - 2, 7, MPI_COMM_WORLD);
        MPI_Send(&mine, 1, MPI_INT, peer, 7, half);
    } else {
        MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 7, half, &st);
        check(st.MPI_SOURCE == 0, "the source is the half's rank");
        check(got == 1000 + (rank + 2 < size ? rank + 2 : rank - 2), "a message on the half from its rank 0");
        MPI_Recv(&world_got, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &st);
        check(world_got == got && st.MPI_SOURCE == (rank + 2 < size ? rank + 2 : rank - 2),
              "the world's message, received on the world");
    }
    /* collectives on the half, and on a copy of it */
    int sum = 0, root_world = -1;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, half);
    check(sum == (rank % 2 ? 1 + 3 : 0 + 2), "MPI_Allreduce on the half");
    MPI_Comm_dup(half, &again);
    if (hrank == 0) root_world = rank;
    MPI_Bcast(&root_world, 1, MPI_INT, 0, again);
    check(root_world == (rank % 2 ? 3 : 2), "MPI_Bcast on a copy of the half");
    MPI_Barrier(again);
    MPI_Comm_free(&again);
    MPI_Comm_free(&half);
    /* MPI_UNDEFINED: no communicator for the last rank */
    MPI_Comm_split(MPI_COMM_WORLD, rank == size - 1 ? MPI_UNDEFINED : 5, rank, &most);
    if (rank == size - 1) {
        check(most == MPI_COMM_NULL, "MPI_UNDEFINED gives MPI_COMM_NULL");
        return;
    }
    int msize = 0, mrank = -1;
    MPI_Comm_size(most, &msize);
    MPI_Comm_rank(most, &mrank);
    check(msize == size - 1 && mrank == rank, "a communicator without the last rank");
    sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, most);
    check(sum == (size - 1) * (size - 2) / 2, "MPI_Allreduce without the last rank");
    MPI_Comm_free(&most);
}

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 4) {
        fprintf(stderr, "run with 4 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    persistent(rank, size);
    split(rank, size);
    mutexlab_enter("cs");
    printf("rank %d enters\n", rank);
    printf("rank %d leaves\n", rank);
    mutexlab_exit("cs");
    MPI_Finalize();
    return 0;
}
