/* Ricart-Agrawala as one writes it without condition variables: a listener thread answers in
 * MPI_Recv(MPI_ANY_SOURCE, MPI_ANY_TAG); the shared state is guarded by a spin lock on an
 * atomic_flag; the main thread busy-waits on an atomic counter of replies (no sleep, no yield).
 * -DBROKEN_TIES compares timestamps without the rank: two requests of equal clocks are both
 * answered at once, and both ranks enter. -DBROKEN_EARLY_BYE ends the listener once every other
 * rank said BYE: a REPLY a finished rank's listener sends after its main thread's BYE is never
 * received (mutexlab found this in the first version: a deadlock at 3 ranks, 2 rounds; now the
 * run is undecided, the main thread spinning for the reply: docs/mpi.md#busy). Usage:
 * spin_ra [ROUNDS] */
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

enum { REQ = 10, REP = 11, BYE = 12 };
static atomic_flag guard = ATOMIC_FLAG_INIT;
static atomic_int replies, byes;
static int me, np, clock_ = 0, asking = 0, my_stamp = 0, deferred[64];

static void lock(void) { while (atomic_flag_test_and_set_explicit(&guard, memory_order_acquire)) ; }
static void unlock(void) { atomic_flag_clear_explicit(&guard, memory_order_release); }

static int before(int ts, int rank) { /* our request comes first */
#ifdef BROKEN_TIES
    (void)rank;
    return my_stamp < ts;
#else
    return my_stamp < ts || (my_stamp == ts && me < rank);
#endif
}

static void *listener(void *unused) {
    (void)unused;
#ifdef BROKEN_EARLY_BYE
    while (atomic_load(&byes) < np - 1) {
#else
    while (atomic_load(&byes) < np) { /* its own BYE too: it comes once this rank needs no reply */
#endif
        int ts;
        MPI_Status st;
        MPI_Recv(&ts, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        lock();
        clock_ = (ts > clock_ ? ts : clock_) + 1;
        int now = clock_;
        if (st.MPI_TAG == REQ && asking && before(ts, st.MPI_SOURCE)) {
            deferred[st.MPI_SOURCE] = 1;
            unlock();
        } else {
            unlock();
            if (st.MPI_TAG == REQ) MPI_Send(&now, 1, MPI_INT, st.MPI_SOURCE, REP, MPI_COMM_WORLD);
            else if (st.MPI_TAG == REP) atomic_fetch_add(&replies, 1);
            else atomic_fetch_add(&byes, 1);
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    int provided, rounds = argc > 1 ? atoi(argv[1]) : 1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    pthread_t t;
    pthread_create(&t, NULL, listener, NULL);
    for (int r = 0; r < rounds; r++) {
        lock();
        my_stamp = ++clock_;
        asking = 1;
        atomic_store(&replies, 0);
        unlock();
        for (int p = 0; p < np; p++)
            if (p != me) MPI_Send(&my_stamp, 1, MPI_INT, p, REQ, MPI_COMM_WORLD);
        while (atomic_load(&replies) < np - 1) /* busy wait */
            ;
        printf("P%d in CS (ts %d)\n", me, my_stamp);
        printf("P%d out of CS\n", me);
        lock();
        asking = 0;
        int now = clock_, owed[64];
        for (int p = 0; p < np; p++) owed[p] = deferred[p], deferred[p] = 0;
        unlock();
        for (int p = 0; p < np; p++)
            if (owed[p]) MPI_Send(&now, 1, MPI_INT, p, REP, MPI_COMM_WORLD);
    }
    for (int p = 0; p < np; p++)
#ifdef BROKEN_EARLY_BYE
        if (p != me)
#endif
            MPI_Send(&me, 1, MPI_INT, p, BYE, MPI_COMM_WORLD);
    pthread_join(t, NULL);
    MPI_Finalize();
    return 0;
}
