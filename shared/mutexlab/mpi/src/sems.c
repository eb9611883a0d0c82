/* POSIX semaphores between the threads of a rank (sem_init with pshared 0): sem_wait waits as a
 * condition wait does, a call the library knows (docs/mpi.md#threads), so a thread waiting for
 * its listener's sem_post no longer keeps the rank busy (before: the stalled finding). The count
 * lives in the sem_t itself, marked as mutexlab's; a semaphore shared between processes
 * (pshared), a named one (sem_open) or any not made by this sem_init is the C library's. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <semaphore.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define OURS 0x6d6c736dU /* "mlsm" */

typedef struct {
    unsigned magic;
    int count;
} sem;

_Static_assert(sizeof(sem) <= sizeof(sem_t), "a semaphore's count fits in its sem_t");

static sem *ours(sem_t *s) { return s && ((sem *)s)->magic == OURS ? (sem *)s : NULL; }

int sem_init(sem_t *s, int pshared, unsigned int value) {
    if (pshared) {
        int (*real_init)(sem_t *, int, unsigned int) = ml_real("sem_init", NULL);
        return real_init(s, pshared, value);
    }
    ml_lock();
    ((sem *)s)->magic = OURS;
    ((sem *)s)->count = (int)value;
    ml_unlock();
    return 0;
}

int sem_destroy(sem_t *s) {
    sem *m = ours(s);
    if (!m) {
        int (*real_destroy)(sem_t *) = ml_real("sem_destroy", NULL);
        return real_destroy(s);
    }
    m->magic = 0;
    return 0;
}

int sem_post(sem_t *s) {
    sem *m = ours(s);
    if (!m) {
        int (*real_post)(sem_t *) = ml_real("sem_post", NULL);
        return real_post(s);
    }
    ml_lock();
    m->count++;
    ml_unlock();
    ml_wake(s);
    return 0;
}

int sem_wait(sem_t *s) {
    sem *m = ours(s);
    if (!m) {
        int (*real_wait)(sem_t *) = ml_real("sem_wait", NULL);
        ml_unseen("sem_wait on a semaphore shared between processes (sem_open, or sem_init with pshared 1)");
        int rc = real_wait(s);
        ml_unseen(NULL);
        return rc;
    }
    ml_flush();
    ml_lock();
    while (m->count <= 0) ml_block_held(s);
    m->count--;
    ml_unlock();
    return 0;
}

/* One that finds the count 0 is a poll, as MPI_Test finding nothing is. */
static int try_take(sem *m) {
    ml_lock();
    int took = m->count > 0;
    if (took) m->count--;
    ml_unlock();
    return took;
}

int sem_trywait(sem_t *s) {
    sem *m = ours(s);
    if (!m) {
        int (*real_trywait)(sem_t *) = ml_real("sem_trywait", NULL);
        return real_trywait(s);
    }
    if (try_take(m)) return 0;
    ml_poll();
    errno = EAGAIN;
    return -1;
}

/* A timed wait times out at once unless the count is up, after a poll (as a timed condition
 * wait: time passes only in mutexlab's clock). */
static int timed(sem *m) {
    if (try_take(m)) return 0;
    ml_poll();
    if (try_take(m)) return 0;
    errno = ETIMEDOUT;
    return -1;
}

int sem_timedwait(sem_t *s, const struct timespec *abstime) {
    sem *m = ours(s);
    if (!m) {
        int (*real_timedwait)(sem_t *, const struct timespec *) = ml_real("sem_timedwait", NULL);
        return real_timedwait(s, abstime);
    }
    return timed(m);
}

int sem_clockwait(sem_t *s, clockid_t clock, const struct timespec *abstime) {
    sem *m = ours(s);
    if (!m) {
        int (*real_clockwait)(sem_t *, clockid_t, const struct timespec *) = ml_real("sem_clockwait", NULL);
        return real_clockwait(s, clock, abstime);
    }
    return timed(m);
}

int sem_getvalue(sem_t *s, int *value) {
    sem *m = ours(s);
    if (!m) {
        int (*real_getvalue)(sem_t *, int *) = ml_real("sem_getvalue", NULL);
        return real_getvalue(s, value);
    }
    ml_lock();
    *value = m->count;
    ml_unlock();
    return 0;
}
