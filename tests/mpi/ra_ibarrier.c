/* Ricart–Agrawala as a student writes it in C: MPI_THREAD_MULTIPLE, a receiver pthread blocked in
 * MPI_Recv(MPI_ANY_SOURCE, MPI_ANY_TAG) on a copy of the world (MPI_Comm_dup) whose error handler
 * the program made (MPI_Comm_create_errhandler: print the error, MPI_Abort); the main thread waits
 * on a pthread condition variable. At the end the main thread enters an MPI_Ibarrier and polls it
 * with MPI_Test and usleep while the receiver still answers, then stops the receiver with a
 * message to itself. Messages are long[3] {kind, clock, rank}. Argument: entries (default 2).
 * -DBROKEN_OFF_BY_ONE: enters on one reply too few. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define TAG_REQ 10
#define TAG_REP 11
#define TAG_STOP 12

static MPI_Comm town;
static int me, n;
static long lamport, my_stamp;
static int wanted, inside, replies;
static int *deferred;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t granted = PTHREAD_COND_INITIALIZER;

static void on_error(MPI_Comm *comm, int *code, ...) {
    char text[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(*code, text, &len);
    fprintf(stderr, "rank %d: MPI error: %s\n", me, text);
    MPI_Abort(*comm, *code);
}

static void post(int to, int tag, long stamp) {
    long m[3] = {tag, stamp, me};
    MPI_Send(m, 3, MPI_LONG, to, tag, town);
}

static void *receiver(void *arg) {
    (void)arg;
    for (;;) {
        long m[3];
        MPI_Status st;
        MPI_Recv(m, 3, MPI_LONG, MPI_ANY_SOURCE, MPI_ANY_TAG, town, &st);
        if (st.MPI_TAG == TAG_STOP) break;
        pthread_mutex_lock(&lock);
        if (m[1] > lamport) lamport = m[1];
        lamport++;
        int from = (int)m[2];
        if (st.MPI_TAG == TAG_REQ) {
            int later = m[1] > my_stamp || (m[1] == my_stamp && from > me);
            if (inside || (wanted && later)) {
                deferred[from] = 1;
                pthread_mutex_unlock(&lock);
            } else {
                long stamp = ++lamport;
                pthread_mutex_unlock(&lock);
                post(from, TAG_REP, stamp);
            }
        } else {
            replies++;
            pthread_cond_signal(&granted);
            pthread_mutex_unlock(&lock);
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    int provided, entries = argc > 1 ? atoi(argv[1]) : 2;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_dup(MPI_COMM_WORLD, &town);
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(on_error, &eh);
    MPI_Comm_set_errhandler(town, eh);
    MPI_Errhandler_free(&eh);
    MPI_Comm_rank(town, &me);
    MPI_Comm_size(town, &n);
    deferred = calloc((size_t)n, sizeof(int));
    int need = n - 1;
#ifdef BROKEN_OFF_BY_ONE
    need = n - 2;
#endif
    pthread_t th;
    pthread_create(&th, NULL, receiver, NULL);
    for (int e = 0; e < entries; e++) {
        pthread_mutex_lock(&lock);
        wanted = 1;
        replies = 0;
        my_stamp = ++lamport;
        long stamp = my_stamp;
        pthread_mutex_unlock(&lock);
        for (int i = 0; i < n; i++)
            if (i != me) post(i, TAG_REQ, stamp);
        pthread_mutex_lock(&lock);
        while (replies < need) pthread_cond_wait(&granted, &lock);
        inside = 1;
        printf("%d: entering (stamp %ld)\n", me, stamp);
        pthread_mutex_unlock(&lock);
        usleep(200);
        pthread_mutex_lock(&lock);
        printf("%d: leaving\n", me);
        inside = wanted = 0;
        long reply = ++lamport;
        pthread_mutex_unlock(&lock);
        for (int i = 0; i < n; i++)
            if (deferred[i]) {
                deferred[i] = 0;
                post(i, TAG_REP, reply);
            }
    }
    MPI_Request bar;
    int over = 0;
    MPI_Ibarrier(town, &bar);
    while (!over) {
        MPI_Test(&bar, &over, MPI_STATUS_IGNORE);
        if (!over) usleep(1000);
    }
    post(me, TAG_STOP, 0);
    pthread_join(th, NULL);
    MPI_Comm_free(&town);
    free(deferred);
    MPI_Finalize();
    return 0;
}
