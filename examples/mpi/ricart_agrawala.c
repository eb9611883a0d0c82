/* Ricart–Agrawala in MPI, as a student writes it: a communication thread blocked in
 * MPI_Recv(MPI_ANY_SOURCE, MPI_ANY_TAG) answers the other ranks while the main thread asks for the
 * critical section; Lamport clocks by hand; messages of a derived struct type; printf when a rank
 * enters and leaves. Tested unchanged under mutexlab's director (docs/mpi.md):
 *
 *   mutexlab mpicc -O2 -o ra-mpi examples/mpi/ricart_agrawala.c
 *   mutexlab test mutex --np 3 --regex '(?P<enter>enters)|(?P<exit>leaves)' --mpi ./ra-mpi
 *
 *   -DBROKEN_NO_PRIORITY   defers a REQUEST only while inside the critical section, never for
 *                          its own earlier pending request: two ranks asking at once both enter
 *   -DBROKEN_FORGET_DEFERRED  never answers the requests it deferred: a rank waits for ever
 *                          (caught with --entries, which says how often each rank must enter)
 *
 * Argument: how many times each rank enters (default 1). A rank that is done tells every rank,
 * itself included, with DONE; the communication thread ends when all have (no request can come
 * any more, and its own replies have all come), and main joins it. */
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

static int rank, size, lamport, my_ts, requesting, in_cs, replies, done_ranks;
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
            if (++replies == size - 1) pthread_cond_signal(&granted);
        } else if (status.MPI_TAG == DONE && ++done_ranks == size) {
            pthread_mutex_unlock(&lock);
            return NULL;
        }
        pthread_mutex_unlock(&lock);
    }
}

int main(int argc, char **argv) {
    int provided, rounds = argc > 1 ? atoi(argv[1]) : 1;
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

    pthread_t thread;
    pthread_create(&thread, NULL, communication, NULL);
    for (int round = 0; round < rounds; round++) {
        pthread_mutex_lock(&lock);
        requesting = 1;
        replies = 0;
        my_ts = ++lamport; /* every REQUEST carries the same stamp */
        for (int r = 0; r < size; r++)
            if (r != rank) send_packet(r, REQUEST, my_ts);
        while (replies < size - 1) pthread_cond_wait(&granted, &lock);
        in_cs = 1;
        pthread_mutex_unlock(&lock);

        printf("rank %d enters the critical section (clock %d)\n", rank, my_ts);
        usleep(1000);
        printf("rank %d leaves the critical section\n", rank);

        pthread_mutex_lock(&lock);
        in_cs = requesting = 0;
        for (int r = 0; r < size; r++)
            if (deferred[r]) {
                deferred[r] = 0;
#ifndef BROKEN_FORGET_DEFERRED
                send_packet(r, REPLY, ++lamport);
#endif
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
