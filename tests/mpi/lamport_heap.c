/* Lamport's mutual exclusion, C + pthreads.  Main thread = the "application", a receiver thread
 * answers everybody.  Requests sit in a binary min-heap ordered by (timestamp, rank).
 * Every MPI call is checked (errors returned, not fatal).
 * usage: lamport_heap [rounds] */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define CHECK(call)                                                        \
    do {                                                                   \
        int rc_ = (call);                                                  \
        if (rc_ != MPI_SUCCESS) {                                          \
            char txt_[MPI_MAX_ERROR_STRING];                               \
            int len_;                                                      \
            MPI_Error_string(rc_, txt_, &len_);                            \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, \
                    #call, txt_);                                          \
            MPI_Abort(MPI_COMM_WORLD, rc_);                                \
        }                                                                  \
    } while (0)

enum { REQUEST = 1, REPLY, RELEASE, FINISH };

struct entry { long ts; int who; };
static struct entry heap[256];
static int heap_n;

static int less(struct entry a, struct entry b) { return a.ts < b.ts || (a.ts == b.ts && a.who < b.who); }
static void swap(int i, int j) { struct entry t = heap[i]; heap[i] = heap[j]; heap[j] = t; }
static void sift_up(int i) {
    while (i > 0 && less(heap[i], heap[(i - 1) / 2])) { swap(i, (i - 1) / 2); i = (i - 1) / 2; }
}
static void sift_down(int i) {
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < heap_n && less(heap[l], heap[m])) m = l;
        if (r < heap_n && less(heap[r], heap[m])) m = r;
        if (m == i) return;
        swap(i, m);
        i = m;
    }
}
static void heap_push(long ts, int who) { heap[heap_n].ts = ts; heap[heap_n].who = who; sift_up(heap_n++); }
static void heap_drop(int who) { /* a rank has at most one request in the heap */
    for (int i = 0; i < heap_n; i++)
        if (heap[i].who == who) {
            heap[i] = heap[--heap_n];
            sift_down(i);
            sift_up(i);
            return;
        }
}

static int rank, nprocs;
static long lamport;
static int replies, in_cs, finished;
static pthread_mutex_t mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;

static void send_all(int tag, long ts) {
    for (int p = 0; p < nprocs; p++)
        if (p != rank) CHECK(MPI_Send(&ts, 1, MPI_LONG, p, tag, MPI_COMM_WORLD));
}

static void *receiver(void *arg) {
    (void)arg;
    while (finished < nprocs) {
        long ts;
        MPI_Status st;
        CHECK(MPI_Recv(&ts, 1, MPI_LONG, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        pthread_mutex_lock(&mtx);
        lamport = (ts > lamport ? ts : lamport) + 1;
        switch (st.MPI_TAG) {
        case REQUEST:
            heap_push(ts, st.MPI_SOURCE);
#ifdef BROKEN_LOST_REPLY
            if (!in_cs) /* my RELEASE will tell him anyway */
#endif
            {
                long now = ++lamport;
                CHECK(MPI_Send(&now, 1, MPI_LONG, st.MPI_SOURCE, REPLY, MPI_COMM_WORLD));
            }
            break;
        case REPLY: replies++; break;
        case RELEASE: heap_drop(st.MPI_SOURCE); break;
        case FINISH: finished++; break;
        }
        pthread_cond_broadcast(&changed);
        pthread_mutex_unlock(&mtx);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int provided, rounds = argc > 1 ? atoi(argv[1]) : 1;
    CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    if (provided < MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "need MPI_THREAD_MULTIPLE\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    CHECK(MPI_Comm_size(MPI_COMM_WORLD, &nprocs));
    unsigned seed = 17u * (unsigned)rank + 3u;
    pthread_t tid;
    pthread_create(&tid, NULL, receiver, NULL);

    for (int r = 0; r < rounds; r++) {
        pthread_mutex_lock(&mtx);
        long my_ts = ++lamport;
        heap_push(my_ts, rank);
        replies = 0;
        send_all(REQUEST, my_ts);
        while (replies < nprocs - 1 || heap[0].who != rank) pthread_cond_wait(&changed, &mtx);
        in_cs = 1;
        printf("P%d >>> critical section (ts=%ld, round %d)\n", rank, my_ts, r + 1);
        pthread_mutex_unlock(&mtx);

        usleep(1000 + rand_r(&seed) % 5000); /* "work" */

        pthread_mutex_lock(&mtx);
        printf("P%d <<< critical section\n", rank);
        in_cs = 0;
        heap_drop(rank);
        long t = ++lamport;
        send_all(RELEASE, t);
        pthread_mutex_unlock(&mtx);
    }
    long bye = 0;
    for (int p = 0; p < nprocs; p++) CHECK(MPI_Send(&bye, 1, MPI_LONG, p, FINISH, MPI_COMM_WORLD));
    pthread_join(tid, NULL);
    CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Finalize();
    return 0;
}
