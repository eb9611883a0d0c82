/* Ricart-Agrawala as a student writes it in C with a listener thread: messages are text ("REQ 3",
 * "OK", "DONE") found by MPI_Probe and sized by MPI_Get_count into a malloc'd buffer; the main
 * thread and the listener meet at a pthread_barrier before the first request; a Lamport clock
 * stamps every line. Argument: entries per rank (default 1).
 * -DBROKEN_TIES: a request stamped as the rank's own is answered at once, not ordered by rank:
 * two ranks asking at the same clock both enter. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size, clk, requesting, inside, my_ts, oks;
static int *deferred;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t all_ok = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t ready;

static void say(int to, const char *text) { MPI_Send(text, (int)strlen(text) + 1, MPI_CHAR, to, 0, MPI_COMM_WORLD); }

static void *listener(void *unused) {
    (void)unused;
    int done = 0;
    pthread_barrier_wait(&ready);
    while (done < size) {
        MPI_Status st;
        int n;
        MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_CHAR, &n);
        char *text = malloc((size_t)n);
        MPI_Recv(text, n, MPI_CHAR, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        pthread_mutex_lock(&mu);
        int ts;
        if (sscanf(text, "REQ %d", &ts) == 1) {
            clk = (ts > clk ? ts : clk) + 1;
#ifdef BROKEN_TIES
            int mine_first = requesting && my_ts < ts;
#else
            int mine_first = requesting && (my_ts < ts || (my_ts == ts && rank < st.MPI_SOURCE));
#endif
            if (inside || mine_first)
                deferred[st.MPI_SOURCE] = 1;
            else
                say(st.MPI_SOURCE, "OK");
        } else if (strcmp(text, "OK") == 0) {
            if (++oks == size - 1) pthread_cond_signal(&all_ok);
        } else if (strcmp(text, "DONE") == 0) {
            done++;
        }
        pthread_mutex_unlock(&mu);
        free(text);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int provided, times = argc > 1 ? atoi(argv[1]) : 1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    deferred = calloc((size_t)size, sizeof *deferred);
    pthread_barrier_init(&ready, NULL, 2);
    pthread_t t;
    pthread_create(&t, NULL, listener, NULL);
    pthread_barrier_wait(&ready);
    for (int k = 0; k < times; k++) {
        char req[32];
        pthread_mutex_lock(&mu);
        requesting = 1;
        oks = 0;
        my_ts = ++clk;
        snprintf(req, sizeof req, "REQ %d", my_ts);
        for (int p = 0; p < size; p++)
            if (p != rank) say(p, req);
        while (oks < size - 1) pthread_cond_wait(&all_ok, &mu);
        inside = 1;
        printf("[%d] P%d enters CS\n", clk, rank);
        pthread_mutex_unlock(&mu);
        usleep(500);
        pthread_mutex_lock(&mu);
        printf("[%d] P%d exits CS\n", clk, rank);
        inside = requesting = 0;
        for (int p = 0; p < size; p++)
            if (deferred[p]) {
                deferred[p] = 0;
                say(p, "OK");
            }
        pthread_mutex_unlock(&mu);
    }
    for (int p = 0; p < size; p++) say(p, "DONE");
    pthread_join(t, NULL);
    pthread_barrier_destroy(&ready);
    free(deferred);
    MPI_Finalize();
    return 0;
}
