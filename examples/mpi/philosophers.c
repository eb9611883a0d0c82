/* The dining philosophers in MPI, as a student writes them: rank r is philosopher r+1, who eats
 * with fork r+1 (its left) and fork (r+1) mod N + 1 (its right), each shared with one neighbour.
 * A hungry philosopher asks its two neighbours for their forks by Ricart–Agrawala among
 * neighbours: REQUEST with its Lamport clock, a REPLY gives the fork up, a philosopher that eats or
 * asked earlier defers its REPLY until it has eaten. A communication thread blocked in
 * MPI_Recv(MPI_ANY_SOURCE, MPI_ANY_TAG) answers; printf when it picks up and puts down a fork, and
 * when its meal starts and ends. Tested unchanged (docs/mpi.md#philosophers):
 *
 *   mutexlab mpicc -O2 -o phil-mpi examples/mpi/philosophers.c
 *   mutexlab test philosophers --np 3 --regex-file examples/mpi/philosophers.regex --mpi ./phil-mpi
 *
 *   -DBROKEN_NO_PRIORITY   defers a REQUEST only while eating, never for its own earlier pending
 *                          request: two hungry neighbours both give up and both take the fork
 *
 * Argument: how many meals each philosopher eats (default 1). A philosopher that is done tells
 * every rank, itself included, with DONE; the communication thread ends when all have. */
#include <mpi.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { REQUEST = 1, REPLY = 2, DONE = 3 };

typedef struct {
    int clock; /* the sender's Lamport clock */
    int rank;
} packet;

static int rank, size, lamport, my_ts, requesting, in_cs, replies, done_ranks, left, right, neighbours;
static int *deferred;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t granted = PTHREAD_COND_INITIALIZER;
static MPI_Datatype PACKET;

static void send_packet(int to, int tag, int clock) { /* with lock held */
    packet p = {clock, rank};
    MPI_Send(&p, 1, PACKET, to, tag, MPI_COMM_WORLD);
}

static int __attribute__((unused)) earlier(int ts_a, int rank_a, int ts_b, int rank_b) {
    return ts_a < ts_b || (ts_a == ts_b && rank_a < rank_b);
}

static void *communication(void *unused) {
    (void)unused;
    for (;;) {
        packet p;
        MPI_Status status;
        MPI_Recv(&p, 1, PACKET, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
        pthread_mutex_lock(&lock);
        lamport = (p.clock > lamport ? p.clock : lamport) + 1;
        if (status.MPI_TAG == REQUEST) {
#ifdef BROKEN_NO_PRIORITY
            int defer = in_cs;
#else
            int defer = in_cs || (requesting && earlier(my_ts, rank, p.clock, p.rank));
#endif
            if (defer)
                deferred[status.MPI_SOURCE] = 1;
            else
                send_packet(status.MPI_SOURCE, REPLY, ++lamport);
        } else if (status.MPI_TAG == REPLY) {
            if (++replies == neighbours) pthread_cond_signal(&granted);
        } else if (status.MPI_TAG == DONE && ++done_ranks == size) {
            pthread_mutex_unlock(&lock);
            return NULL;
        }
        pthread_mutex_unlock(&lock);
    }
}

int main(int argc, char **argv) {
    int provided, meals = argc > 1 ? atoi(argv[1]) : 1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int lengths[2] = {1, 1};
    MPI_Aint offsets[2] = {offsetof(packet, clock), offsetof(packet, rank)};
    MPI_Datatype types[2] = {MPI_INT, MPI_INT};
    MPI_Type_create_struct(2, lengths, offsets, types, &PACKET);
    MPI_Type_commit(&PACKET);
    deferred = calloc((size_t)size, sizeof *deferred);

    left = (rank + size - 1) % size; /* the neighbours, who share a fork with it */
    right = (rank + 1) % size;
    neighbours = left == right ? 1 : 2;
    int fork_left = rank + 1, fork_right = (rank + 1) % size + 1;

    pthread_t thread;
    pthread_create(&thread, NULL, communication, NULL);
    for (int meal = 0; meal < meals; meal++) {
        pthread_mutex_lock(&lock);
        requesting = 1;
        replies = 0;
        my_ts = ++lamport; /* both REQUESTs carry the same stamp */
        send_packet(left, REQUEST, my_ts);
        if (right != left) send_packet(right, REQUEST, my_ts);
        while (replies < neighbours) pthread_cond_wait(&granted, &lock);
        in_cs = 1;
        pthread_mutex_unlock(&lock);

        printf("philosopher %d picks up fork %d\n", rank + 1, fork_left);
        printf("philosopher %d picks up fork %d\n", rank + 1, fork_right);
        printf("philosopher %d starts its meal (clock %d)\n", rank + 1, my_ts);
        usleep(1000);
        printf("philosopher %d ends its meal\n", rank + 1);
        printf("philosopher %d puts down fork %d\n", rank + 1, fork_left);
        printf("philosopher %d puts down fork %d\n", rank + 1, fork_right);
        printf("philosopher %d thinks\n", rank + 1);

        pthread_mutex_lock(&lock);
        in_cs = requesting = 0;
        for (int r = 0; r < size; r++)
            if (deferred[r]) {
                deferred[r] = 0;
                send_packet(r, REPLY, ++lamport);
            }
        pthread_mutex_unlock(&lock);
    }
    pthread_mutex_lock(&lock);
    for (int r = 0; r < size; r++) send_packet(r, DONE, ++lamport); /* itself too: its thread ends */
    pthread_mutex_unlock(&lock);
    pthread_join(thread, NULL);
    MPI_Type_free(&PACKET);
    free(deferred);
    MPI_Finalize();
    return 0;
}
