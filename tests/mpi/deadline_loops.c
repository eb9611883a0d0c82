/* Waits on the machine's clock, each inside the critical section: a time() loop of usleeps, a
 * gettimeofday loop of nanosleeps, a clock_nanosleep until an absolute CLOCK_MONOTONIC time. */
#include <mpi.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int me, n, token = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (me > 0) MPI_Recv(&token, 1, MPI_INT, me - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("P%d in CS\n", me);
    time_t t0 = time(NULL);
    while (time(NULL) - t0 < 2) usleep(100000);
    struct timeval a, b;
    gettimeofday(&a, NULL);
    do {
        struct timespec nap = {0, 5000000};
        nanosleep(&nap, NULL);
        gettimeofday(&b, NULL);
    } while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_usec - a.tv_usec) < 50000);
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += 1;
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL);
    printf("P%d out of CS\n", me);
    if (me + 1 < n) MPI_Send(&token, 1, MPI_INT, me + 1, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
