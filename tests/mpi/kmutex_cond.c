// k-mutex (Ricart-Agrawala with K slots): a pthread listener in MPI_Recv(ANY, ANY), the main
// thread on a pthread_cond, a struct type, K and rounds by MPI_Bcast from rank 0's argv, lines by
// fprintf(stdout) and puts. Arguments: K rounds. With more than one round, a late REPLY of the last
// round counts for the next (acks reset, not matched): K+1 inside. -DBROKEN_K defers only while
// inside.
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <stddef.h>

#define TAG_REQUEST 10
#define TAG_REPLY 11
#define TAG_DONE 12

typedef struct { int ts; int from; int kind; } packet_t;

static MPI_Datatype PACKET;
static int rank, size, K = 2, rounds = 1;
static int lamport = 0, requesting = 0, my_ts = 0, acks = 0, finished = 0;
static int *deferred;
static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void send_packet(int to, int tag) {
    packet_t p = { ++lamport, rank, tag };
    MPI_Send(&p, 1, PACKET, to, tag, MPI_COMM_WORLD);
}

static void *listener(void *arg) {
    (void)arg;
    while (1) {
        packet_t p; MPI_Status st;
        MPI_Recv(&p, 1, PACKET, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        pthread_mutex_lock(&mtx);
        lamport = (p.ts > lamport ? p.ts : lamport) + 1;
        if (st.MPI_TAG == TAG_REQUEST) {
            int me_first = requesting && (my_ts < p.ts || (my_ts == p.ts && rank < p.from));
#ifdef BROKEN_K
            if (me_first && acks >= size - K) me_first = 1; else me_first = 0;  /* defer only when inside */
#endif
            if (me_first) deferred[p.from] = 1;
            else send_packet(p.from, TAG_REPLY);
        } else if (st.MPI_TAG == TAG_REPLY) {
            acks++;
            pthread_cond_signal(&cv);
        } else if (st.MPI_TAG == TAG_DONE) {
            finished++;
            pthread_cond_signal(&cv);
            if (finished == size) { pthread_mutex_unlock(&mtx); break; }
        }
        pthread_mutex_unlock(&mtx);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) { fprintf(stderr, "no thread support\n"); MPI_Abort(MPI_COMM_WORLD, 1); }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int cfg[2] = {2, 1};
    if (rank == 0) {
        if (argc > 1) cfg[0] = atoi(argv[1]);
        if (argc > 2) cfg[1] = atoi(argv[2]);
        if (cfg[0] < 1 || cfg[0] > size) { fprintf(stderr, "bad K\n"); MPI_Abort(MPI_COMM_WORLD, 3); }
    }
    MPI_Bcast(cfg, 2, MPI_INT, 0, MPI_COMM_WORLD);
    K = cfg[0]; rounds = cfg[1];

    int blocklens[3] = {1, 1, 1};
    MPI_Aint disps[3] = {offsetof(packet_t, ts), offsetof(packet_t, from), offsetof(packet_t, kind)};
    MPI_Datatype types[3] = {MPI_INT, MPI_INT, MPI_INT};
    MPI_Type_create_struct(3, blocklens, disps, types, &PACKET);
    MPI_Type_commit(&PACKET);

    srand(rank * 7 + 1);
    deferred = calloc(size, sizeof(int));
    pthread_t th;
    pthread_create(&th, NULL, listener, NULL);
    MPI_Barrier(MPI_COMM_WORLD);

    for (int r = 0; r < rounds; r++) {
        usleep(rand() % 1000);
        pthread_mutex_lock(&mtx);
        requesting = 1; acks = 0; my_ts = ++lamport;
        for (int i = 0; i < size; i++) if (i != rank) {
            packet_t p = { my_ts, rank, TAG_REQUEST };
            MPI_Send(&p, 1, PACKET, i, TAG_REQUEST, MPI_COMM_WORLD);
        }
        while (acks < size - K) pthread_cond_wait(&cv, &mtx);
        fprintf(stdout, "Process %d: entering section\n", rank);
        pthread_mutex_unlock(&mtx);
        usleep(500);
        pthread_mutex_lock(&mtx);
        puts("leaving section");
        requesting = 0;
        for (int i = 0; i < size; i++) if (deferred[i]) { deferred[i] = 0; send_packet(i, TAG_REPLY); }
        pthread_mutex_unlock(&mtx);
    }
    for (int i = 0; i < size; i++) { pthread_mutex_lock(&mtx); send_packet(i, TAG_DONE); pthread_mutex_unlock(&mtx); }
    pthread_join(th, NULL);
    MPI_Type_free(&PACKET);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
