/* A token passed round the ranks: a listener thread receives it and sets a flag; the main
 * thread waits for the flag in a loop that naps between its looks — in pselect, ppoll, epoll_wait
 * or epoll_pwait given only a timeout, as its argument says (default select) — then holds the
 * section ("rank 1 enters", "rank 1 leaves") and passes the token on. */
#define _GNU_SOURCE
#include <mpi.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int have_token = 0, me, n;

static const char *how = "select";

static void nap(void) {
    static int ep = -1;
    struct timespec ts = {0, 2000000};
    struct epoll_event ev;
    if (strcmp(how, "pselect") == 0) {
        pselect(0, NULL, NULL, NULL, &ts, NULL);
    } else if (strcmp(how, "ppoll") == 0) {
        ppoll(NULL, 0, &ts, NULL);
    } else if (strncmp(how, "epoll", 5) == 0) {
        if (ep < 0) ep = epoll_create1(0);
        if (strcmp(how, "epoll_pwait") == 0)
            epoll_pwait(ep, &ev, 1, 2, NULL);
        else
            epoll_wait(ep, &ev, 1, 2);
    } else {
        struct timeval tv = {0, 2000};
        select(0, NULL, NULL, NULL, &tv);
    }
}

static void *listener(void *arg) {
    (void)arg;
    int token;
    MPI_Recv(&token, 1, MPI_INT, (me + n - 1) % n, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    pthread_mutex_lock(&m);
    have_token = 1;
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(int argc, char **argv) {
    int provided, token = 7;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (argc > 1) how = argv[1];
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    pthread_t t;
    if (me != 0) pthread_create(&t, NULL, listener, NULL);
    else have_token = 1;
    for (;;) {
        pthread_mutex_lock(&m);
        int go = have_token;
        pthread_mutex_unlock(&m);
        if (go) break;
        nap();
    }
    printf("rank %d enters\n", me);
    printf("rank %d leaves\n", me);
    if (me + 1 < n) MPI_Send(&token, 1, MPI_INT, me + 1, 0, MPI_COMM_WORLD);
    if (me != 0) pthread_join(t, NULL);
    MPI_Finalize();
    return 0;
}
