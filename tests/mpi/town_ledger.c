/* The hamster killers as a student writes them in C: rank 0 the mayor, the others elves. Every elf
 * keeps a copy of the town's ledger (contracts taken, pins and poison free) and changes it only
 * while it holds one Ricart–Agrawala lock over the elves, telling every other elf each change
 * before it lets the lock go; returns need no lock. An elf's receiver pthread (MPI_THREAD_MULTIPLE)
 * blocked in MPI_Recv(MPI_ANY_SOURCE, MPI_ANY_TAG) keeps the ledger and the lock's replies; the
 * main thread waits on a pthread condition variable. The mayor draws each round's contracts with
 * rand(), counts the reports and sends STOP; at the end everyone meets in an MPI_Ibarrier before
 * the receivers stop. Arguments as examples/mpi/elves.cpp: pins poison contracts rounds min max.
 * -DBROKEN_POISON: an elf takes poison when one portion short. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { ROUND = 1, STOP, FINISH, REQ, REP, TAKE_C, TAKE_RES, RET, DONE_C, QUIT };
#define MAXC 16
#define MAXR 16
#define WORDS (4 + MAXC)

static int me, n, pins, poison, ncontracts, nrounds;
static int hamsters[MAXR + 1][MAXC], taken[MAXR + 1][MAXC], rounds_in, finished;
static long lamport, my_ts;
static int wanted, holding, replies, *deferred;
static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static unsigned long changes; /* ledger changes seen: a waiting elf looks again */

static void msg(int to, int kind, int a, int b, long clock) {
    int m[WORDS] = {kind, a, b, (int)clock};
    MPI_Send(m, WORDS, MPI_INT, to, kind, MPI_COMM_WORLD);
}

static void to_elves(int kind, int a, int b) {
    for (int i = 1; i < n; i++)
        if (i != me) msg(i, kind, a, b, 0);
}

static void *receiver(void *arg) {
    (void)arg;
    for (;;) {
        int m[WORDS];
        MPI_Status st;
        MPI_Recv(m, WORDS, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        int from = st.MPI_SOURCE;
        if (m[0] == QUIT) break;
        pthread_mutex_lock(&mtx);
        switch (m[0]) {
        case ROUND:
            for (int c = 0; c < ncontracts; c++) hamsters[m[1]][c] = m[4 + c];
            rounds_in = m[1];
            break;
        case FINISH: finished = 1; break;
        case STOP: break;
        case REQ: {
            if (m[3] > lamport) lamport = m[3];
            lamport++;
            int mine_first = holding || (wanted && (my_ts < m[3] || (my_ts == m[3] && me < from)));
            if (mine_first) {
                deferred[from] = 1;
            } else {
                long c = ++lamport;
                pthread_mutex_unlock(&mtx);
                msg(from, REP, 0, 0, c);
                pthread_mutex_lock(&mtx);
            }
            break;
        }
        case REP:
            if (m[3] > lamport) lamport = m[3];
            lamport++;
            replies++;
            break;
        case TAKE_C: taken[m[1]][m[2]] = 1; break;
        case TAKE_RES: pins -= m[1]; poison -= m[2]; break;
        case RET: pins += m[1]; poison += m[2]; break;
        }
        changes++;
        pthread_cond_broadcast(&cond);
        pthread_mutex_unlock(&mtx);
    }
    return NULL;
}

static void lock_town(void) {
    pthread_mutex_lock(&mtx);
    wanted = 1;
    replies = 0;
    my_ts = ++lamport;
    long ts = my_ts;
    pthread_mutex_unlock(&mtx);
    for (int i = 1; i < n; i++)
        if (i != me) msg(i, REQ, 0, 0, ts);
    pthread_mutex_lock(&mtx);
    while (replies < n - 2) pthread_cond_wait(&cond, &mtx);
    holding = 1;
    pthread_mutex_unlock(&mtx);
}

static void unlock_town(void) {
    pthread_mutex_lock(&mtx);
    holding = wanted = 0;
    long c = ++lamport;
    pthread_mutex_unlock(&mtx);
    for (int i = 1; i < n; i++)
        if (deferred[i]) {
            deferred[i] = 0;
            msg(i, REP, 0, 0, c);
        }
}

static void elf(void) {
    pthread_t th;
    deferred = calloc((size_t)n, sizeof(int));
    pthread_create(&th, NULL, receiver, NULL);
    for (int r = 1;; r++) {
        pthread_mutex_lock(&mtx);
        while (rounds_in < r && !finished) pthread_cond_wait(&cond, &mtx);
        int over = rounds_in < r;
        pthread_mutex_unlock(&mtx);
        if (over) break;
        for (;;) {
            lock_town();
            int c = -1;
            pthread_mutex_lock(&mtx);
            for (int i = 0; i < ncontracts && c < 0; i++)
                if (!taken[r][i]) c = i;
            if (c >= 0) taken[r][c] = 1;
            int h = c >= 0 ? hamsters[r][c] : 0;
            pthread_mutex_unlock(&mtx);
            if (c >= 0) {
                printf("elf %d: takes contract %d.%d (%d hamsters)\n", me, r, c + 1, h);
                to_elves(TAKE_C, r, c);
            }
            unlock_town();
            if (c < 0) break;
            for (;;) {
                lock_town();
                pthread_mutex_lock(&mtx);
#ifdef BROKEN_POISON
                int enough = pins >= 1 && poison >= h - 1;
#else
                int enough = pins >= 1 && poison >= h;
#endif
                if (enough) {
                    pins -= 1;
                    poison -= h;
                }
                unsigned long seen = changes;
                pthread_mutex_unlock(&mtx);
                if (enough) {
                    printf("elf %d: takes 1 pins\nelf %d: takes %d poison\n", me, me, h);
                    to_elves(TAKE_RES, 1, h);
                }
                unlock_town();
                if (enough) break;
                printf("elf %d: waits for pins and poison\n", me);
                pthread_mutex_lock(&mtx);
                while (changes == seen) pthread_cond_wait(&cond, &mtx);
                pthread_mutex_unlock(&mtx);
            }
            printf("elf %d: kills %d hamsters, contract %d.%d\n", me, h, r, c + 1);
            usleep(200);
            printf("elf %d: returns 1 pins\nelf %d: returns %d poison\n", me, me, h);
            pthread_mutex_lock(&mtx);
            pins += 1;
            poison += h;
            pthread_mutex_unlock(&mtx);
            to_elves(RET, 1, h);
            printf("elf %d: reports contract %d.%d to the mayor\n", me, r, c + 1);
            msg(0, DONE_C, r, c, 0);
        }
    }
    printf("elf %d: goes home\n", me);
    MPI_Request bar;
    int done = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &bar);
    while (!done) {
        MPI_Test(&bar, &done, MPI_STATUS_IGNORE);
        if (!done) usleep(500);
    }
    msg(me, QUIT, 0, 0, 0);
    pthread_join(th, NULL);
    free(deferred);
}

static void mayor(int lo, int hi) {
    srand(12345);
    for (int r = 1; r <= nrounds; r++) {
        int m[WORDS] = {ROUND, r, 0, 0};
        char list[8 * MAXC] = "", *at = list;
        for (int c = 0; c < ncontracts; c++) {
            m[4 + c] = lo + rand() % (hi - lo + 1);
            at += sprintf(at, " %d", m[4 + c]);
        }
        printf("mayor: round %d begins, contracts (hamsters):%s\n", r, list);
        for (int i = 1; i < n; i++) MPI_Send(m, WORDS, MPI_INT, i, ROUND, MPI_COMM_WORLD);
        for (int done = 0; done < ncontracts; done++) {
            int d[WORDS];
            MPI_Recv(d, WORDS, MPI_INT, MPI_ANY_SOURCE, DONE_C, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        printf("mayor: round %d is over, STOP to every elf\n", r);
        for (int i = 1; i < n; i++) msg(i, STOP, r, 0, 0);
    }
    printf("mayor: no more rounds: the town is clean\n");
    for (int i = 1; i < n; i++) msg(i, FINISH, 0, 0, 0);
    MPI_Request bar;
    MPI_Ibarrier(MPI_COMM_WORLD, &bar);
    MPI_Wait(&bar, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int lo = 1, hi = 5;
    pins = argc > 1 ? atoi(argv[1]) : 3;
    poison = argc > 2 ? atoi(argv[2]) : 10;
    ncontracts = argc > 3 ? atoi(argv[3]) : 6;
    nrounds = argc > 4 ? atoi(argv[4]) : 2;
    if (argc > 6) {
        lo = atoi(argv[5]);
        hi = atoi(argv[6]);
    }
    if (ncontracts > MAXC || nrounds > MAXR || n < 2) MPI_Abort(MPI_COMM_WORLD, 2);
    if (me == 0)
        mayor(lo, hi);
    else
        elf();
    MPI_Finalize();
    return 0;
}
