/* The subset of mutexlab's MPI at work (tests/test_mpi.py): derived types, nonblocking calls
 * polled with MPI_Test, a probe, a barrier, a receiving thread polled with usleep. Every rank
 * checks what it got; all well, it enters and leaves "cs" through mutexlab.h (run as kmutex with
 * k = N, so that every rank may be inside); anything wrong, MPI_Abort(3). */
#include <mpi.h>
#include <mutexlab.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

typedef struct {
    int a;
    double b;
    char c;
} item;

static volatile int flag;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int rank, size;

static void check(int ok, const char *what) {
    if (!ok) {
        printf("rank %d: %s is wrong\n", rank, what);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
}

static void *receiver(void *unused) {
    (void)unused;
    int got;
    MPI_Status status;
    MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &status);
    check(got == 900 + status.MPI_SOURCE, "the thread's message");
    pthread_mutex_lock(&lock);
    flag = 1;
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    check(provided == MPI_THREAD_MULTIPLE, "the thread level");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    double start = MPI_Wtime();

    int lengths[3] = {1, 1, 1};
    MPI_Aint offsets[3] = {offsetof(item, a), offsetof(item, b), offsetof(item, c)};
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, ITEM, TRIPLE;
    MPI_Type_create_struct(3, lengths, offsets, types, &ITEM);
    MPI_Type_commit(&ITEM);
    MPI_Type_contiguous(3, MPI_INT, &TRIPLE);
    MPI_Type_commit(&TRIPLE);

    item out = {rank, rank + 0.5, (char)('a' + rank)}, in = {0, 0, 0};
    MPI_Request sent, received;
    MPI_Status status;
    MPI_Isend(&out, 1, ITEM, next, 5, MPI_COMM_WORLD, &sent);
    MPI_Irecv(&in, 1, ITEM, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &received);
    int done = 0;
    while (!done) MPI_Test(&received, &done, &status);
    MPI_Wait(&sent, MPI_STATUS_IGNORE);
    int count;
    MPI_Get_count(&status, ITEM, &count);
    check(status.MPI_SOURCE == prev && status.MPI_TAG == 5 && count == 1, "the status");
    check(in.a == prev && in.b == prev + 0.5 && in.c == 'a' + prev, "the struct");

    int three[3] = {rank, rank * 2, rank * 3}, back[3];
    MPI_Send(three, 1, TRIPLE, next, 6, MPI_COMM_WORLD);
    MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
    MPI_Get_count(&status, MPI_INT, &count);
    check(count == 3 && status.MPI_TAG == 6, "the probe");
    MPI_Recv(back, count, MPI_INT, status.MPI_SOURCE, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    check(back[0] == prev && back[2] == prev * 3, "the contiguous type");
    MPI_Barrier(MPI_COMM_WORLD);

    pthread_t thread;
    pthread_create(&thread, NULL, receiver, NULL);
    int mine = 900 + rank;
    MPI_Send(&mine, 1, MPI_INT, next, 9, MPI_COMM_WORLD);
    for (;;) { /* polled, as students do */
        pthread_mutex_lock(&lock);
        int seen = flag;
        pthread_mutex_unlock(&lock);
        if (seen) break;
        usleep(100);
    }
    pthread_join(thread, NULL);
    check(MPI_Wtime() >= start, "the clock");
    printf("rank %d: all well\n", rank);
    mutexlab_enter("cs");
    mutexlab_exit("cs");
    MPI_Type_free(&ITEM);
    MPI_Type_free(&TRIPLE);
    MPI_Finalize();
    return 0;
}
