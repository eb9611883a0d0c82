/* The mason bees with a keeper: rank 0 runs a server thread that owns the reeds and the flowers,
 * and is a bee too (its main thread asks its own server, by messages to itself).
 *
 * Style: a central server instead of a distributed algorithm, as a student short of time writes
 * it; MPI_Init_thread(MPI_THREAD_MULTIPLE) and a pthread in rank 0 receiving MPI_ANY_SOURCE with
 * the tag as the request's kind; a bee asks with MPI_Sendrecv (its request to rank 0, the answer
 * back) on a duplicated communicator; the request is a struct sent as an MPI_Type_create_struct;
 * the server logs to standard error, the bees print their lines as examples/mpi/bees_printf.regex
 * reads them. Arguments: reeds flowers eggs cocoons (the problem's defaults: 3 3 5 15).
 *
 * -DBROKEN_FLOWER_COUNT: the server grants a flower while fewer than K+1 are taken (one too many).
 * -DBROKEN_SAME_TAG: an answer has its request's tag (below).
 */
#include <mpi.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { ASK_REED = 1, LEAVE_REED = 2, ASK_FLOWER = 3, LEAVE_FLOWER = 4, BEE_DONE = 5 };
/* An answer's tag is its request's plus ANSWER. The first version answered with the request's own
 * tag (-DBROKEN_SAME_TAG keeps it), and mutexlab found rank 0's bee receiving its own request,
 * sent to itself, as its answer (the receive of its MPI_Sendrecv matched first: MPI_ERR_TRUNCATE,
 * a 12-byte request into an 8-byte answer), as any MPI may where the bee's receive is posted
 * before the keeper thread's. */
#ifdef BROKEN_SAME_TAG
#define ANSWER 0
#else
#define ANSWER 100
#endif
#define MAX_BEES 64
#define MAX_REEDS 16

typedef struct {
    int bee;
    int reed;  /* the reed left (LEAVE_REED), else -1 */
    int eggs;  /* the eggs laid on it */
} request_t;

typedef struct {
    int reed;    /* the reed granted (1-based), 0 to retire */
    int eggs_in; /* eggs on it before */
} answer_t;

static int reeds = 3, flowers = 3, eggs_per_bee = 5, cocoons = 15, np;
static MPI_Comm keeper_comm;
static MPI_Datatype request_type;

/* the server's own state (its thread alone) */
static int reed_busy[MAX_REEDS], reed_bees[MAX_REEDS], reed_eggs[MAX_REEDS];
static int reed_queue[MAX_REEDS][MAX_BEES], reed_qlen[MAX_REEDS];
static int flower_queue[MAX_BEES], flower_qlen, flowers_taken;

static void answer(int bee, int tag, int reed, int eggs_in) {
    answer_t a = {reed, eggs_in};
    MPI_Send(&a, 2, MPI_INT, bee, tag + ANSWER, keeper_comm);
}

static void *keeper(void *unused) {
    (void)unused;
    int done = 0;
    while (done < np) {
        request_t q;
        MPI_Status st;
        MPI_Recv(&q, 1, request_type, MPI_ANY_SOURCE, MPI_ANY_TAG, keeper_comm, &st);
        switch (st.MPI_TAG) {
        case ASK_REED: {
            int best = -1; /* the reed with room for the most bees still, fewest queued first */
            for (int r = 0; r < reeds; r++)
                if (reed_bees[r] * eggs_per_bee < cocoons && (best < 0 || reed_bees[r] < reed_bees[best])) best = r;
            if (best < 0) {
                answer(q.bee, ASK_REED, 0, 0);
                break;
            }
            reed_bees[best]++;
            if (!reed_busy[best]) {
                reed_busy[best] = 1;
                answer(q.bee, ASK_REED, best + 1, reed_eggs[best]);
            } else {
                reed_queue[best][reed_qlen[best]++] = q.bee;
            }
            break;
        }
        case LEAVE_REED: {
            int r = q.reed - 1;
            reed_eggs[r] += q.eggs;
            if (reed_qlen[r] > 0) {
                int next = reed_queue[r][0];
                for (int i = 1; i < reed_qlen[r]; i++) reed_queue[r][i - 1] = reed_queue[r][i];
                reed_qlen[r]--;
                answer(next, ASK_REED, r + 1, reed_eggs[r]);
            } else {
                reed_busy[r] = 0;
            }
            break;
        }
        case ASK_FLOWER:
#ifdef BROKEN_FLOWER_COUNT
            if (flowers_taken <= flowers) {
#else
            if (flowers_taken < flowers) {
#endif
                flowers_taken++;
                answer(q.bee, ASK_FLOWER, 0, 0);
            } else {
                flower_queue[flower_qlen++] = q.bee;
            }
            break;
        case LEAVE_FLOWER:
            if (flower_qlen > 0) {
                int next = flower_queue[0];
                for (int i = 1; i < flower_qlen; i++) flower_queue[i - 1] = flower_queue[i];
                flower_qlen--;
                answer(next, ASK_FLOWER, 0, 0);
            } else {
                flowers_taken--;
            }
            break;
        case BEE_DONE:
            done++;
            break;
        }
        fprintf(stderr, "[keeper] tag %d from bee %d, %d flowers taken\n", st.MPI_TAG, q.bee, flowers_taken);
    }
    return NULL;
}

/* a request the keeper answers: sent and awaited in one call */
static answer_t ask(int me, int kind) {
    request_t q = {me, -1, 0};
    answer_t a;
    MPI_Sendrecv(&q, 1, request_type, 0, kind, &a, 2, MPI_INT, 0, kind + ANSWER, keeper_comm, MPI_STATUS_IGNORE);
    return a;
}

static void tell(int me, int kind, int reed, int eggs) {
    request_t q = {me, reed, eggs};
    MPI_Send(&q, 1, request_type, 0, kind, keeper_comm);
}

int main(int argc, char **argv) {
    int provided, me;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_dup(MPI_COMM_WORLD, &keeper_comm);
    MPI_Comm_rank(keeper_comm, &me);
    MPI_Comm_size(keeper_comm, &np);
    if (argc > 4) reeds = atoi(argv[1]), flowers = atoi(argv[2]), eggs_per_bee = atoi(argv[3]), cocoons = atoi(argv[4]);
    if (np > MAX_BEES || reeds > MAX_REEDS) MPI_Abort(MPI_COMM_WORLD, 2);

    int lengths[3] = {1, 1, 1};
    MPI_Aint offsets[3] = {offsetof(request_t, bee), offsetof(request_t, reed), offsetof(request_t, eggs)};
    MPI_Datatype types[3] = {MPI_INT, MPI_INT, MPI_INT};
    MPI_Type_create_struct(3, lengths, offsets, types, &request_type);
    MPI_Type_commit(&request_type);

    pthread_t server;
    if (me == 0) pthread_create(&server, NULL, keeper, NULL);

    int bee = me + 1;
    answer_t got = ask(me, ASK_REED);
    if (got.reed == 0) {
        printf("bee %d retires, no room\n", bee);
    } else {
        int in_reed = got.eggs_in;
        printf("bee %d enters reed %d\n", bee, got.reed);
        for (int egg = 1; egg <= eggs_per_bee; egg++) {
            ask(me, ASK_FLOWER);
            printf("bee %d enters flower\n", bee);
            usleep(100);
            printf("bee %d leaves flower\n", bee);
            tell(me, LEAVE_FLOWER, -1, 0);
            printf("bee %d lays egg %d in reed %d (%d in reed)\n", bee, egg, got.reed, ++in_reed);
        }
        printf("bee %d leaves reed %d\n", bee, got.reed);
        tell(me, LEAVE_REED, got.reed, eggs_per_bee);
        printf("bee %d dies after %d eggs\n", bee, eggs_per_bee);
    }
    tell(me, BEE_DONE, -1, 0);
    if (me == 0) pthread_join(server, NULL);
    MPI_Type_free(&request_type);
    MPI_Comm_free(&keeper_comm);
    MPI_Finalize();
    return 0;
}
