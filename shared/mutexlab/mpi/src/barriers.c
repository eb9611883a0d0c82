/* POSIX barriers between the threads of a rank (pthread_barrier_init without the process-shared
 * attribute): pthread_barrier_wait waits as a condition wait does, a call the library knows
 * (docs/mpi.md#threads), so a main thread and its listener that meet at a barrier no longer keep
 * the rank busy (before: the C library's futex wait, unseen, and the stalled finding on a correct
 * program). The count lives in the pthread_barrier_t itself, marked as mutexlab's; a barrier shared
 * between processes, or any not made by this pthread_barrier_init, is the C library's. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>

#include "internal.h"

#define OURS 0x6d6c6272U /* "mlbr" */

typedef struct {
    unsigned magic, count, arrived, round;
} barrier;

_Static_assert(sizeof(barrier) <= sizeof(pthread_barrier_t), "a barrier's counts fit in its pthread_barrier_t");

static barrier *ours(pthread_barrier_t *b) { return b && ((barrier *)b)->magic == OURS ? (barrier *)b : NULL; }

int pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *attr, unsigned count) {
    int shared = PTHREAD_PROCESS_PRIVATE;
    if (attr) pthread_barrierattr_getpshared(attr, &shared);
    if (shared != PTHREAD_PROCESS_PRIVATE) {
        int (*real_init)(pthread_barrier_t *, const pthread_barrierattr_t *, unsigned) =
            ml_real("pthread_barrier_init", NULL);
        return real_init(b, attr, count);
    }
    if (count == 0) return EINVAL;
    ml_lock();
    *(barrier *)b = (barrier){OURS, count, 0, 0};
    ml_unlock();
    return 0;
}

int pthread_barrier_destroy(pthread_barrier_t *b) {
    barrier *m = ours(b);
    if (!m) {
        int (*real_destroy)(pthread_barrier_t *) = ml_real("pthread_barrier_destroy", NULL);
        return real_destroy(b);
    }
    m->magic = 0;
    return 0;
}

/* The last thread to arrive starts the next round and wakes the others (it is the one told
 * PTHREAD_BARRIER_SERIAL_THREAD); the others wait until their round has passed. */
int pthread_barrier_wait(pthread_barrier_t *b) {
    barrier *m = ours(b);
    if (!m) {
        int (*real_wait)(pthread_barrier_t *) = ml_real("pthread_barrier_wait", NULL);
        return real_wait(b);
    }
    ml_flush();
    ml_lock();
    unsigned round = m->round;
    if (++m->arrived == m->count) {
        m->arrived = 0;
        m->round++;
        ml_unlock();
        ml_wake(b);
        return PTHREAD_BARRIER_SERIAL_THREAD;
    }
    while (m->round == round) ml_block_as(b, "pthread_barrier_wait");
    ml_unlock();
    return 0;
}
