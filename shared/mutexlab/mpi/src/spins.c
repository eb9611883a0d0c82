/* Spin locks between the threads of a rank (pthread_spin_*), defined here. busy.c stops a thread
 * that runs with nothing new only where it runs the program's own code (this library is linked
 * into the program's executable, so its code counts as the program's) or libgomp's, never the C
 * library's; a loop taking and letting go of a spin lock to read a flag spends most of its time in
 * the lock's own calls, so with the C library's it was never stopped, its listener never got its
 * turn, and the rank never answered: a false stalled finding. A counted thread finding the lock
 * held waits as on a condition variable (a wait the library knows) until the holder lets go; the
 * holder, if it runs on, is stopped as a busy wait and woken as such. The lock is the int of
 * pthread_spinlock_t (made by pthread_spin_init; no static initializer exists): 0 free, 1 held, 2
 * held and perhaps waited for, so letting go of it wakes its waiters; the same between processes
 * (pshared), by atomic operations on it, though a waiter of another process only yields. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>

#include "internal.h"

static int take(pthread_spinlock_t *l, int as) {
    int free_ = 0;
    return __atomic_compare_exchange_n(l, &free_, as, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

int pthread_spin_init(pthread_spinlock_t *l, int pshared) {
    (void)pshared;
    __atomic_store_n(l, 0, __ATOMIC_RELEASE);
    return 0;
}

int pthread_spin_destroy(pthread_spinlock_t *l) {
    (void)l;
    return 0;
}

int pthread_spin_trylock(pthread_spinlock_t *l) { return take(l, 1) ? 0 : EBUSY; }

int pthread_spin_lock(pthread_spinlock_t *l) {
    if (take(l, 1)) return 0;
    for (;;) {
        if (take(l, 2)) return 0; /* others may wait too: its unlock wakes them */
        if (!ml_counted()) {      /* a thread the library does not count: it yields, for real */
            sched_yield();
            continue;
        }
        ml_lock();
        int held = 1;
        if (__atomic_compare_exchange_n(l, &held, 2, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED) || held == 2)
            ml_block_as(l, "pthread_spin_lock"); /* until its holder lets go (or something happens) */
        ml_unlock();
    }
}

int pthread_spin_unlock(pthread_spinlock_t *l) {
    if (__atomic_exchange_n(l, 0, __ATOMIC_RELEASE) == 2) ml_wake(l); /* (it takes the library's lock) */
    return 0;
}
