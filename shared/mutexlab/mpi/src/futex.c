/* Futex waits that C++ makes through syscall(SYS_futex, …): libstdc++'s std::future::get and
 * wait, std::promise, std::latch, std::barrier, std::counting_semaphore and std::atomic::wait
 * wait on a futex of their own, not on a condition variable, so a thread waiting for its
 * listener's set_value kept the rank busy (before: the stalled finding on a correct program).
 * A counted thread's FUTEX_WAIT now waits as a condition wait does, a call the library knows
 * (docs/mpi.md#threads), and FUTEX_WAKE wakes it; a timed one is a poll, as a timed condition
 * wait is, and one that times out moves mutexlab's clock on to its deadline. Every other system
 * call, and any of a thread the library does not count, is the C library's. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <time.h>

#include "internal.h"

static long real(long number, long a, long b, long c, long d, long e, long f) {
    static long (*real_syscall)(long, ...);
    if (!real_syscall) real_syscall = ml_real("syscall", NULL);
    return real_syscall(number, a, b, c, d, e, f);
}

static long long ns_of(const struct timespec *t) { return t->tv_sec * 1000000000LL + t->tv_nsec; }

static long futex_wait(unsigned *addr, unsigned expected, const struct timespec *timeout, int op, int flags) {
    ml_flush();
    ml_lock();
    if (__atomic_load_n(addr, __ATOMIC_ACQUIRE) != expected) {
        ml_unlock();
        errno = EAGAIN;
        return -1;
    }
    if (!timeout) {
        ml_block_as(addr, "a futex wait (std::future, std::latch, std::atomic::wait …)");
        ml_unlock();
        return 0;
    }
    ml_unlock();
    ml_poll(); /* a timed wait: at once while something new happens, as a timed condition wait */
    if (__atomic_load_n(addr, __ATOMIC_ACQUIRE) != expected) return 0;
    long long left = ns_of(timeout); /* FUTEX_WAIT: relative; FUTEX_WAIT_BITSET: until then */
    if (op == FUTEX_WAIT_BITSET) {
        struct timespec now;
        clock_gettime(flags & FUTEX_CLOCK_REALTIME ? CLOCK_REALTIME : CLOCK_MONOTONIC, &now);
        left -= ns_of(&now);
    }
    if (left > 0) ml_clock_on(left); /* timed out: its deadline has come */
    errno = ETIMEDOUT;
    return -1;
}

long syscall(long number, ...) {
    va_list ap;
    va_start(ap, number);
    long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long), d = va_arg(ap, long),
         e = va_arg(ap, long), f = va_arg(ap, long);
    va_end(ap);
    if (number != SYS_futex || !ml_counted()) return real(number, a, b, c, d, e, f);
    int op = (int)b & FUTEX_CMD_MASK;
    if (op == FUTEX_WAIT || op == FUTEX_WAIT_BITSET)
        return futex_wait((unsigned *)a, (unsigned)c, (const struct timespec *)d, op, (int)b);
    if (op == FUTEX_WAKE) {
        ml_wake((void *)a);
        return 0; /* how many it woke: libstdc++ does not ask */
    }
    return real(number, a, b, c, d, e, f);
}
