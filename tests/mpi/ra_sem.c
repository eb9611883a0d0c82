/* Ricart-Agrawala as written outside mutexlab, the waiter woken by a POSIX semaphore: the
 * communication thread sem_posts once the last REPLY is in; the main thread waits in sem_wait, a
 * busy loop of sem_trywait, or a sem_timedwait loop on a real-clock deadline, as its second
 * argument says (wait, trywait, timedwait). Messages packed with MPI_Pack. Broken: BROKEN_TIE (a
 * request as early as its own is answered). Usage: ra_sem [entries [how]]; lines "P1 in CS (ts 3)",
 * "P1 out of CS". */
#include <mpi.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>

#define REQ 1
#define REP 2
#define FIN 3

static int rank, size, lamport = 0, my_ts = 0, wanting = 0, inside = 0, replies = 0;
static int *deferred;
static const char *how = "wait";
static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static sem_t all_replies;

static void send_msg(int to, int tag, int ts) {
    char buf[64];
    int pos = 0;
    MPI_Pack(&ts, 1, MPI_INT, buf, sizeof buf, &pos, MPI_COMM_WORLD);
    MPI_Pack(&rank, 1, MPI_INT, buf, sizeof buf, &pos, MPI_COMM_WORLD);
    MPI_Request r;
    MPI_Isend(buf, pos, MPI_PACKED, to, tag, MPI_COMM_WORLD, &r);
    MPI_Request_free(&r);
}

static int earlier(int ts, int who) {
#ifdef BROKEN_TIE
    return ts <= my_ts; /* forgot the rank */
#else
    return ts < my_ts || (ts == my_ts && who < rank);
#endif
}

static void *comm(void *arg) {
    (void)arg;
    int fins = 0;
    while (fins < size) {
        char buf[64];
        MPI_Status st;
        MPI_Recv(buf, sizeof buf, MPI_PACKED, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        int ts, who, pos = 0;
        MPI_Unpack(buf, sizeof buf, &pos, &ts, 1, MPI_INT, MPI_COMM_WORLD);
        MPI_Unpack(buf, sizeof buf, &pos, &who, 1, MPI_INT, MPI_COMM_WORLD);
        if (who != st.MPI_SOURCE) { fprintf(stderr, "bad source\n"); MPI_Abort(MPI_COMM_WORLD, 3); }
        pthread_mutex_lock(&mtx);
        if (ts > lamport) lamport = ts;
        lamport++;
        if (st.MPI_TAG == REQ) {
            if (inside || (wanting && !earlier(ts, who)))
                deferred[who] = 1;
            else
                send_msg(who, REP, lamport);
        } else if (st.MPI_TAG == REP) {
            replies++;
            if (replies == size - 1) sem_post(&all_replies);
        } else {
            fins++;
        }
        pthread_mutex_unlock(&mtx);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int provided, entries = argc > 1 ? atoi(argv[1]) : 1;
    if (argc > 2) how = argv[2];
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    deferred = calloc(size, sizeof *deferred);
    sem_init(&all_replies, 0, 0);
    pthread_t th;
    pthread_create(&th, NULL, comm, NULL);
    for (int e = 0; e < entries; e++) {
        pthread_mutex_lock(&mtx);
        my_ts = ++lamport;
        wanting = 1;
        replies = 0;
        for (int i = 0; i < size; i++)
            if (i != rank) send_msg(i, REQ, my_ts);
        int need = replies < size - 1;
        pthread_mutex_unlock(&mtx);
        if (need && strcmp(how, "trywait") == 0) {
            while (sem_trywait(&all_replies) != 0) {
            }
        } else if (need && strcmp(how, "timedwait") == 0) {
            for (;;) {
                struct timespec dl;
                clock_gettime(CLOCK_REALTIME, &dl);
                dl.tv_sec += 1;
                if (sem_timedwait(&all_replies, &dl) == 0) break;
                if (errno != ETIMEDOUT) abort();
            }
        } else if (need) {
            sem_wait(&all_replies);
        }
        pthread_mutex_lock(&mtx);
        wanting = 0;
        inside = 1;
        printf("P%d in CS (ts %d)\n", rank, my_ts);
        pthread_mutex_unlock(&mtx);
        struct timespec d = {0, 2000000};
        nanosleep(&d, NULL);
        pthread_mutex_lock(&mtx);
        printf("P%d out of CS\n", rank);
        inside = 0;
        for (int i = 0; i < size; i++)
            if (deferred[i]) { deferred[i] = 0; send_msg(i, REP, lamport); }
        pthread_mutex_unlock(&mtx);
    }
    for (int i = 0; i < size; i++) send_msg(i, FIN, 0);
    pthread_join(th, NULL);
    int total = 0;
    MPI_Allreduce(&entries, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("total entries %d\n", total);
    free(deferred);
    MPI_Finalize();
    return 0;
}
