/* What a thread that keeps its rank busy is doing, in words, for the stalled finding: the rank
 * answers a step once every thread of it waits in a call the library knows, so a thread that waits
 * anywhere else — a semaphore shared between processes, a read, a spin or an OpenMP wait the
 * library could not stop (mpi.c's busy waits) — keeps it busy until the director gives up. Before,
 * the finding said only that the rank did not answer. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

static int read_file(const char *path, char *buf, size_t size) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = 0;
    return n > 0;
}

void ml_unseen_words(char *out, size_t size, int tid, const char *named) {
    if (named) {
        snprintf(out, size, "waits in %s, a wait mutexlab's MPI cannot direct", named);
        return;
    }
    char path[64], stat[512], sys[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
    const char *end = read_file(path, stat, sizeof stat) ? strrchr(stat, ')') : NULL;
    char state = end && end[1] == ' ' ? end[2] : '?';
    if (state == 'R') {
        snprintf(out, size,
                 "was running without calling anything mutexlab's MPI knows: a busy wait (a spin lock on an "
                 "atomic (atomic_flag_test_and_set, std::atomic<bool>::exchange, __sync_lock_test_and_set) or a "
                 "loop on a flag with no sleep or sched_yield in it), a wait mutexlab's MPI cannot direct, or a "
                 "computation longer than --timeout");
        return;
    }
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", tid);
    long nr = -1;
    unsigned long a[8] = {0}, pc = 0;
    if (read_file(path, sys, sizeof sys) &&
        sscanf(sys, "%ld %lx %lx %lx %lx %lx %lx %lx %lx", &nr, &a[0], &a[1], &a[2], &a[3], &a[4], &a[5], &a[6],
               &pc) == 9) {
        Dl_info info;
        const char *lib = pc && dladdr((void *)pc, &info) && info.dli_fname ? info.dli_fname : "";
        if (strstr(lib, "libgomp")) {
            snprintf(out, size,
                     "waits in OpenMP's own code (libgomp: the barrier ending a parallel region or sections, a "
                     "critical section, an omp lock) where mutexlab's MPI could not stop it as a poll");
            return;
        }
        if (nr == SYS_futex) {
            snprintf(out, size,
                     "waits on a futex outside the calls mutexlab's MPI knows (a semaphore, mutex or barrier "
                     "shared between processes: sem_open, or pshared 1)");
            return;
        }
        if (nr == SYS_read || nr == SYS_pread64 || nr == SYS_readv) {
            snprintf(out, size, "waits in read (a pipe, a file, a socket), a wait mutexlab's MPI cannot direct");
            return;
        }
        snprintf(out, size, "waits in system call %ld, a wait mutexlab's MPI cannot direct", nr);
        return;
    }
    snprintf(out, size, "waits where mutexlab's MPI cannot see");
}
