/* Mason bees in MPI (docs/bees.md, docs/mpi.md): rank r is bee r+1, a port of
 * examples/nodes/bee.c to MPI messages of a struct type. What the audit reads is reported with
 * mutexlab.h: entries and exits of "reed:<i>" and "flower", the "egg" and "death" events, the
 * states.
 *
 *   mutexlab mpicc -O2 -o bees-mpi examples/mpi/bees.c
 *   mutexlab test bees --np 4 -o reeds=2 -o flowers=1 -o eggs=1 -o cocoons=2 --mpi ./bees-mpi 2 1 1 2
 *
 *   -DBROKEN_FLOWERS   enters a flower with one permission too few
 *   -DBROKEN_REED      hands its reed on before leaving it (found at the defaults:
 *                      mutexlab test bees --mpi --np 5 ./bees-mpi-broken-reed)
 *
 * Arguments: reeds T, flowers K, eggs per bee, cocoons per reed (default 3, 3, 5, 15: the bees
 * problem's own defaults, so that `mutexlab test bees --mpi --np 5 ./bees-mpi` judges the colony
 * the program runs; other values: give the test the same ones as options). Reeds: bee i takes reed ((i-1) mod T)+1, as the ((i-1) div T)-th
 * bee on it, and waits for RELEASE_REED from bee i-T; a bee beyond cocoons/eggs on its reed
 * retires. Flowers: Raymond's K-entry Ricart–Agrawala: a bee asks every other bee, a bee answers
 * at once unless its own pending request is earlier, and enters once N-K bees have answered. A
 * bee that dies or retires tells every other bee DONE, and keeps answering requests until every
 * other bee has said DONE too; then it ends (MPI_Finalize), so the program ends under mpirun. */
#include <mpi.h>
#include <mutexlab.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

enum { REQ_FLOWER = 1, ACK_FLOWER = 2, RELEASE_REED = 3, DONE = 4 };

typedef struct {
    int ts;   /* a request's Lamport stamp (REQ_FLOWER), the request answered (ACK_FLOWER) */
    int reed; /* RELEASE_REED */
} note;

#define MAX_BEES 64
static int rank, me, bees, flowers, reeds, eggs, cocoons;
static int clock_, my_ts, requesting, acks, laid, reed, slot, finished, others_done;
static int deferred[MAX_BEES];
static char reed_name[32];
static MPI_Datatype NOTE;

static void send_note(int to, int tag, int ts, int which) {
    note n = {ts, which};
    MPI_Send(&n, 1, NOTE, to, tag, MPI_COMM_WORLD);
}

static void finish(void) { /* this bee is done: the others need not wait for it */
    finished = 1;
    for (int j = 0; j < bees; j++)
        if (j != rank) send_note(j, DONE, 0, 0);
}

static void request_flower(void) {
    my_ts = ++clock_;
    requesting = 1;
    acks = 0;
    for (int j = 0; j < bees; j++)
        if (j != rank) send_note(j, REQ_FLOWER, my_ts, 0);
}

static void on_reed(void) {
    printf("bee %d takes reed %d\n", me, reed);
    mutexlab_enter(reed_name);
    mutexlab_state("ON_REED");
    request_flower();
}

static int needed(void) {
#ifdef BROKEN_FLOWERS
    int need = bees - flowers - 1;
#else
    int need = bees - flowers;
#endif
    return need < 0 ? 0 : need;
}

static void maybe_visit(void) {
    if (!requesting || acks < needed()) return;
    requesting = 0;
    mutexlab_enter("flower");
    mutexlab_exit("flower");
    laid++;
    char fields[96];
    snprintf(fields, sizeof fields, "\"reed\": %d, \"count\": %d, \"in_reed\": %d", reed, laid, slot * eggs + laid);
    mutexlab_event("egg", fields);
    printf("bee %d lays egg %d in reed %d\n", me, laid, reed);
    for (int j = 0; j < bees; j++)
        if (deferred[j]) {
            send_note(j, ACK_FLOWER, deferred[j], 0);
            deferred[j] = 0;
        }
    if (laid < eggs) {
        request_flower();
        return;
    }
#ifdef BROKEN_REED
    if (me + reeds <= bees && slot + 1 < cocoons / eggs) send_note(me + reeds - 1, RELEASE_REED, 0, reed);
    mutexlab_exit(reed_name); /* the bug: the next bee may enter before this one has left */
#else
    mutexlab_exit(reed_name);
    if (me + reeds <= bees && slot + 1 < cocoons / eggs) send_note(me + reeds - 1, RELEASE_REED, 0, reed);
#endif
    snprintf(fields, sizeof fields, "\"eggs\": %d", laid);
    mutexlab_event("death", fields);
    mutexlab_state("DEAD");
    printf("bee %d dies\n", me);
    finish();
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &bees);
    me = rank + 1;
    reeds = argc > 1 ? atoi(argv[1]) : 3;
    flowers = argc > 2 ? atoi(argv[2]) : 3;
    eggs = argc > 3 ? atoi(argv[3]) : 5;
    cocoons = argc > 4 ? atoi(argv[4]) : 15;
    if (bees > MAX_BEES || reeds < 1 || eggs < 1) MPI_Abort(MPI_COMM_WORLD, 2);
    int lengths[2] = {1, 1};
    MPI_Aint offsets[2] = {offsetof(note, ts), offsetof(note, reed)};
    MPI_Datatype types[2] = {MPI_INT, MPI_INT};
    MPI_Type_create_struct(2, lengths, offsets, types, &NOTE);
    MPI_Type_commit(&NOTE);

    reed = (me - 1) % reeds + 1;
    slot = (me - 1) / reeds;
    snprintf(reed_name, sizeof reed_name, "reed:%d", reed);
    if (slot >= cocoons / eggs) {
        char fields[64];
        snprintf(fields, sizeof fields, "\"rank\": %d, \"would_be_reed\": %d", me, reed);
        mutexlab_event("retire", fields);
        mutexlab_state("RETIRED");
        finish();
    } else if (slot == 0) {
        on_reed();
        maybe_visit(); /* alone, or flowers for everyone: no permission needed */
    }
    while (!finished || others_done < bees - 1) {
        note n;
        MPI_Status status;
        MPI_Recv(&n, 1, NOTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
        int from = status.MPI_SOURCE;
        if (status.MPI_TAG == REQ_FLOWER) {
            clock_ = (clock_ > n.ts ? clock_ : n.ts) + 1;
            if (requesting && (my_ts < n.ts || (my_ts == n.ts && rank < from)))
                deferred[from] = n.ts;
            else
                send_note(from, ACK_FLOWER, n.ts, 0);
        } else if (status.MPI_TAG == ACK_FLOWER) {
            if (requesting && n.ts == my_ts) acks++;
            maybe_visit();
        } else if (status.MPI_TAG == RELEASE_REED) {
            on_reed();
            maybe_visit();
        } else if (status.MPI_TAG == DONE) {
            others_done++;
        }
    }
    MPI_Type_free(&NOTE);
    MPI_Finalize();
    return 0;
}
