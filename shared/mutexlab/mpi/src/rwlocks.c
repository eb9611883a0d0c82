/* Read-write locks between the threads of a rank (pthread_rwlock_*, and C++'s std::shared_mutex,
 * which libstdc++ makes of them): a thread waiting for a lock another thread holds waits as a
 * condition wait does, a call the library knows (docs/mpi.md#threads). Before, a listener taking
 * a std::shared_lock while the main thread held the unique lock across a sleep in its critical
 * section waited in the C library's futex, unseen: a false stalled finding on a correct program.
 * The lock's state lives in the pthread_rwlock_t itself, marked as mutexlab's; one made by
 * PTHREAD_RWLOCK_INITIALIZER (all zero) becomes mutexlab's at its first use; a lock shared between
 * processes is the C library's. Readers and writers take turns as the threads do: a reader waits
 * while a writer holds the lock, a writer while anyone does. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "internal.h"

#define OURS 0x6d6c7277U /* "mlrw" */

typedef struct {
    unsigned magic;
    int readers, writer;
} rwlock;

_Static_assert(sizeof(rwlock) <= sizeof(pthread_rwlock_t), "a lock's state fits in its pthread_rwlock_t");

static const pthread_rwlock_t zero; /* PTHREAD_RWLOCK_INITIALIZER's bytes */

/* The lock as mutexlab's (made so at its first use if it was made by the static initializer),
 * or NULL: the C library's (lock held). */
static rwlock *ours(pthread_rwlock_t *l) {
    if (((rwlock *)l)->magic == OURS) return (rwlock *)l;
    if (memcmp(l, &zero, sizeof zero) != 0) return NULL;
    *(rwlock *)l = (rwlock){OURS, 0, 0};
    return (rwlock *)l;
}

static void *real_of(const char *name) { return ml_real(name, NULL); }

int pthread_rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *attr) {
    int shared = PTHREAD_PROCESS_PRIVATE;
    if (attr) pthread_rwlockattr_getpshared(attr, &shared);
    if (shared != PTHREAD_PROCESS_PRIVATE) {
        int (*real_init)(pthread_rwlock_t *, const pthread_rwlockattr_t *) = real_of("pthread_rwlock_init");
        return real_init(l, attr);
    }
    ml_lock();
    memset(l, 0, sizeof *l);
    *(rwlock *)l = (rwlock){OURS, 0, 0};
    ml_unlock();
    return 0;
}

int pthread_rwlock_destroy(pthread_rwlock_t *l) {
    if (((rwlock *)l)->magic != OURS) {
        int (*real_destroy)(pthread_rwlock_t *) = real_of("pthread_rwlock_destroy");
        return real_destroy(l);
    }
    ((rwlock *)l)->magic = 0;
    return 0;
}

static int can(const rwlock *m, int write) { return !m->writer && (!write || m->readers == 0); }

static void take(rwlock *m, int write) {
    if (write)
        m->writer = 1;
    else
        m->readers++;
}

/* Take the lock, waiting while it cannot be taken (``wait``), else EBUSY; -1: not mutexlab's. */
static int acquire(pthread_rwlock_t *l, int write, int wait, const char *call) {
    ml_lock();
    rwlock *m = ours(l);
    if (!m) {
        ml_unlock();
        return -1;
    }
    if (!ml_counted()) { /* a thread the library does not count: it waits for real, yielding */
        while (wait && !can(m, write)) {
            ml_unlock();
            sched_yield();
            ml_lock();
        }
    } else {
        while (wait && !can(m, write)) ml_block_as(l, call);
    }
    int rc = can(m, write) ? (take(m, write), 0) : EBUSY;
    ml_unlock();
    return rc;
}

#define RWLOCK(name, write, wait)                                                            \
    int name(pthread_rwlock_t *l) {                                                          \
        int rc = acquire(l, write, wait, #name);                                             \
        if (rc >= 0) return rc;                                                              \
        int (*real_call)(pthread_rwlock_t *) = real_of(#name);                               \
        return real_call(l);                                                                 \
    }

RWLOCK(pthread_rwlock_rdlock, 0, 1)
RWLOCK(pthread_rwlock_wrlock, 1, 1)
RWLOCK(pthread_rwlock_tryrdlock, 0, 0)
RWLOCK(pthread_rwlock_trywrlock, 1, 0)

/* A timed one is a poll, as a timed condition wait is: it times out at once unless the lock is
 * free, after a poll. */
static int timed(pthread_rwlock_t *l, int write, const char *call) {
    int rc = acquire(l, write, 0, call);
    if (rc != EBUSY) return rc; /* taken, or not mutexlab's (-1) */
    ml_poll();
    rc = acquire(l, write, 0, call);
    return rc == EBUSY ? ETIMEDOUT : rc;
}

int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *abstime) {
    int rc = timed(l, 0, "pthread_rwlock_timedrdlock");
    if (rc >= 0) return rc;
    int (*real_call)(pthread_rwlock_t *, const struct timespec *) = real_of("pthread_rwlock_timedrdlock");
    return real_call(l, abstime);
}

int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *abstime) {
    int rc = timed(l, 1, "pthread_rwlock_timedwrlock");
    if (rc >= 0) return rc;
    int (*real_call)(pthread_rwlock_t *, const struct timespec *) = real_of("pthread_rwlock_timedwrlock");
    return real_call(l, abstime);
}

int pthread_rwlock_clockrdlock(pthread_rwlock_t *l, clockid_t clock, const struct timespec *abstime) {
    int rc = timed(l, 0, "pthread_rwlock_clockrdlock");
    if (rc >= 0) return rc;
    int (*real_call)(pthread_rwlock_t *, clockid_t, const struct timespec *) = real_of("pthread_rwlock_clockrdlock");
    return real_call(l, clock, abstime);
}

int pthread_rwlock_clockwrlock(pthread_rwlock_t *l, clockid_t clock, const struct timespec *abstime) {
    int rc = timed(l, 1, "pthread_rwlock_clockwrlock");
    if (rc >= 0) return rc;
    int (*real_call)(pthread_rwlock_t *, clockid_t, const struct timespec *) = real_of("pthread_rwlock_clockwrlock");
    return real_call(l, clock, abstime);
}

int pthread_rwlock_unlock(pthread_rwlock_t *l) {
    ml_lock();
    if (((rwlock *)l)->magic != OURS) {
        ml_unlock();
        int (*real_unlock)(pthread_rwlock_t *) = real_of("pthread_rwlock_unlock");
        return real_unlock(l);
    }
    rwlock *m = (rwlock *)l;
    if (m->writer)
        m->writer = 0;
    else if (m->readers > 0)
        m->readers--;
    ml_unlock();
    ml_wake(l);
    return 0;
}
