/* K printers for N processes: Raymond's K-entry Ricart-Agrawala.
 * A worker thread answers REQUESTs (int[4]: type, Lamport clock, sender, echo); the main
 * thread asks, then waits on a condition variable with a timeout, printing to stderr
 * while it waits.  All messages go by MPI_Bsend through an attached buffer.
 * usage: mpirun -np N ./kprint K [jobs]
 */
#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { REQ = 1, ACK = 2, DONE = 3 };
#define TAG 11

static MPI_Comm comm;
static int rank, size, K;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int lamport = 0, my_ts = 0, requesting = 0, busy = 0, acks = 0, granted = 0;
static int deferred[256], deferred_ts[256], ndeferred = 0;
static int my_requests = 0;

static void post(int to, int type, int ts, int echo)
{
    int m[4] = {type, ts, rank, echo};
    MPI_Bsend(m, 4, MPI_INT, to, TAG, comm);
}

static int earlier(int ts_a, int id_a, int ts_b, int id_b)
{
    return ts_a < ts_b || (ts_a == ts_b && id_a < id_b);
}

static void *worker(void *arg)
{
    (void)arg;
    int dones = 0, acks_total = 0;
    for (;;) {
        pthread_mutex_lock(&mu);
        int finished = dones == size && acks_total == (size - 1) * my_requests;
        pthread_mutex_unlock(&mu);
        if (finished)
            break;
        int m[4];
        MPI_Status st;
        MPI_Recv(m, 4, MPI_INT, MPI_ANY_SOURCE, TAG, comm, &st);
        pthread_mutex_lock(&mu);
        if (m[1] > lamport)
            lamport = m[1];
        lamport++;
        switch (m[0]) {
        case REQ:
#ifdef BROKEN_NO_BUSY
            if (requesting && earlier(my_ts, rank, m[1], m[2])) {
#else
            if (busy || (requesting && earlier(my_ts, rank, m[1], m[2]))) {
#endif
                deferred[ndeferred] = m[2];
                deferred_ts[ndeferred++] = m[1];
            } else {
                post(m[2], ACK, ++lamport, m[1]);
            }
            break;
        case ACK:
            acks_total++;
#ifdef BROKEN_STALE_ACK
            if (requesting) {
#else
            if (requesting && m[3] == my_ts) {
#endif
                if (++acks >= size - K) {
                    granted = 1;
                    pthread_cond_signal(&cv);
                }
            }
            break;
        case DONE:
            dones++;
            break;
        default:
            fprintf(stderr, "[%d] garbage message type %d from %d\n", rank, m[0], st.MPI_SOURCE);
            MPI_Abort(MPI_COMM_WORLD, 9);
        }
        pthread_mutex_unlock(&mu);
    }
    return NULL;
}

static void acquire(void)
{
    pthread_mutex_lock(&mu);
    my_ts = ++lamport;
    requesting = 1;
    acks = 0;
    granted = size - K <= 0;
    my_requests++;
    for (int i = 0; i < size; i++)
        if (i != rank)
            post(i, REQ, my_ts, 0);
    while (!granted) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 50 * 1000 * 1000;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        if (pthread_cond_timedwait(&cv, &mu, &until) == ETIMEDOUT)
            fprintf(stderr, "[%d] still waiting for the printer (%d of %d acks)\n", rank, acks, size - K);
    }
    requesting = 0;
    busy = 1;
    pthread_mutex_unlock(&mu);
}

static void release(void)
{
    pthread_mutex_lock(&mu);
    busy = 0;
    for (int i = 0; i < ndeferred; i++)
        post(deferred[i], ACK, ++lamport, deferred_ts[i]);
    ndeferred = 0;
    pthread_mutex_unlock(&mu);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    setvbuf(stdout, NULL, _IOFBF, 1 << 14); /* big blocks: fewer writes */
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
#ifdef USE_SPLIT
    MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &comm);
#else
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
#endif
    K = argc > 1 ? atoi(argv[1]) : 1;
    int jobs = argc > 2 ? atoi(argv[2]) : 1;
    if (K < 1 || size > 256) {
        fprintf(stderr, "usage: kprint K [jobs] (K >= 1, at most 256 processes)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int bufsize = 64 * size * (4 * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    void *buf = malloc(bufsize);
    MPI_Buffer_attach(buf, bufsize);

    unsigned seed = (unsigned)rank * 2654435761u;
    pthread_t th;
    pthread_create(&th, NULL, worker, NULL);

    for (int j = 0; j < jobs; j++) {
        usleep(rand_r(&seed) % 3000);
        acquire();
        printf("[%d] ENTER CS at %d\n", rank, my_ts);
        usleep(500 + rand_r(&seed) % 1500);
        printf("[%d] EXIT CS\n", rank);
        release();
    }
    for (int i = 0; i < size; i++)
        post(i, DONE, 0, 0);
    pthread_join(th, NULL);

    MPI_Buffer_detach(&buf, &bufsize);
    free(buf);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return 0;
}
