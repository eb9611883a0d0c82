/* Hamster killers: rank 0 is the mayor, ranks 1.. are elves.  Each round the mayor hands out the
 * contract list with MPI_Bcast and, once every contract is reported done, broadcasts STOP.
 * Elves agree on contracts, pins and poison with Lamport queues (one listener thread per elf).
 * usage: town_bcast [pins poison contracts rounds min_hamsters max_hamsters] */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXR 8
#define MAXQ 256
enum { K_CONTRACT, K_PINS, K_POISON, KINDS };
enum { TAG_REQ = 1, TAG_REPLY, TAG_RELEASE, TAG_DONE_CONTRACT, TAG_QUIT };
static const char *kind_name[KINDS] = {"contract", "pins", "poison"};

typedef struct { int kind, round, ts, units, reqid; } wire_t;
typedef struct { int ts, who, units; } item_t;

static int me, nranks, nelves;
static int PINS = 3, POISON = 10, NC = 6, ROUNDS = 2, HMIN = 1, HMAX = 5;
static pthread_mutex_t mx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int lamport;
static item_t contracts[MAXR + 1][MAXQ];
static int ncontracts[MAXR + 1];
static item_t pool[KINDS][MAXQ]; /* pins and poison requests */
static int npool[KINDS];
static int want_kind = -1, want_reqid, replies, reqids;

static int earlier(item_t a, item_t b) { return a.ts < b.ts || (a.ts == b.ts && a.who < b.who); }

static void add(item_t *q, int *n, item_t it) {
    int i = (*n)++;
    while (i > 0 && earlier(it, q[i - 1])) {
        q[i] = q[i - 1];
        i--;
    }
    q[i] = it;
}

static void drop(item_t *q, int *n, int who) {
    int j = 0;
    for (int i = 0; i < *n; i++)
        if (q[i].who != who) q[j++] = q[i];
    *n = j;
}

static void tell(int to, int tag, wire_t w) { MPI_Send(&w, 5, MPI_INT, to, tag, MPI_COMM_WORLD); }

static void *ears(void *unused) {
    (void)unused;
    for (;;) {
        wire_t w;
        MPI_Status st;
        MPI_Recv(&w, 5, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        if (st.MPI_TAG == TAG_QUIT) return NULL;
        pthread_mutex_lock(&mx);
        if (w.ts > lamport) lamport = w.ts;
        lamport++;
        item_t it = {w.ts, st.MPI_SOURCE, w.units};
        if (st.MPI_TAG == TAG_REQ) {
            if (w.kind == K_CONTRACT)
#ifdef BROKEN_ROUNDS
                add(contracts[1], &ncontracts[1], it); /* one list for the whole game */
#else
                add(contracts[w.round], &ncontracts[w.round], it);
#endif
            else
                add(pool[w.kind], &npool[w.kind], it);
            wire_t r = {w.kind, w.round, ++lamport, 0, w.reqid};
            tell(st.MPI_SOURCE, TAG_REPLY, r);
        } else if (st.MPI_TAG == TAG_REPLY) {
            if (w.kind == want_kind && w.reqid == want_reqid) replies++;
        } else if (st.MPI_TAG == TAG_RELEASE) {
            drop(pool[w.kind], &npool[w.kind], st.MPI_SOURCE);
        }
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mx);
    }
}

/* Lamport request for `units` of `kind`; returns my position (contracts) -- lock held */
static int ask(int kind, int round, int units) {
    item_t mine = {++lamport, me, units};
    if (kind == K_CONTRACT)
#ifdef BROKEN_ROUNDS
        add(contracts[1], &ncontracts[1], mine);
#else
        add(contracts[round], &ncontracts[round], mine);
#endif
    else
        add(pool[kind], &npool[kind], mine);
    want_kind = kind;
    want_reqid = ++reqids;
    replies = 0;
    for (int e = 1; e < nranks; e++)
        if (e != me) {
            wire_t w = {kind, round, mine.ts, units, want_reqid};
            tell(e, TAG_REQ, w);
        }
    while (replies < nelves - 1) pthread_cond_wait(&cv, &mx);
    want_kind = -1;
    if (kind == K_CONTRACT) {
#ifdef BROKEN_ROUNDS
        item_t *q = contracts[1];
        int n = ncontracts[1];
#else
        item_t *q = contracts[round];
        int n = ncontracts[round];
#endif
        int pos = 0;
        for (int i = 0; i < n; i++)
            if (earlier(q[i], mine)) pos++;
        return pos;
    }
    int total = kind == K_PINS ? PINS : POISON, said = 0;
    for (;;) {
        int before = 0;
        for (int i = 0; i < npool[kind] && pool[kind][i].who != me; i++) before += pool[kind][i].units;
        if (total - before >= units) return 0;
        if (!said) printf("elf %d: stuck waiting for %s\n", me, kind_name[kind]);
        said = 1;
        pthread_cond_wait(&cv, &mx);
    }
}

static void give_back(int kind, int units) { /* lock held */
    printf("elf %d: gives back %d %s\n", me, units, kind_name[kind]);
    drop(pool[kind], &npool[kind], me);
    lamport++;
    for (int e = 1; e < nranks; e++)
        if (e != me) {
            wire_t w = {kind, 0, lamport, units, 0};
            tell(e, TAG_RELEASE, w);
        }
}

static void mayor(void) {
    unsigned seed = 2024;
    int list[64], stop = 1;
    for (int r = 1; r <= ROUNDS; r++) {
        char text[512];
        int k = 0;
        for (int i = 0; i < NC; i++) {
            list[i] = HMIN + (int)(rand_r(&seed) % (unsigned)(HMAX - HMIN + 1));
            k += snprintf(text + k, sizeof text - k, " %d", list[i]);
        }
        printf("MAYOR: round %d starts, hamsters per contract:%s\n", r, text);
        MPI_Bcast(list, NC, MPI_INT, 0, MPI_COMM_WORLD);
        for (int done = 0; done < NC; done++) {
            wire_t w;
            MPI_Recv(&w, 5, MPI_INT, MPI_ANY_SOURCE, TAG_DONE_CONTRACT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        printf("MAYOR: round %d finished, STOP\n", r);
        MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    printf("MAYOR: all rounds done, the town is hamster-free\n");
}

static void elf(void) {
    int list[64], stop;
    pthread_t t;
    pthread_create(&t, NULL, ears, NULL);
    for (int r = 1; r <= ROUNDS; r++) {
        MPI_Bcast(list, NC, MPI_INT, 0, MPI_COMM_WORLD);
        for (;;) {
            pthread_mutex_lock(&mx);
            int pos = ask(K_CONTRACT, r, 1);
            if (pos >= NC) {
                pthread_mutex_unlock(&mx);
                break;
            }
            int h = list[pos];
            printf("elf %d: got contract %d.%d (%d hamsters)\n", me, r, pos + 1, h);
            ask(K_PINS, r, 1);
            printf("elf %d: holding 1 pins\n", me);
            ask(K_POISON, r, h);
            printf("elf %d: holding %d poison\n", me, h);
            pthread_mutex_unlock(&mx);
            usleep(500 * h); /* the actual hamster hunt */
            pthread_mutex_lock(&mx);
            printf("elf %d: %d hamsters dead, contract %d.%d\n", me, h, r, pos + 1);
            give_back(K_PINS, 1);
            give_back(K_POISON, h);
            printf("elf %d: contract %d.%d reported\n", me, r, pos + 1);
            wire_t w = {K_CONTRACT, r, ++lamport, h, pos};
            tell(0, TAG_DONE_CONTRACT, w);
            pthread_mutex_unlock(&mx);
        }
        MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
#ifndef BROKEN_EARLY_QUIT
    MPI_Barrier(MPI_COMM_WORLD); /* nobody may still need my replies */
#endif
    wire_t q = {0, 0, 0, 0, 0};
    tell(me, TAG_QUIT, q);
    pthread_join(t, NULL);
    printf("elf %d: off home\n", me);
}

int main(int argc, char **argv) {
    int got;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &got);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    nelves = nranks - 1;
    if (argc > 6) {
        PINS = atoi(argv[1]), POISON = atoi(argv[2]), NC = atoi(argv[3]);
        ROUNDS = atoi(argv[4]), HMIN = atoi(argv[5]), HMAX = atoi(argv[6]);
    }
    if (HMAX > POISON || NC > 64 || ROUNDS > MAXR || nelves < 1) {
        if (me == 0) fprintf(stderr, "bad town: a contract may need more poison than there is\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (me == 0)
        mayor();
    else
        elf();
#ifdef BROKEN_EARLY_QUIT
    (void)0;
#else
    if (me == 0) MPI_Barrier(MPI_COMM_WORLD);
#endif
    MPI_Finalize();
    return 0;
}
