/* Busy waits: mutexlab's MPI stops a thread that keeps running with nothing new in its rank
 * (busy.h; mpi.c's director thread watches, this file decides and stops). */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "busy.h"
#include "internal.h"

/* Busy waits. A thread that runs SPIN_NS of a step (real time) with nothing new in its rank — a
 * spin on an atomic flag (`while (!atomic_load(&granted));`) or libgomp's own spin and futex waits
 * (an OpenMP barrier, critical section or lock: libgomp rechecks after any interruption) — is
 * signalled, and where it runs the program's own code or libgomp's it waits as a poll does, until
 * something happens in the rank; so its listener, which under any MPI runs beside it, gets its turn
 * (before, the spinner kept the baton for ever: the stalled finding). A rank otherwise quiet wakes
 * it to go on SPINS times a step at most, so a computation that long is not cut short for good
 * either. A thread in the C library's code, or holding the library's lock, is never stopped so. */
#define SPIN_NS 10000000LL
#define SPINS 3
/* A run at rest with a thread so stopped: the director's `stretch` input lets each such thread run
 * alone, one at a time, up to stretch_ns of processor time with nothing new (a computation that
 * long between two calls ends, and the run goes on); one stopped again is said still spinning in
 * the done line, and the director calls the run undecided, never a deadlock that needs it. The
 * limit is the director's (its STRETCH_SECONDS), given as the stretch line's "ns". */
static long long stretch_ns;
static unsigned long stretch_gen[ML_THREADS]; /* gen + 1 when the thread was given its stretch */
#define SPIN_SIGNAL (SIGRTMIN + 7)
static unsigned long spin_lo[2], spin_hi[2]; /* the program's and libgomp's executable code */
static __thread int spins_in_row;
static __thread unsigned long spin_gen;

static void code_ranges(void) { /* from /proc/self/maps, once libgomp is loaded (under L) */
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512], exe[256] = "";
    if (!f) return;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perms[8], *path = strchr(line, '/');
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3 || perms[2] != 'x' || !path) continue;
        path[strcspn(path, "\n")] = 0;
        int k = strcmp(path, exe) == 0 ? 0 : strstr(path, "/libgomp") ? 1 : -1;
        if (k >= 0 && (!spin_lo[k] || lo < spin_lo[k])) spin_lo[k] = lo;
        if (k >= 0 && hi > spin_hi[k]) spin_hi[k] = hi;
    }
    fclose(f);
}

static void spin_stop(int sig, siginfo_t *info, void *context) {
    (void)sig, (void)info;
    unsigned long pc = (unsigned long)((ucontext_t *)context)->uc_mcontext.gregs[REG_RIP];
    int program = pc >= spin_lo[0] && pc < spin_hi[0], gomp = pc >= spin_lo[1] && pc < spin_hi[1];
    int self = ml_self();
    if (self < 0 || ml_in_lock() || !(program || gomp)) return;
    int saved = errno;
    ml_lock();
    unsigned long gen = ml_gen_held();
    spins_in_row = spin_gen == gen ? spins_in_row + 1 : 0;
    int stretched = stretch_gen[self] == gen + 1;
    stretch_gen[self] = 0;
    ml_park_spinner(spins_in_row < SPINS && !stretched);
    spin_gen = ml_gen_held();
    ml_unlock();
    errno = saved;
}

void ml_busy_install(void) {
    struct sigaction stop = {.sa_sigaction = spin_stop, .sa_flags = SA_SIGINFO | SA_RESTART};
    sigemptyset(&stop.sa_mask);
    sigaction(SPIN_SIGNAL, &stop, NULL);
}

void ml_busy_stretch(int thread, unsigned long gen, long long ns) {
    stretch_ns = ns;
    stretch_gen[thread] = gen + 1;
}

/* The director thread, waiting for the rank to be quiet (under L): the thread that has run since
 * ``watch->since`` with nothing new is stopped, where it may be. */
void ml_busy_check(ml_busy_watch *watch, int baton, pid_t tid, unsigned long gen) {
    struct timespec now, cpu;
    ml_real_clock_gettime(CLOCK_MONOTONIC, &now);
    /* its own processor time, not the machine's: a thread the machine's load keeps from running is
     * not stopped for it; one in a futex wait of libgomp's (no processor time) is */
    clockid_t its = (clockid_t)((~(unsigned)tid) << 3 | 6); /* the kernel's per-thread CPU clock */
    long long used = ml_real_clock_gettime(its, &cpu) == 0 ? cpu.tv_sec * 1000000000LL + cpu.tv_nsec : 0;
    if (gen != watch->gen || baton != watch->baton) {
        watch->since = now, watch->gen = gen, watch->baton = baton, watch->cpu = used;
        return;
    }
    long long ran = (now.tv_sec - watch->since.tv_sec) * 1000000000LL + (now.tv_nsec - watch->since.tv_nsec);
    long long limit = stretch_gen[baton] == gen + 1 ? stretch_ns : SPIN_NS;
    if (ran < limit) return;
    int spun = used - watch->cpu >= limit, futex = 0;
    if (!spun) {
        char path[64], sys[256];
        snprintf(path, sizeof path, "/proc/self/task/%d/syscall", tid);
        FILE *f = fopen(path, "r");
        futex = f && fgets(sys, sizeof sys, f) && strtol(sys, NULL, 10) == SYS_futex;
        if (f) fclose(f);
    }
    if (!spun && !futex) return; /* its processor time since it last made progress adds up */
    watch->since = now;
    watch->cpu = used;
    code_ranges();
    syscall(SYS_tgkill, getpid(), tid, SPIN_SIGNAL);
}
