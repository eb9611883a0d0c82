/* A student's k-mutex (Lamport's queue, K places), written from docs/mpi.md alone: a receiver
 * thread under MPI_THREAD_MULTIPLE dispatching MPI_ANY_SOURCE/MPI_ANY_TAG by a switch, MPI_Probe
 * and MPI_Get_count for messages of several lengths, a Lamport clock in each, a sorted array as
 * the priority queue, srand(time(NULL)) for the sleeps, its own Polish log lines. Built with
 * -DPOLLING it waits for its turn in a sleep loop, sleeping by usleep, or -DNAP_CLOCK
 * clock_nanosleep, -DNAP_SELECT select of no descriptor, -DNAP_POLL poll of none (each stalled
 * the rank once); -DRAW_WRITE prints with write/dprintf. Its bugs: -DBUG_TIEBREAK (a tie goes to
 * whoever asks), -DBUG_LOST_ACK (no ACK for a later request), -DBUG_ACK_COUNT (ACKs never reset).
 * Lines: "[t=5] P1 >>> CS (wejscie 1/2)" and "[t=7] P1 <<< CS".
 * usage: ./kmutex [wejsc] [k]
 * Kazdy proces wchodzi `wejsc` razy do sekcji o pojemnosci k. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/select.h>
#include <poll.h>

#ifdef POLLING
static void nap(void) { /* a short sleep, in the student's favourite way */
#if defined(NAP_CLOCK)
    struct timespec ts = {0, 1000000};
    clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
#elif defined(NAP_SELECT)
    struct timeval tv = {0, 1000};
    select(0, NULL, NULL, NULL, &tv);
#elif defined(NAP_POLL)
    poll(NULL, 0, 1);
#else
    usleep(1000);
#endif
}
#endif

#define TAG_REQ 10
#define TAG_ACK 11
#define TAG_REL 12
#define TAG_FIN 13

typedef struct { int ts, rank; } req_t;

static int rank, size, K = 1, WEJSC = 2;
static int lamport = 0;
static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static req_t pq[1024];
static int pq_n = 0, acks = 0, fins = 0;

static int before(req_t a, req_t b) { /* czy a przed b */
    if (a.ts != b.ts) return a.ts < b.ts;
#ifdef BUG_TIEBREAK
    if (a.rank == rank) return 1; /* "moj wygrywa remis" */
    if (b.rank == rank) return 0;
#endif
    return a.rank < b.rank;
}

static void pq_push(req_t r) { /* kolejka priorytetowa: wstawianie posortowane */
    int i = pq_n++;
    while (i > 0 && before(r, pq[i - 1])) {
        pq[i] = pq[i - 1];
        i--;
    }
    pq[i] = r;
}

static void pq_remove(int who) {
    for (int i = 0; i < pq_n; i++)
        if (pq[i].rank == who) {
            memmove(&pq[i], &pq[i + 1], (size_t)(pq_n - i - 1) * sizeof(req_t));
            pq_n--;
            return;
        }
}

static int pq_pos(int who) {
    for (int i = 0; i < pq_n; i++)
        if (pq[i].rank == who) return i;
    return -1;
}

/* wiadomosci roznej dlugosci: [ts, nadawca, ...reszta] */
static void send_msg(int to, int tag, int extra, const int *rest) {
    int buf[8];
    buf[0] = lamport;
    buf[1] = rank;
    for (int i = 0; i < extra; i++) buf[2 + i] = rest[i];
    MPI_Send(buf, 2 + extra, MPI_INT, to, tag, MPI_COMM_WORLD);
}

static void *odbiornik(void *arg) {
    (void)arg;
    while (1) {
        MPI_Status st;
        int n;
        MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_INT, &n);
        int *buf = malloc(sizeof(int) * (size_t)n);
        MPI_Recv(buf, n, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        pthread_mutex_lock(&mtx);
        lamport = (buf[0] > lamport ? buf[0] : lamport) + 1;
        switch (st.MPI_TAG) {
        case TAG_REQ: {
            req_t r = {buf[0], buf[1]};
            pq_push(r);
#ifdef BUG_LOST_ACK
            int mine = pq_pos(rank);
            if (mine >= 0 && before(pq[mine], r)) break; /* "i tak wejde pierwszy" - ACK ginie */
#endif
            lamport++;
            send_msg(st.MPI_SOURCE, TAG_ACK, 0, NULL);
            break;
        }
        case TAG_ACK:
            acks++;
            break;
        case TAG_REL:
            pq_remove(buf[1]);
            break;
        case TAG_FIN:
            fins++;
            break;
        default:
            fprintf(stderr, "P%d: nieznany tag %d\n", rank, st.MPI_TAG);
        }
        int done = fins == size;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mtx);
        free(buf);
        if (done) break;
    }
    return NULL;
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "brak MPI_THREAD_MULTIPLE\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1) WEJSC = atoi(argv[1]);
    if (argc > 2) K = atoi(argv[2]);
    srand(time(NULL) + rank);
    pthread_t th;
    pthread_create(&th, NULL, odbiornik, NULL);
    for (int e = 1; e <= WEJSC; e++) {
        usleep(1000 * (rand() % 50)); /* "praca" */
        pthread_mutex_lock(&mtx);
        lamport++;
        req_t me = {lamport, rank};
        pq_push(me);
#ifndef BUG_ACK_COUNT
        acks = 0;
#endif
        for (int i = 0; i < size; i++)
            if (i != rank) send_msg(i, TAG_REQ, 1, &e);
#ifdef BUG_ACK_COUNT
        while (acks < (size - 1) * e - 1 || pq_pos(rank) >= K) pthread_cond_wait(&cv, &mtx);
#elif defined(POLLING)
        while (acks < size - 1 || pq_pos(rank) >= K) {
            pthread_mutex_unlock(&mtx);
            nap();
            pthread_mutex_lock(&mtx);
        }
#else
        while (acks < size - 1 || pq_pos(rank) >= K) pthread_cond_wait(&cv, &mtx);
#endif
#ifdef RAW_WRITE
        dprintf(STDOUT_FILENO, "[t=%d] P%d >>> CS (wejscie %d/%d)\n", lamport, rank, e, WEJSC);
#else
        printf("[t=%d] P%d >>> CS (wejscie %d/%d)\n", lamport, rank, e, WEJSC);
#endif
        pthread_mutex_unlock(&mtx);
        usleep(1000 * (rand() % 20));
        pthread_mutex_lock(&mtx);
#ifdef RAW_WRITE
        char line[64];
        int len = snprintf(line, sizeof line, "[t=%d] P%d <<< CS\n", lamport, rank);
        if (write(1, line, (size_t)len) < 0) return 1;
#else
        printf("[t=%d] P%d <<< CS\n", lamport, rank);
#endif
        pq_remove(rank);
        lamport++;
        int rest[2] = {e, K};
        for (int i = 0; i < size; i++)
            if (i != rank) send_msg(i, TAG_REL, 2, rest);
        pthread_mutex_unlock(&mtx);
    }
    pthread_mutex_lock(&mtx);
    for (int i = 0; i < size; i++) send_msg(i, TAG_FIN, 0, NULL);
    pthread_mutex_unlock(&mtx);
    pthread_join(th, NULL);
    MPI_Finalize();
    return 0;
}
