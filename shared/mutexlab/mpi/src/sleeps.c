/* The sleeps that select, poll, nanosleep and clock_nanosleep (mpi.c) do not cover: pselect and
 * ppoll given no descriptor, only a timeout, and epoll_wait or epoll_pwait on an epoll instance
 * that watches nothing. Each takes no time and is a poll, as a sleep is (docs/mpi.md#threads);
 * with descriptors, without a timeout, or from a thread the library does not count, each is the
 * C library's. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

static long long ns_of(const struct timespec *t) { return t->tv_sec * 1000000000LL + t->tv_nsec; }

int pselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds, const struct timespec *timeout,
            const sigset_t *sigmask) {
    if (nfds > 0 || !timeout || !ml_sleep(ns_of(timeout))) {
        int (*real_pselect)(int, fd_set *, fd_set *, fd_set *, const struct timespec *, const sigset_t *) =
            ml_real("pselect", NULL);
        return real_pselect(nfds, readfds, writefds, exceptfds, timeout, sigmask);
    }
    return 0;
}

int ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout, const sigset_t *sigmask) {
    if (nfds > 0 || !timeout || !ml_sleep(ns_of(timeout))) {
        int (*real_ppoll)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *) = ml_real("ppoll", NULL);
        return real_ppoll(fds, nfds, timeout, sigmask);
    }
    return 0;
}

/* Whether ``epfd`` is an epoll instance that watches no descriptor: its /proc fdinfo lists one
 * "tfd:" line per descriptor it watches. Unknown (no /proc, another kind of descriptor): no, and
 * the call is the C library's. */
static int watches_nothing(int epfd) {
    char path[64], text[4096];
    snprintf(path, sizeof path, "/proc/self/fd/%d", epfd);
    ssize_t k = readlink(path, text, sizeof text - 1);
    if (k <= 0) return 0;
    text[k] = '\0';
    if (strcmp(text, "anon_inode:[eventpoll]") != 0) return 0;
    snprintf(path, sizeof path, "/proc/self/fdinfo/%d", epfd);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    size_t got = 0;
    for (;;) { /* the first page is enough: a watched descriptor's line follows the header's four */
        ssize_t r = read(fd, text + got, sizeof text - 1 - got);
        if (r <= 0 || (got += (size_t)r) == sizeof text - 1) break;
    }
    close(fd);
    text[got] = '\0';
    return got > 0 && !strstr(text, "tfd:");
}

int epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout) {
    if (timeout < 0 || maxevents <= 0 || !watches_nothing(epfd) || !ml_sleep(timeout * 1000000LL)) {
        int (*real_wait)(int, struct epoll_event *, int, int) = ml_real("epoll_wait", NULL);
        return real_wait(epfd, events, maxevents, timeout);
    }
    return 0;
}

int epoll_pwait(int epfd, struct epoll_event *events, int maxevents, int timeout, const sigset_t *sigmask) {
    if (timeout < 0 || maxevents <= 0 || !watches_nothing(epfd) || !ml_sleep(timeout * 1000000LL)) {
        int (*real_pwait)(int, struct epoll_event *, int, int, const sigset_t *) = ml_real("epoll_pwait", NULL);
        return real_pwait(epfd, events, maxevents, timeout, sigmask);
    }
    return 0;
}
