/* Mason bees -- MPI + pthreads.  Usage: colony [reeds flowers eggs cocoons]
 * Reeds: every bee asks once (Lamport, with ACKs); its place in the queue of all requests gives
 * its reed (place % T) and turn (place / T): it waits for the bees ahead of it on that reed to die.
 * Flowers: Ricart-Agrawala with K places (n - K answers for the current request). */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { REQ_REED = 1, ACK_REED, REQ_FLOWER, ACK_FLOWER, REL_REED, BYE };

struct message {
    int type;
    int clock;
    int stamp; /* the request this message answers (ACK_FLOWER) or the reed (REL_REED) */
    int sender;
};

static int me, n, T = 3, K = 3, E = 5, C = 15;
static int clk;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;

static int reed_ts[256];      /* each bee's reed request stamp, -1 not yet seen */
static int reed_acks, my_reed_ts;
static int released[64];      /* RELEASEs seen per reed */
static int flower_wanted, flower_ts, flower_acks, on_flower;
static int waiting_for_me[256];
static int byes;

#define COLOR(r) (31 + (r) % 6)

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#include <stdarg.h>
static void say(const char *fmt, ...) {
    char text[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    printf("\033[%dm[bee %d | %4d]\033[0m %s\n", COLOR(me), me, clk, text);
}

static void post(int to, int type, int stamp) { /* under lock */
    struct message m = {type, ++clk, stamp, me};
    MPI_Send(&m, sizeof m, MPI_BYTE, to, type, MPI_COMM_WORLD);
}

#ifdef BROKEN_STAMP /* each copy of a request stamped with the clock of its own send */
#define STAMP(m) ((m).clock)
#else
#define STAMP(m) ((m).stamp)
#endif

static int before(int ts1, int p1, int ts2, int p2) { return ts1 < ts2 || (ts1 == ts2 && p1 < p2); }

static void *listen_thread(void *unused) {
    (void)unused;
    for (;;) {
        struct message m;
        MPI_Status status;
        MPI_Recv(&m, sizeof m, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
        pthread_mutex_lock(&lock);
        if (m.clock > clk) clk = m.clock;
        clk++;
        switch (status.MPI_TAG) {
        case REQ_REED:
            reed_ts[m.sender] = STAMP(m);
            post(m.sender, ACK_REED, STAMP(m));
            break;
        case ACK_REED:
            reed_acks++;
            break;
        case REQ_FLOWER:
#ifdef BROKEN_GREEDY
            if (on_flower)
#else
            if (on_flower || (flower_wanted && before(flower_ts, me, STAMP(m), m.sender)))
#endif
                waiting_for_me[m.sender] = STAMP(m);
            else
                post(m.sender, ACK_FLOWER, STAMP(m));
            break;
        case ACK_FLOWER:
#ifndef BROKEN_STALE
            if (flower_wanted && m.stamp == flower_ts)
#endif
                flower_acks++;
            break;
        case REL_REED:
            released[m.stamp]++;
            break;
        case BYE:
            byes++;
            break;
        }
        pthread_cond_broadcast(&changed);
        int over = byes == n;
        pthread_mutex_unlock(&lock);
        if (over) return NULL;
    }
}

static int my_place(void) { /* requests ahead of mine, once every ACK is in */
    int place = 0;
    for (int i = 0; i < n; i++)
        if (i != me && reed_ts[i] >= 0 && before(reed_ts[i], i, my_reed_ts, me)) place++;
    return place;
}

int main(int argc, char *argv[]) {
    int level;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &level);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc == 5) {
        T = atoi(argv[1]); K = atoi(argv[2]); E = atoi(argv[3]); C = atoi(argv[4]);
    } else if (argc != 1) {
        if (me == 0) fprintf(stderr, "usage: %s [reeds flowers eggs cocoons]\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(reed_ts, -1, sizeof reed_ts);
#ifdef TIME_SEED
    srand(time(NULL) + me);
#else
    srand(1000 + me);
#endif
    clk = rand() % 20; /* random initial priority */
    pthread_t listener;
    pthread_create(&listener, NULL, listen_thread, NULL);

    /* the reed */
    pthread_mutex_lock(&lock);
    my_reed_ts = ++clk;
    for (int i = 0; i < n; i++)
        if (i != me) post(i, REQ_REED, my_reed_ts);
    while (reed_acks < n - 1) pthread_cond_wait(&changed, &lock);
    int place = my_place(), reed = place % T, turn = place / T, per_reed = C / E;
    if (turn >= per_reed) {
        say("no room left for me, retiring");
        pthread_mutex_unlock(&lock);
    } else {
        while (released[reed] < turn) pthread_cond_wait(&changed, &lock);
        say("occupies reed #%d", reed + 1);
        for (int egg = 1; egg <= E; egg++) {
            flower_wanted = 1;
            flower_acks = 0;
            flower_ts = ++clk;
            for (int i = 0; i < n; i++)
                if (i != me) post(i, REQ_FLOWER, flower_ts);
            while (flower_acks < n - K) pthread_cond_wait(&changed, &lock);
            on_flower = 1;
            say("FLOWER+ collecting nectar");
            pthread_mutex_unlock(&lock);
            usleep(1000 + rand() % 1000);
            pthread_mutex_lock(&lock);
            say("FLOWER- back to the reed");
            on_flower = 0;
            flower_wanted = 0;
            for (int i = 0; i < n; i++)
                if (waiting_for_me[i]) {
                    post(i, ACK_FLOWER, waiting_for_me[i]);
                    waiting_for_me[i] = 0;
                }
            say("egg %d laid on reed #%d, cocoons used %d/%d", egg, reed + 1, turn * E + egg, C);
        }
        say("leaves reed #%d", reed + 1);
        for (int i = 0; i < n; i++)
            if (i != me) post(i, REL_REED, reed);
        released[reed]++;
        say("died, %d eggs", E);
        pthread_mutex_unlock(&lock);
    }
    pthread_mutex_lock(&lock);
    for (int i = 0; i < n; i++) post(i, BYE, 0);
    pthread_mutex_unlock(&lock);
    pthread_join(listener, NULL);
    MPI_Finalize();
    return 0;
}
