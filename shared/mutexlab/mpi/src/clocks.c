/* The machine's clock as the program reads it: clock_gettime (the real-time and monotonic
 * clocks), gettimeofday and time give the C library's reading plus mutexlab's clock — the time
 * the rank's sleeps asked for, 1 ms a step, and the jumps of a timeout loop (docs/mpi.md#threads).
 * A sleep takes no time, so without this a deadline on the machine's clock never came:
 * `std::this_thread::sleep_until(std::chrono::system_clock::now() + 3ms)`, which libstdc++ makes
 * a loop of sleep_for until now() has passed the deadline, slept for ever, and a rank inside its
 * critical section was a false deadlock. A read marks the thread as a clock reader, as MPI_Wtime
 * does, so a poller waiting for such a deadline has it come nearer. The processes' and threads'
 * CPU-time clocks are the C library's. */
#define _GNU_SOURCE
#include <sys/time.h>
#include <time.h>

#include "internal.h"

static int (*real_gettime)(clockid_t, struct timespec *);

int ml_real_clock_gettime(clockid_t clock, struct timespec *t) {
    if (!real_gettime) real_gettime = ml_real("clock_gettime", NULL);
    return real_gettime(clock, t);
}

static int machine_clock(clockid_t clock) {
    return clock == CLOCK_REALTIME || clock == CLOCK_MONOTONIC || clock == CLOCK_REALTIME_COARSE ||
           clock == CLOCK_MONOTONIC_COARSE || clock == CLOCK_MONOTONIC_RAW || clock == CLOCK_BOOTTIME ||
           clock == CLOCK_TAI;
}

int clock_gettime(clockid_t clock, struct timespec *t) {
    int rc = ml_real_clock_gettime(clock, t);
    if (rc != 0 || !machine_clock(clock)) return rc;
    long long ns = t->tv_nsec + ml_clock_read();
    t->tv_sec += (time_t)(ns / 1000000000LL);
    t->tv_nsec = (long)(ns % 1000000000LL);
    return 0;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
    struct timespec t;
    (void)tz; /* obsolete: Linux fills no time zone either */
    int rc = clock_gettime(CLOCK_REALTIME, &t);
    if (rc == 0 && tv) {
        tv->tv_sec = t.tv_sec;
        tv->tv_usec = t.tv_nsec / 1000;
    }
    return rc;
}

time_t time(time_t *out) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    if (out) *out = t.tv_sec;
    return t.tv_sec;
}
