/* Mason bees as a student writes them for MPI (docs/mpi.md#printed-bees): threads, a
 * communication thread in MPI_Recv(MPI_ANY_SOURCE, MPI_ANY_TAG), a struct type, Lamport clocks
 * by hand, a mutex and a condition variable, sleeps for the work, and printf for everything the
 * audit reads -- no mutexlab.h: the test's --regex turns the printed lines into entries, exits,
 * eggs, deaths and states.
 *
 *   mutexlab mpicc -O2 -o bees-printf examples/mpi/bees_printf.c
 *   mutexlab test bees --np 4 -o reeds=2 -o flowers=1 -o eggs=1 -o cocoons=2 \
 *       --regex "$(cat examples/mpi/bees_printf.regex)" --mpi ./bees-printf 2 1 1 2
 *
 *   -DBROKEN_REED     enters its reed on the ACKs alone, forgetting the reed's queue
 *   -DBROKEN_FLOWER   defers a flower request only while on a flower, never for its own earlier one
 *   -DBROKEN_STALE_COCOONS  takes the cocoons of the last RELEASE of a reed to arrive, not the
 *                     fullest (the first version did: mutexlab found a third egg on a reed)
 *
 * Arguments: reeds T, flowers K, eggs per bee, cocoons per reed. Reeds: one Lamport queue per
 * reed; bee r asks for reed r mod T first, and for the next when the one it reached is full
 * (the RELEASE of the last bee on it says how full); with no reed left it retires. Flowers:
 * Ricart-Agrawala with K places (enter on P-K ACKs, an ACK names the request it answers, so a
 * late one never counts for a newer request). Every bee answers until every bee said DONE. */
#include <mpi.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REQ_REED 1
#define ACK_REED 2
#define REL_REED 3
#define REQ_FLOWER 4
#define ACK_FLOWER 5
#define DONE 6
#define MAXP 64
#define MAXT 64

typedef struct { int ts; int src; int reed; int value; } packet_t;

MPI_Datatype MPI_PACKET;
int rank, size, T, K, EGGS, COCOONS;
int lamport = 0;
pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t cond = PTHREAD_COND_INITIALIZER;

/* reeds: one Lamport queue per reed */
int queue_ts[MAXT][MAXP]; /* -1 = not in queue */
int cocoons[MAXT];
int ack_reed = 0, my_reed_ts = 0;
/* flowers: Ricart-Agrawala with K places */
int want_flower = 0, on_flower = 0, my_flower_ts = 0, ack_flower = 0;
int deferred[MAXP];
int done_count = 0;

void send_packet(int dest, int tag, int reed, int value, int ts) {
    packet_t p = {ts, rank, reed, value};
    MPI_Send(&p, 1, MPI_PACKET, dest, tag, MPI_COMM_WORLD);
}

int tick(void) { return ++lamport; }

int is_head(int r) { /* my request is the earliest in queue r */
#ifdef BROKEN_REED
    return 1; /* forgot the queue: enter on the ACKs alone */
#endif
    for (int i = 0; i < size; i++) {
        if (i == rank || queue_ts[r][i] < 0) continue;
        if (queue_ts[r][i] < queue_ts[r][rank] || (queue_ts[r][i] == queue_ts[r][rank] && i < rank)) return 0;
    }
    return 1;
}

void *comm_thread(void *arg) {
    (void)arg;
    packet_t p;
    MPI_Status st;
    while (1) {
        MPI_Recv(&p, 1, MPI_PACKET, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        pthread_mutex_lock(&mtx);
        if (p.ts > lamport) lamport = p.ts;
        lamport++;
        switch (st.MPI_TAG) {
        case REQ_REED:
            queue_ts[p.reed][p.src] = p.ts;
            send_packet(p.src, ACK_REED, p.reed, 0, tick());
            break;
        case ACK_REED:
            ack_reed++;
            break;
        case REL_REED:
            queue_ts[p.reed][p.src] = -1;
            /* RELEASEs of one reed come from different bees, in any order: keep the fullest */
#ifdef BROKEN_STALE_COCOONS
            cocoons[p.reed] = p.value; /* a late RELEASE of an emptier reed wins */
#else
            if (p.value > cocoons[p.reed]) cocoons[p.reed] = p.value;
#endif
            break;
        case REQ_FLOWER: {
            int mine_first = want_flower && (my_flower_ts < p.ts || (my_flower_ts == p.ts && rank < p.src));
#ifdef BROKEN_FLOWER
            mine_first = 0;
#endif
            if (on_flower || mine_first)
                deferred[p.src] = p.ts;
            else
                send_packet(p.src, ACK_FLOWER, 0, p.ts, tick());
            break;
        }
        case ACK_FLOWER:
            if (want_flower && p.value == my_flower_ts) ack_flower++; /* late ack of old request: ignore */
            break;
        case DONE:
            done_count++;
            break;
        }
        pthread_cond_broadcast(&cond);
        int finished = done_count == size;
        pthread_mutex_unlock(&mtx);
        if (finished) break;
    }
    return NULL;
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) { fprintf(stderr, "no thread multiple\n"); MPI_Abort(MPI_COMM_WORLD, 1); }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    T = argc > 1 ? atoi(argv[1]) : 3;
    K = argc > 2 ? atoi(argv[2]) : 2;
    EGGS = argc > 3 ? atoi(argv[3]) : 5;
    COCOONS = argc > 4 ? atoi(argv[4]) : 15;

    int blocklens[4] = {1, 1, 1, 1};
    MPI_Datatype types[4] = {MPI_INT, MPI_INT, MPI_INT, MPI_INT};
    MPI_Aint offsets[4];
    offsets[0] = offsetof(packet_t, ts);
    offsets[1] = offsetof(packet_t, src);
    offsets[2] = offsetof(packet_t, reed);
    offsets[3] = offsetof(packet_t, value);
    MPI_Type_create_struct(4, blocklens, offsets, types, &MPI_PACKET);
    MPI_Type_commit(&MPI_PACKET);

    srand(rank * 7 + 1);
    lamport = rand() % 10; /* random initial priority */
    memset(queue_ts, -1, sizeof queue_ts);
    memset(deferred, -1, sizeof deferred);

    pthread_t comm;
    pthread_create(&comm, NULL, comm_thread, NULL);
    double t0 = MPI_Wtime();

    int eggs = 0, reed = rank % T, tried = 0, got_reed = 0;
    while (tried < T && !got_reed) {
        pthread_mutex_lock(&mtx);
        my_reed_ts = tick();
        queue_ts[reed][rank] = my_reed_ts;
        ack_reed = 0;
        for (int i = 0; i < size; i++)
            if (i != rank) send_packet(i, REQ_REED, reed, 0, my_reed_ts);
        while (ack_reed < size - 1 || !is_head(reed)) pthread_cond_wait(&cond, &mtx);
        if (cocoons[reed] + EGGS > COCOONS) { /* full: give it back, try next */
            queue_ts[reed][rank] = -1;
            int ts = tick();
            for (int i = 0; i < size; i++)
                if (i != rank) send_packet(i, REL_REED, reed, cocoons[reed], ts);
            pthread_mutex_unlock(&mtx);
            reed = (reed + 1) % T;
            tried++;
            continue;
        }
        got_reed = 1;
        pthread_mutex_unlock(&mtx);
    }
    if (!got_reed) {
        printf("[%d] bee %d retires, no room\n", lamport, rank);
    } else {
        printf("[%d] bee %d enters reed %d (t=%.3f)\n", lamport, rank, reed + 1, MPI_Wtime() - t0);
        while (eggs < EGGS) {
            pthread_mutex_lock(&mtx);
            want_flower = 1;
            my_flower_ts = tick();
            ack_flower = 0;
            for (int i = 0; i < size; i++)
                if (i != rank) send_packet(i, REQ_FLOWER, 0, 0, my_flower_ts);
            while (ack_flower < size - K) pthread_cond_wait(&cond, &mtx);
            on_flower = 1;
            printf("[%d] bee %d enters flower\n", lamport, rank);
            pthread_mutex_unlock(&mtx);
            usleep(1000); /* eating */
            pthread_mutex_lock(&mtx);
            printf("[%d] bee %d leaves flower\n", lamport, rank);
            on_flower = 0;
            want_flower = 0;
            for (int i = 0; i < size; i++)
                if (deferred[i] >= 0) { send_packet(i, ACK_FLOWER, 0, deferred[i], tick()); deferred[i] = -1; }
            eggs++;
            cocoons[reed]++;
            printf("[%d] bee %d lays egg %d in reed %d (%d in reed)\n", lamport, rank, eggs, reed + 1, cocoons[reed]);
            pthread_mutex_unlock(&mtx);
            sleep(1); /* laying */
        }
        pthread_mutex_lock(&mtx);
        queue_ts[reed][rank] = -1;
        printf("[%d] bee %d leaves reed %d\n", lamport, rank, reed + 1);
        int ts = tick();
        for (int i = 0; i < size; i++)
            if (i != rank) send_packet(i, REL_REED, reed, cocoons[reed], ts);
        pthread_mutex_unlock(&mtx);
        printf("[%d] bee %d dies after %d eggs\n", lamport, rank, eggs);
    }
    for (int i = 0; i < size; i++) send_packet(i, DONE, 0, 0, 0);
    pthread_join(comm, NULL);
    MPI_Type_free(&MPI_PACKET);
    MPI_Finalize();
    return 0;
}
