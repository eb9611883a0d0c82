/* mutexlab's MPI: each rank a process mutexlab's director starts, every message through it.
 *
 * The rank speaks the node protocol (docs/test-any-program.md) on the standard input and output
 * it was started with; at start it moves them to other descriptors, puts /dev/null (or --stdin's file) on fd 0 and a
 * pipe it reads itself on fd 1, so the program's printf output comes back in order with its
 * messages, as {"type":"log","stdout":...} lines. A step (an init, a delivered message) is
 * answered with `done` once the rank is quiescent: every thread of the program blocked in a call
 * mutexlab knows (a receive, a wait, a probe, a barrier, a condition variable, a join, a poll
 * with nothing new, the end of main) or ended. Threads are counted by defining pthread_create
 * and friends here: the program's executable defines them, so its calls and those of its shared
 * libraries (libstdc++'s std::thread, std::condition_variable) come here first, and the C
 * library's own are found with dlsym(RTLD_NEXT). sleep, usleep, nanosleep, clock_nanosleep and a
 * select or poll of no descriptor take no time.
 * Collectives: collectives.c; communicators: comm.c; persistent requests: persistent.c;
 * datatypes and MPI_Pack: types.c; each on the internals declared in internal.h. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/select.h>
#include <ucontext.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "busy.h"
#include "internal.h"

/* The C library's own functions of the names this file defines (resolved on first use). */
static int (*real_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static int (*real_join)(pthread_t, void **);
static void (*real_exit)(void *) __attribute__((noreturn));
static int (*real_cond_wait)(pthread_cond_t *, pthread_mutex_t *);
static int (*real_cond_signal)(pthread_cond_t *);
static int (*real_cond_broadcast)(pthread_cond_t *);
static int (*real_mutex_lock)(pthread_mutex_t *);
static int (*real_mutex_trylock)(pthread_mutex_t *);
static int (*real_mutex_unlock)(pthread_mutex_t *);

/* The process ends now, no handler run: the library's own ends. A program's _exit is its own
 * (below), which a rank that has ended well must not take. */
static _Noreturn void end_now(int status) {
    syscall(SYS_exit_group, status);
    for (;;) pause();
}

void *ml_real(const char *name, const char *version) {
    void *f = version ? dlvsym(RTLD_NEXT, name, version) : NULL;
    if (!f) f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "mutexlab MPI: the C library has no %s\n", name);
        end_now(70);
    }
    return f;
}

static void resolve(void) { /* idempotent: every thread writes the same values */
    if (real_mutex_unlock) return;
    real_mutex_lock = ml_real("pthread_mutex_lock", NULL);
    real_mutex_trylock = ml_real("pthread_mutex_trylock", NULL);
    real_create = ml_real("pthread_create", NULL);
    real_join = ml_real("pthread_join", NULL);
    real_exit = ml_real("pthread_exit", NULL);
    real_cond_wait = ml_real("pthread_cond_wait", "GLIBC_2.3.2");
    real_cond_signal = ml_real("pthread_cond_signal", "GLIBC_2.3.2");
    real_cond_broadcast = ml_real("pthread_cond_broadcast", "GLIBC_2.3.2");
    real_mutex_unlock = ml_real("pthread_mutex_unlock", NULL); /* last: resolve() is done once it is set */
}

#define LINE_MAX_ 70000
#define POLLS 3 /* unchanged polls in a row that make a thread wait for something to happen */
/* A sleep after which the program has printed a line is work, not a wait (print, sleep, print:
 * a critical section's simulated work, steps of a task printed as they go): it counts as something new, up
 * to PRINTED_SLEEPS sleeps in a row with nothing else new, so a loop that prints while it waits
 * still comes to wait (well within the director's 1,000 lines an answer). */
#define PRINTED_SLEEPS 100
/* A thread whose polls with nothing new were all sleeps (no MPI_Test, MPI_Iprobe … among them)
 * may be working, not waiting: `for (i = 0; i < 5; i++) usleep(1000);` inside a critical section
 * ends by itself under any MPI. When the rank is otherwise quiet, such a sleeper is woken to go on
 * sleeping, up to SLEEP_WAKES times a step (POLLS sleeps each), before the rank says done; a
 * `while (!flag) usleep(…)` waiting for another thread's flag still comes to wait. */
#define SLEEP_WAKES 20

/* A sleep after a printed line, while the rank holds a resource (its adapter says), is a pause:
 * the thread waits for the director's `wake`, a step the director schedules like a delivery, so
 * other ranks may take steps while this one is inside its critical section. At most PAUSES in a
 * row with nothing new but the wakes (a loop that prints while it waits inside). */
#define PAUSES 3

enum { W_REQ, W_PROBE, W_POLL, W_COND, W_JOIN, W_INIT, W_FOREVER, W_MUTEX, W_PAUSE };

typedef struct waiter {
    struct waiter *next;
    int kind, woken, src, tag, ctx, who; /* who: the waiting thread's number */
    int signalled;                       /* a timed condition wait (W_POLL on a condition variable) */
    int sleeper;                         /* W_POLL after sleeps alone: woken when the rank is quiet */
    int spinner;                         /* W_POLL of a thread stopped running (busy.c) */
    int loop;                            /* W_POLL of a poll or timed wait, which a linger lets go round */
    unsigned long site;                  /* a loop's: where it waits (sites.c), for the done's "loops" */
    int lingered;                        /* W_POLL woken by a linger: it goes on round to where it waited */
    long pause;                          /* W_PAUSE: its number; a wake ends the oldest */
    void *what; /* request, condition variable */
    pthread_t thread;
    const char *call; /* the program's call it waits in (a hang finding names it) */
} waiter;

typedef struct msg {
    struct msg *next;
    int src, tag, ctx;
    long sync; /* a synchronous send's number at its sender (0: a standard send): acknowledged when matched */
    long bytes;
    unsigned char *data;
} msg;

typedef struct {
    int used, done, recv, src, tag, ctx, freed; /* freed: MPI_Request_free'd, the slot ends with it */
    long truncated;                             /* the bytes of a message longer than the buffer */
    long sync;                                  /* a synchronous send waiting for its receive's ack */
    int dest, cancelling;                       /* its destination; MPI_Cancel asked it to drop the send */
    int standard; /* a standard send made synchronous by --sync-sends (a hang names it so) */
    int persistent, active; /* MPI_Send_init, MPI_Recv_init...: started by MPI_Start, kept when done */
    int more; /* a receive of several messages (MPI_Ibarrier's): those it takes before it completes */
    long posted;            /* a receive's posting number: a message goes to the oldest that matches */
    MPI_Datatype type;      /* a point-to-point receive's: where its bytes go (0: as they come) */
    void *buf;
    long capacity;
    MPI_Status status;
} request;

static pthread_mutex_t L = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER, quiet = PTHREAD_COND_INITIALIZER;
static int live = 1, blocked, rank_ = -1, size_, first_ = 1, initialized, finalized, out_fd = -1, stdout_r = -1;
static unsigned long gen = 1;
/* mutexlab's clock, what MPI_Wtime reads: 1 ms a step, the time each sleep asks for, 1 µs a
 * reading; the same schedule gives the same readings (the real clock would make a message that
 * carries one differ from run to run, which systematic search and replay cannot take). */
static long long clock_ns;
static waiter *waiters;
static msg *unexpected;
static FILE *in;
#define REQUESTS 4096
static request reqs[REQUESTS];
#define EXITED 1024
static pthread_t exited[EXITED];
static int n_exited;
static char outbuf[8192];
static size_t outlen;
static unsigned long lines_out; /* the program's stdout lines sent so far */
static __thread unsigned long seen, seen_lines;
static __thread int unchanged, printed_sleeps, polled_mpi; /* polled_mpi: an MPI poll since something new */
/* The blocking call of the program's this thread is in (outermost; hangs.c names it), and its last collective's. */
static __thread const char *calling;
__thread const char *ml_collective;
#define CALLING(name) const char *calling_was = calling; if (!calling) calling = (name)
#define CALLED() (calling = calling_was)
static __thread unsigned long pause_lines, pause_gen; /* lines_out and gen at this thread's last pause */
static __thread int pauses_in_row;
static long pauses; /* pauses made so far */
/* A poller that reads MPI_Wtime between its polls waits for a deadline (a timeout loop): rather
 * than wait for ever, its idle polls move mutexlab's clock on, 1 ms, then twice as far each time,
 * so any deadline passes within a few dozen polls; one that has not after JUMPS waits as others. */
#define JUMPS 40 /* jumps before it waits: 1 ms doubling up to 2^24 ms (4.7 hours) each, 3.3 days in all */
#define JUMP_SHIFT_MAX 24
/* The jumps restart at every step, so a rank that naps on a deadline between MPI_Tests moves the
 * clock at every step: at most 3.3 days a step (before: 35 years, and a 64-bit count of ns wrapped
 * to negative after eight such steps, a deadline that never passed again). Never past CLOCK_ROOM. */
#define CLOCK_ROOM (LLONG_MAX / 2)
static __thread int read_clock, jumps;
/* The first jump is told to the director ({"type":"log","clock_jumped":true}): a search that
 * jumped never delivered a message before that deadline, which its verdict must say. */
static int jump_told;
/* The program's threads take turns: only the thread holding the baton runs program code; it
 * hands the baton on when it waits in a call the library knows (or ends), to the lowest-numbered
 * thread that can run (main is 0, the others numbered as they are started). So the threads of a
 * rank interleave the same way every time a schedule is played, not as the machine's scheduler
 * happens to run them. */
#define THREADS ML_THREADS
enum { T_RUN, T_WAIT, T_GONE };
static int n_threads = 1, thread_state[THREADS], baton;
static __thread int self = -1; /* this thread's number; -1 for a thread the library does not count */
/* A poller with nothing new that holds a mutex another thread waits for does not wait: under any
 * MPI its poll returns and it lets go (`lock(m); MPI_Iprobe(…); unlock(m); usleep(…)`); it hands
 * the mutex on: at its next lock of it, the waiter woken by its unlock takes it first. */
static pid_t tids[THREADS];       /* each thread's kernel id: glibc records a mutex's owner by it */
static void *handing[THREADS];    /* the mutex a thread is to hand on at its unlock (under L) */
static __thread void *handed;     /* the mutex this thread let go of for a waiter */
static __thread int defers;       /* polls it did not wait in, holding a mutex wanted (POLLS at most) */
/* A run at rest, nothing in flight: under any MPI nothing arrives while a program's own loop of
 * polls, sleeps or timed waits goes round, and a bounded one (`for (i = 0; i < 500 && !flag; i++)
 * { MPI_Iprobe(…); usleep(…); }`) ends, giving up. The director's `linger` input wakes each thread
 * waiting in such a loop to go on with nothing new, up to linger_left polls past the POLLS that
 * make it wait, counted over the rank's threads (the director's "polls", its one source), then
 * they wait again. Only for that input: any other sets it to 0 (under L). A send ends it
 * (``sent``): a loop that acts as it waits (a request sent again at each timeout, a heartbeat)
 * acts once a linger, each message a step for the director to order, not thousands in one. */
static long linger_left;
static void sent(void) { linger_left = 0; } /* under L */

/* This thread holds L, or is taking or letting go of it: a busy-wait signal leaves it be. Counted
 * before the lock and uncounted after the unlock, so a signal between the lock and the count (or
 * between the uncount and the unlock) cannot find L held by its own thread and take it again. */
static __thread volatile int in_L;
static void lock_L(void) {
    resolve();
    in_L++;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    real_mutex_lock(&L);
}
static void unlock_L(void) {
    real_mutex_unlock(&L);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    in_L--;
}

static void fatal(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2))); /* stops the run */
static void fatal_error(int code, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

static void counted_thread(const char *call) {
    if (self < 0) {
        lock_L();
        fatal("%s from a thread not started by the program's pthread_create (std::thread, a library's own "
              "thread?): mutexlab's MPI counts the threads it must wait for through pthread_create",
              call);
    }
}

/* -- output: lines to the director, under L -------------------------------------------- */
static void put(const char *s, size_t n) {
    while (n) {
        ssize_t w = write(out_fd, s, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) end_now(0); /* the director is gone */
        s += w;
        n -= (size_t)w;
    }
}

static void json_string(char *dst, size_t cap, const char *src, size_t n) {
    size_t j = 0;
    dst[j++] = '"';
    for (size_t i = 0; i < n && j + 8 < cap; i++) {
        unsigned char c = (unsigned char)src[i];
        if (c == '"' || c == '\\') {
            dst[j++] = '\\';
            dst[j++] = (char)c;
        } else if (c < 0x20 || c >= 0x7f) {
            j += (size_t)snprintf(dst + j, cap - j, "\\u%04x", c);
        } else {
            dst[j++] = (char)c;
        }
    }
    dst[j++] = '"';
    dst[j] = 0;
}

static void stdout_line(const char *s, size_t n) {
    static char esc[6 * 4096 + 64], line[6 * 4096 + 128];
    if (n > 4096) n = 4096;
    json_string(esc, sizeof esc, s, n);
    int k = snprintf(line, sizeof line, "{\"type\":\"log\",\"stdout\":%s}\n", esc);
    put(line, (size_t)k);
    lines_out++;
}

static void drain(void) { /* the program's printf output so far, as log lines (under L) */
    if (stdout_r < 0) return;
    for (;;) {
        ssize_t r = read(stdout_r, outbuf + outlen, sizeof outbuf - outlen);
        if (r <= 0) break;
        outlen += (size_t)r;
        char *nl;
        while ((nl = memchr(outbuf, '\n', outlen)) != NULL) {
            stdout_line(outbuf, (size_t)(nl - outbuf));
            outlen -= (size_t)(nl - outbuf) + 1;
            memmove(outbuf, nl + 1, outlen);
        }
        if (outlen == sizeof outbuf) {
            stdout_line(outbuf, outlen);
            outlen = 0;
        }
    }
}

static void drain_all(void) { /* the rank ends: a last line printed without its newline is one too */
    drain();
    if (outlen > 0) {
        stdout_line(outbuf, outlen);
        outlen = 0;
    }
}

/* -- quiescence and waiting ----------------------------------------------------------- */
static void unblock(waiter *w) {
    if (!w->woken) {
        w->woken = 1;
        blocked--;
        if (w->who >= 0) thread_state[w->who] = T_RUN;
    }
}

static int pick(void) { /* the thread to run next: the lowest-numbered that can (under L) */
    for (int i = 0; i < n_threads; i++)
        if (thread_state[i] == T_RUN) return i;
    return -1;
}

static void release(void) { /* this thread waits or ends: the baton to the next (under L) */
    baton = pick();
    real_cond_broadcast(&wake);
}

static void acquire(void) { /* this thread can run: wait for its turn (under L) */
    if (self < 0) return;
    for (;;) {
        if (baton < 0 || thread_state[baton] != T_RUN) baton = pick();
        if (baton == self) return;
        real_cond_wait(&wake, &L);
    }
}

static void bump(void) { /* something happened: pollers, and threads waiting for a mutex, look again (under L) */
    gen++;
    for (waiter *w = waiters; w; w = w->next)
        if (w->kind == W_POLL || w->kind == W_MUTEX) unblock(w);
    real_cond_broadcast(&wake);
}

static void add_waiter(waiter *w) {
    w->woken = 0;
    w->who = self;
    if (self >= 0) thread_state[self] = T_WAIT;
    w->next = waiters;
    waiters = w;
    blocked++;
    real_cond_signal(&quiet);
}

static void remove_waiter(waiter *w) {
    for (waiter **p = &waiters; *p; p = &(*p)->next)
        if (*p == w) {
            *p = w->next;
            break;
        }
}

static void block_on(waiter *w) { /* under L: wait until someone wakes w */
    int old;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    add_waiter(w);
    if (w->kind != W_POLL && w->kind != W_MUTEX && w->kind != W_PAUSE) bump();
    if (self >= 0) release();
    while (!w->woken) real_cond_wait(&wake, &L);
    remove_waiter(w);
    acquire();
    pthread_setcancelstate(old, NULL);
}

static int holder(pthread_mutex_t *m) { /* the counted thread holding m, or -1 (under L) */
    for (int i = 0; m->__data.__owner && i < n_threads; i++)
        if (tids[i] == m->__data.__owner && thread_state[i] != T_GONE) return i;
    return -1;
}

static pthread_mutex_t *wanted(int t) { /* a mutex thread t holds that another thread waits for (under L) */
    for (waiter *w = waiters; w; w = w->next)
        if (w->kind == W_MUTEX && !w->woken && holder(w->what) == t) return w->what;
    return NULL;
}

/* Where this thread last waited in a loop of its own (sites.c), and the polls it may still go on
 * after a linger's are spent, to wait there again: a loop of an MPI_Test and a usleep waits at
 * either call, and a linger ending at the other would look like a loop left for another. */
static __thread unsigned long waited_at;
static __thread int homing;
/* What this thread's last poll with nothing new asked for (a probe's source, tag and
 * communicator; a test's requests), kept through its sleeps: a loop that gave up and polls again
 * at the same line for another peer or tag, sleeping between, waits at another place. */
static __thread unsigned long poll_args;
/* Requests made and messages sent by the rank: a loop that gave up and posted another receive
 * (or cancelled and freed one, then posted anew) is another loop (the done's "loops"). */
static long made;
#define HOMING 256 /* more than one round of any loop's polls */

/* A poll of a program's own loop (not one inside MPI_Waitany, MPI_Waitsome …, which never return
 * with nothing new) with nothing new, while the director lingers: it goes on instead of waiting. */
static int lingers_on(void) {
    if (linger_left <= 0 || (calling && strncmp(calling, "MPI_", 4) == 0)) return 0;
    linger_left--;
    homing = HOMING;
    return 1;
}

/* Once a linger's polls are spent, whether a thread at ``here`` (its poll's place, taken at the
 * one place of its kind of poll that would wait) goes on round its loop to where it waited. */
static unsigned long place(void) { /* where this thread's poll is, with what it asked for */
    return ml_call_site() ^ (poll_args * 0x9E3779B97F4A7C15UL);
}

/* A thread of a loop of its own waits at its place (under L); woken by a linger, it goes home
 * once the linger's polls are spent. */
static void wait_in_loop(waiter *w) {
    waited_at = w->site;
    block_on(w);
    homing = w->lingered ? HOMING : 0;
}

static int homes(unsigned long here) {
    if (homing > 0 && --homing > 0 && here != waited_at) return 1;
    homing = 0;
    return 0;
}

static void poll_for(int sleeping) { /* a poll that found nothing: after POLLS with nothing new, wait */
    unsigned long here;
    lock_L();
    if (sleeping) drain(); /* its lines so far: has it printed since its last poll? */
    if (!sleeping) polled_mpi = 1;
    if (gen != seen) {
        seen = gen;
        unchanged = defers = homing = 0;
        jumps = 0;
        seen_lines = lines_out;
        printed_sleeps = 0;
        polled_mpi = !sleeping;
    } else if (sleeping && lines_out != seen_lines && printed_sleeps < PRINTED_SLEEPS) {
        seen_lines = lines_out; /* printed between its sleeps: working, not waiting */
        printed_sleeps++;
        unchanged = 0;
    } else if (++unchanged >= POLLS && read_clock && jumps < JUMPS && clock_ns < CLOCK_ROOM) {
        /* the deadline it reads the clock for comes nearer */
        clock_ns += 1000000LL << (jumps < JUMP_SHIFT_MAX ? jumps : JUMP_SHIFT_MAX);
        jumps++;
        unchanged = 0;
        if (!jump_told) {
            static const char told[] = "{\"type\":\"log\",\"clock_jumped\":true}\n";
            jump_told = 1;
            put(told, sizeof told - 1);
        }
    } else if (unchanged >= POLLS && defers < POLLS && (handing[self] = wanted(self)) != NULL) {
        defers++; /* it goes on, to let go of what another thread waits for */
    } else if (unchanged >= POLLS && lingers_on()) {
        /* at rest: nothing arrives, its loop goes round (and may end by its count) */
    } else if (unchanged >= POLLS && !homes(here = place())) {
        waiter w = {.kind = W_POLL, .sleeper = !polled_mpi, .loop = 1, .call = calling, .site = here};
        wait_in_loop(&w);
        seen = gen;
        unchanged = defers = 0;
        jumps = 0;
        seen_lines = lines_out;
        printed_sleeps = 0;
        polled_mpi = 0;
    }
    read_clock = 0;
    unlock_L();
}

static void poll_point(void) { poll_for(0); }

/* The rank is quiet (under L): wake its lowest-numbered sleeper (SLEEP_WAKES), if it has one. */
static int wake_a_sleeper(void) {
    waiter *first = NULL;
    for (waiter *w = waiters; w; w = w->next)
        if (w->kind == W_POLL && w->sleeper && !w->woken && (!first || w->who < first->who)) first = w;
    if (!first) return 0;
    unblock(first);
    real_cond_broadcast(&wake);
    return 1;
}

/* Whether this sleep is a pause (and it has paused): the program printed since this thread's
 * last pause and its adapter says the rank holds a resource. Asked of the adapter on the input
 * only mid-step (MPI_Init done, a counted thread runs), when the director thread is not reading it. */
static int pause_asked(const char *ask, size_t n);

static int paused(void) {
    if (self < 0 || !initialized) return 0;
    lock_L();
    drain();
    if (lines_out == pause_lines) {
        unlock_L();
        return 0;
    }
    pause_lines = lines_out;
    static const char ask[] = "{\"type\":\"log\",\"pausable\":true}\n";
    return pause_asked(ask, sizeof ask - 1);
}

/* rma.c: an operation on the rank's own window is a pause (a step of its own), printed or not and
 * inside a resource or not, so another rank's operation on that window may come first, as it may
 * under any MPI (the adapter always says pause); at most PAUSES in a row with nothing new. */
int ml_rma_pause(void) {
    if (self < 0 || !initialized) return 0;
    lock_L();
    drain();
    static const char ask[] = "{\"type\":\"log\",\"pausable\":\"rma\"}\n";
    return pause_asked(ask, sizeof ask - 1);
}

static int pause_asked(const char *ask, size_t n) { /* under L, which it lets go of */
    pauses_in_row = gen == pause_gen ? pauses_in_row + 1 : 0;
    char answer[64];
    if (pauses_in_row >= PAUSES) {
        unlock_L();
        return 0;
    }
    put(ask, n);
    if (!fgets(answer, sizeof answer, in)) end_now(0); /* the director is gone */
    if (!strstr(answer, "\"pause\"")) {
        unlock_L();
        return 0;
    }
    waiter w = {.kind = W_PAUSE, .pause = ++pauses};
    block_on(&w);
    pause_gen = seen = gen;
    unchanged = jumps = printed_sleeps = polled_mpi = 0;
    seen_lines = lines_out;
    unlock_L();
    return 1;
}

static void wake_paused(void) { /* the director's wake: the oldest pause ends (under L) */
    waiter *oldest = NULL;
    for (waiter *w = waiters; w; w = w->next)
        if (w->kind == W_PAUSE && !w->woken && (!oldest || w->pause < oldest->pause)) oldest = w;
    if (!oldest) fatal("a wake while no thread of the rank is paused");
    unblock(oldest);
    bump();
}

static void sleep_point(void) { /* a sleep: a pause, or a poll unless it printed since */
    if (!paused()) poll_for(1);
}

/* The rank's last line, then its end (under L). ``code`` 70: mutexlab's MPI cannot go on
 * (``mpi_error``: the run is stopped, not judged); any other: an error MPI's default handler
 * (MPI_ERRORS_ARE_FATAL) ends the job with, the rank ending with status ``code``, its last words
 * saying why (``mpi_abort``): a finding about the program, the crash. */
__attribute__((noreturn)) static void die(int code, const char *fmt, va_list ap) {
    char text[768], esc[4800], line[5000];
    vsnprintf(text, sizeof text, fmt, ap);
    int handler = code != 70 ? ml_handler_held() : MPI_ERRORS_ARE_FATAL;
    if (handler != MPI_ERRORS_ARE_FATAL && handler != MPI_ERRORS_ABORT) {
        /* the program's own handler is called, as MPI calls it (it may MPI_Abort: the crash) */
        unlock_L();
        int called = ml_call_made_handler(handler, ml_error_ctx(), code);
        lock_L();
        size_t n = strlen(text); /* the handler returned, or MPI_ERRORS_RETURN: the call would return the code */
        snprintf(text + n, sizeof text - n, "; %s, but mutexlab's MPI does not return errors: the program was "
                 "not judged", called ? "the program's error handler (MPI_Comm_create_errhandler) returned, so MPI "
                 "would return the code" : "the communicator's error handler is MPI_ERRORS_RETURN");
        code = 70;
    }
    json_string(esc, sizeof esc, text, strlen(text));
    int k = code == 70 ? snprintf(line, sizeof line, "{\"type\":\"log\",\"mpi_error\":%s}\n", esc)
                       : snprintf(line, sizeof line, "{\"type\":\"log\",\"mpi_abort\":%d,\"last_words\":%s}\n",
                                  code, esc);
    fflush(stdout);
    drain();
    put(line, (size_t)k);
    end_now(code);
}

void ml_fatal(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    lock_L();
    die(70, fmt, ap);
}

static void fatal(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    die(70, fmt, ap);
}

static void fatal_error(int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    die(code, fmt, ap);
}

void ml_error(int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    lock_L();
    die(code, fmt, ap);
}


/* -- messages -------------------------------------------------------------------------- */
void ml_lock(void) { lock_L(); }
void ml_unlock(void) { unlock_L(); }
int ml_self(void) { return self; }
int ml_in_lock(void) { return in_L; }
unsigned long ml_gen_held(void) { return gen; }
void ml_park_spinner(int sleeper) { /* busy.c: the calling thread waits as a poll, stopped running (under L) */
    waiter w = {.kind = W_POLL, .sleeper = sleeper, .spinner = 1, .call = NULL};
    block_on(&w);
    seen = gen;
    unchanged = 0;
}
void ml_thread(const char *call) { counted_thread(call); }
int ml_phase(void) { return finalized ? 2 : initialized; }
int ml_me(void) { return rank_; }
int ml_np(void) { return size_; }

static void arrive(msg *m);

static void send_message(int dest, int tag, int ctx, const void *buf, long bytes, const char *call, long sync);

void ml_send(int dest, int tag, int ctx, const void *buf, long bytes, const char *call) {
    send_message(dest, tag, ctx, buf, bytes, call, 0);
}

/* A message to ``dest``; ``sync`` > 0 makes it synchronous: the receiving rank acknowledges it
 * (a message the director orders like any other) once a receive has matched it. */
static void send_message(int dest, int tag, int ctx, const void *buf, long bytes, const char *call, long sync) {
    if (dest == MPI_PROC_NULL) return; /* MPI: a send to no process does nothing, at once */
    int size = ml_size(ctx);
    if (dest < 0 || dest >= size) { /* MPI_ERR_RANK: fatal under MPI's default handler, a crash */
        lock_L();
        fatal_error(MPI_ERR_RANK, "MPI_ERR_RANK: %s to rank %d (there are ranks 0 to %d)", call, dest, size - 1);
    }
    dest = ml_world(ctx, dest); /* the communicator's rank: the world's */
    if (dest == rank_) { /* to itself: no other process is involved, it arrives at once */
        msg *m = calloc(1, sizeof *m);
        unsigned char *copy = malloc((size_t)bytes + 1);
        lock_L();
        if (!m || !copy) fatal("%s: out of memory", call);
        if (bytes) memcpy(copy, buf, (size_t)bytes);
        *m = (msg){NULL, rank_, tag, ctx, sync, bytes, copy};
        drain();
        arrive(m);
        unlock_L();
        return;
    }
    if (bytes > 30000) {
        lock_L();
        fatal("%s of %ld bytes: mutexlab's MPI carries at most 30000 bytes a message", call, bytes);
    }
    static char line[2 * 30000 + 256];
    lock_L();
    int kind = ctx % 4; /* the message's name in the trace: its tag, or what it is for */
    const char *name = kind == CTX_P2P ? "tag " : kind == CTX_COLLECTIVE ? "collective " : "barrier";
    int k = snprintf(line, sizeof line,
                     "{\"type\":\"send\",\"to\":%d,\"body\":{\"type\":\"%s%d\",\"tag\":%d,\"ctx\":%d,\"data\":\"",
                     dest + first_, name, kind == CTX_P2P || kind == CTX_COLLECTIVE ? tag : kind, tag, ctx);
    const unsigned char *p = buf;
    for (long i = 0; i < bytes; i++) k += sprintf(line + k, "%02x", p[i]);
    k += sync ? sprintf(line + k, "\",\"sync\":%ld}}\n", sync) : sprintf(line + k, "\"}}\n");
    drain();
    put(line, (size_t)k);
    sent();
    bump();
    unlock_L();
}

static int matches(int src, int tag, int ctx, const msg *m) {
    return m->ctx == ctx && (src == MPI_ANY_SOURCE || src == m->src) && (tag == MPI_ANY_TAG || tag == m->tag);
}

static void acknowledge(const msg *m);

static void complete(request *r, msg *m) { /* under L */
    if (m->sync) acknowledge(m); /* a synchronous send: its sender learns a receive has matched it */
    if (r->more > 0) { /* one of several: taken, the receive stays posted */
        r->more--;
        free(m->data);
        free(m);
        return;
    }
    long n = m->bytes < r->capacity ? m->bytes : r->capacity;
    if (n) ml_unpack(r->buf, m->data, n, r->type);
    if (m->bytes > r->capacity) r->truncated = m->bytes; /* an error, said where it completes */
    r->status.MPI_SOURCE = ml_local_held(r->ctx, m->src);
    r->status.MPI_TAG = m->tag;
    r->status.MPI_ERROR = MPI_SUCCESS;
    r->status.mutexlab_bytes = n;
    r->done = 1;
    if (r->freed) r->used = 0;
    free(m->data);
    free(m);
    for (waiter *w = waiters; w; w = w->next)
        if (w->kind == W_REQ && w->what == r) unblock(w);
}

/* A synchronous send of this rank was matched (its request completes), or, ``cancelled``, taken
 * back by its destination before any receive matched it (MPI_Test_cancelled says so) (under L). */
static void acked(long sync, int cancelled) {
    for (int i = 1; i < REQUESTS; i++) {
        request *r = &reqs[i];
        if (r->used && !r->recv && !r->done && r->sync == sync) {
            r->done = 1;
            if (cancelled) r->status = (MPI_Status){MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 1};
            if (r->freed) r->used = 0;
            for (waiter *w = waiters; w; w = w->next)
                if (w->kind == W_REQ && w->what == r) unblock(w);
            break;
        }
    }
    bump();
}

static void acknowledge(const msg *m) { /* a receive matched a synchronous send: tell its sender (under L) */
    if (m->src == rank_) {
        acked(m->sync, 0);
        return;
    }
    char line[160];
    int k = snprintf(line, sizeof line, "{\"type\":\"send\",\"to\":%d,\"body\":{\"type\":\"ssend ack\",\"ack\":%ld}}\n",
                     m->src + first_, m->sync);
    drain();
    put(line, (size_t)k);
}

static int dropped(msg *m);
static int take_back(int src, long sync, int later);

static void arrive(msg *m) { /* a delivered message: to the oldest posted receive it matches (under L) */
    if (m->sync && dropped(m)) return; /* its sender cancelled it before it came (--reorder) */
    request *oldest = NULL;
    for (int i = 1; i < REQUESTS; i++) {
        request *r = &reqs[i];
        if (r->used && r->recv && !r->done && matches(r->src, r->tag, r->ctx, m) && (!oldest || r->posted < oldest->posted))
            oldest = r;
    }
    if (oldest) {
        complete(oldest, m);
        bump();
        return;
    }
    msg **p = &unexpected;
    while (*p) p = &(*p)->next;
    *p = m;
    for (waiter *w = waiters; w; w = w->next)
        if (w->kind == W_PROBE && matches(w->src, w->tag, w->ctx, m)) unblock(w);
    bump();
}

static int new_request(void) { /* under L */
    static int next = 1;
    for (int k = 0; k < REQUESTS - 1; k++) {
        int i = 1 + (next - 1 + k) % (REQUESTS - 1);
        if (!reqs[i].used) {
            memset(&reqs[i], 0, sizeof reqs[i]);
            reqs[i].used = 1;
            made++;
            next = i + 1;
            return i;
        }
    }
    fatal("more than %d MPI requests at once", REQUESTS - 1);
    return 0;
}

static int post(void *buf, long capacity, MPI_Datatype type, int src, int tag, int ctx, int n);
int ml_post_recv(void *buf, long capacity, int src, int tag, int ctx) { return post(buf, capacity, 0, src, tag, ctx, 1); }
int ml_post_recv_n(void *buf, long capacity, int src, int tag, int ctx, int n) {
    return post(buf, capacity, 0, src, tag, ctx, n);
}

static int post(void *buf, long capacity, MPI_Datatype type, int src, int tag, int ctx, int n) {
    static long posts;
    src = ml_world(ctx, src);
    lock_L();
    int i = new_request();
    request *r = &reqs[i];
    r->recv = 1;
    r->buf = buf;
    r->capacity = capacity;
    r->type = type;
    r->src = src;
    r->tag = tag;
    r->ctx = ctx;
    r->posted = ++posts;
    r->more = n - 1;
    if (src == MPI_PROC_NULL || n <= 0) { /* MPI: a receive from no process completes at once, empty */
        r->status = (MPI_Status){MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0, 0};
        r->done = 1;
    }
    for (msg **p = &unexpected; *p && !r->done;) {
        if (!matches(src, tag, ctx, *p)) {
            p = &(*p)->next;
            continue;
        }
        msg *m = *p;
        *p = m->next;
        complete(r, m); /* done, or one of several taken */
    }
    bump();
    unlock_L();
    return i;
}

static request *request_of(MPI_Request *handle, const char *call) {
    if (*handle <= 0 || *handle >= REQUESTS || !reqs[*handle].used) {
        ml_error_on(0); /* no request, so no communicator: MPI_COMM_WORLD's handler */
        lock_L();
        fatal_error(MPI_ERR_REQUEST, "MPI_ERR_REQUEST: %s of a request that is not active (%d)", call, *handle);
    }
    return &reqs[*handle];
}

/* A request MPI calls null: MPI_REQUEST_NULL, or a persistent request not started (under L). */
static int inactive(MPI_Request handle) {
    return handle == MPI_REQUEST_NULL ||
           (handle > 0 && handle < REQUESTS && reqs[handle].used && reqs[handle].persistent && !reqs[handle].active);
}

static int inactive_now(MPI_Request handle, MPI_Status *status) { /* MPI: its wait or test returns at once, empty */
    lock_L();
    int is = inactive(handle);
    unlock_L();
    if (is && status != MPI_STATUS_IGNORE) *status = (MPI_Status){MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 0};
    return is;
}

static void finish(MPI_Request *handle, MPI_Status *status) { /* under L */
    request *r = &reqs[*handle];
    if (r->truncated) ml_error_on(r->ctx); /* the request's communicator's handler */
    if (r->truncated)
        fatal_error(MPI_ERR_TRUNCATE, "MPI_ERR_TRUNCATE: a message of %ld bytes from rank %d (tag %d) received into %ld "
                    "bytes (the receive's count times its type's extent)", r->truncated, r->status.MPI_SOURCE,
                    r->status.MPI_TAG, r->capacity);
    if (status != MPI_STATUS_IGNORE) *status = r->status;
    if (r->persistent) { /* inactive again: the handle stays, for MPI_Start or MPI_Request_free */
        r->active = 0;
        return;
    }
    r->used = 0;
    *handle = MPI_REQUEST_NULL;
}

/* Persistent requests (persistent.c): one made inactive, and one started, taking over the request
 * ``started`` that its send or receive made (which ends). */
MPI_Request ml_new_persistent(int recv) {
    lock_L();
    int i = new_request();
    reqs[i].persistent = 1;
    reqs[i].recv = recv;
    reqs[i].done = 1;
    unlock_L();
    return i;
}

int ml_active(MPI_Request handle) {
    lock_L();
    int is = handle > 0 && handle < REQUESTS && reqs[handle].used && reqs[handle].persistent ? reqs[handle].active : -1;
    unlock_L();
    return is; /* -1: not a persistent request */
}

void ml_adopt(MPI_Request handle, MPI_Request started) {
    lock_L();
    reqs[handle] = reqs[started];
    reqs[handle].persistent = 1;
    reqs[handle].active = 1;
    reqs[started].used = 0;
    unlock_L();
}

int MPI_Wait(MPI_Request *handle, MPI_Status *status) {
    if (inactive_now(*handle, status)) return MPI_SUCCESS;
    counted_thread("MPI_Wait");
    ml_sync_stdout();
    request *r = request_of(handle, "MPI_Wait");
    lock_L();
    if (!r->done) {
        const char *call = calling ? calling : r->ctx % 4 != CTX_P2P && ml_collective ? ml_collective : "MPI_Wait";
        waiter w = {.kind = W_REQ, .what = r, .call = call};
        block_on(&w);
    }
    finish(handle, status);
    unlock_L();
    return MPI_SUCCESS;
}

int MPI_Waitall(int count, MPI_Request handles[], MPI_Status statuses[]) {
    CALLING("MPI_Waitall");
    for (int i = 0; i < count; i++) MPI_Wait(&handles[i], statuses ? &statuses[i] : MPI_STATUS_IGNORE);
    CALLED();
    return MPI_SUCCESS;
}

/* What a test of these requests asks for (under L): a loop testing a receive for another peer or
 * tag, in the same slot, polls for something else. */
static unsigned long asked(int count, const MPI_Request *handles) {
    unsigned long args = (unsigned long)count;
    for (int i = 0; i < count; i++)
        if (!inactive(handles[i])) {
            const request *r = &reqs[handles[i]];
            args = args * 1000003 + (unsigned long)(((r->recv * 131 + r->src) * 8191 + r->tag) * 524287 + r->ctx * 31 + r->dest);
        }
    return args;
}

int MPI_Test(MPI_Request *handle, int *flag, MPI_Status *status) {
    if (inactive_now(*handle, status)) {
        *flag = 1;
        return MPI_SUCCESS;
    }
    counted_thread("MPI_Test");
    ml_sync_stdout();
    request *r = request_of(handle, "MPI_Test");
    lock_L();
    *flag = r->done;
    if (r->done) finish(handle, status);
    else poll_args = asked(1, handle);
    unlock_L();
    if (!*flag) poll_point();
    return MPI_SUCCESS;
}


/* MPI_Test without its end: a request done stays, for the wait or test that ends it. */
int MPI_Request_get_status(MPI_Request handle, int *flag, MPI_Status *status) {
    if (inactive_now(handle, status)) {
        *flag = 1;
        return MPI_SUCCESS;
    }
    counted_thread("MPI_Request_get_status");
    ml_sync_stdout();
    request *r = request_of(&handle, "MPI_Request_get_status");
    lock_L();
    *flag = r->done;
    if (r->done && r->truncated) finish(&handle, status); /* MPI_ERR_TRUNCATE, as MPI_Test says it */
    if (r->done && status != MPI_STATUS_IGNORE) *status = r->status;
    unlock_L();
    if (!*flag) poll_point();
    return MPI_SUCCESS;
}

static void check_source(int source, int ctx, const char *call) { /* MPI_ERR_RANK, as a send's */
    int size = ml_size(ctx);
    if (source == MPI_ANY_SOURCE || source == MPI_PROC_NULL || (source >= 0 && source < size)) return;
    lock_L();
    fatal_error(MPI_ERR_RANK, "MPI_ERR_RANK: %s from rank %d (there are ranks 0 to %d)", call, source, size - 1);
}

static void check_tag(int tag, int receive) { /* MPI_ERR_TAG, fatal under MPI's default handler */
    if ((tag >= 0 && tag <= MPI_TAG_UB) || (receive && tag == MPI_ANY_TAG)) return;
    lock_L();
    fatal_error(MPI_ERR_TAG, "MPI_ERR_TAG: a %s with tag %d (a tag is 0 to %d%s)", receive ? "receive" : "send", tag,
                MPI_TAG_UB, receive ? ", or MPI_ANY_TAG" : "; MPI_ANY_TAG is for receives");
}

static void send_call(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                      const char *call, long sync) {
    int ctx = ml_comm(comm, call);
    check_tag(tag, 0);
    ml_sync_stdout();
    long bytes;
    unsigned char *packed = ml_pack(buf, count, type, &bytes, call);
    send_message(dest, tag, ctx, packed, bytes, call, sync);
    free(packed);
}

/* --sync-sends (MUTEXLAB_MPI_SYNC_SENDS=1 in the rank's environment): every standard send
 * (MPI_Send, MPI_Isend, MPI_Send_init) is synchronous, as MPI allows an implementation to make it
 * (Open MPI and MPICH do for a message past their eager limit): a program that relies on its
 * sends being buffered waits for ever, and the hang names the send. So are MPI_Rsend's and
 * MPI_Sendrecv's sends (a standard send's semantics, by MPI); MPI_Bsend stays buffered. */
int ml_sync_sends(void) {
    static int sync = -1;
    if (sync < 0) {
        const char *given = getenv("MUTEXLAB_MPI_SYNC_SENDS");
        sync = given && strcmp(given, "1") == 0;
    }
    return sync;
}

/* Without --sync-sends, a standard send of more than ML_EAGER bytes is synchronous all the same:
 * two ranks that MPI_Send to each other before receiving hang under Open MPI 4.1 from 4,041
 * bytes (4,040 end), under MPICH 4.0 from 8,256 (8,255 end): a PASS here would overstate. */
#define ML_EAGER 4040
static int sized_sync; /* a standard send was synchronous by its size: a hang says so */
int ml_sized_sync(void) { return sized_sync; }

static int standard_sync(int count, MPI_Datatype type, int dest) {
    if (ml_sync_sends()) return 1;
    if (dest == MPI_PROC_NULL || count <= 0 || ml_room(count, type) <= ML_EAGER) return 0;
    sized_sync = 1;
    return 1;
}

static int issend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req,
                  const char *call, int standard);

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    if (standard_sync(count, type, dest)) {
        MPI_Request r;
        issend(buf, count, type, dest, tag, comm, &r, "MPI_Send", 1);
        CALLING("MPI_Send");
        int rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        CALLED();
        return rc;
    }
    send_call(buf, count, type, dest, tag, comm, "MPI_Send", 0);
    return MPI_SUCCESS;
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req) {
    if (standard_sync(count, type, dest)) return issend(buf, count, type, dest, tag, comm, req, "MPI_Isend", 1);
    send_call(buf, count, type, dest, tag, comm, "MPI_Isend", 0); /* held by mutexlab: the buffer is free at once */
    lock_L();
    *req = new_request();
    reqs[*req].done = 1;
    unlock_L();
    return MPI_SUCCESS;
}

/* MPI_Rsend: MPI gives a ready send a standard send's semantics (its receive posted first is the
 * program's promise, not checked here): synchronous past ML_EAGER bytes or under --sync-sends, as
 * MPI_Send (before, it never waited, and a program whose large Rsend no receive took passed). */
int MPI_Rsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    if (standard_sync(count, type, dest)) {
        MPI_Request r;
        issend(buf, count, type, dest, tag, comm, &r, "MPI_Rsend", 1);
        CALLING("MPI_Rsend");
        int rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        CALLED();
        return rc;
    }
    send_call(buf, count, type, dest, tag, comm, "MPI_Rsend", 0);
    return MPI_SUCCESS;
}

int MPI_Irsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req) {
    if (standard_sync(count, type, dest)) return issend(buf, count, type, dest, tag, comm, req, "MPI_Irsend", 1);
    send_call(buf, count, type, dest, tag, comm, "MPI_Irsend", 0);
    lock_L();
    *req = new_request();
    reqs[*req].done = 1;
    unlock_L();
    return MPI_SUCCESS;
}

/* MPI_Issend: the request completes once a receive of the destination has matched the message,
 * which the destination's library acknowledges with a message of its own ("ssend ack"), ordered by
 * the director like any other: two ranks that Ssend to each other before receiving wait for ever,
 * as under any MPI. */
static long next_sync;

int MPI_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req) {
    return issend(buf, count, type, dest, tag, comm, req, "MPI_Issend", 0);
}

static int issend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req,
                  const char *call, int standard) {
    int ctx = ml_comm(comm, call);
    int to = dest >= 0 && dest < ml_size(ctx) ? ml_world(ctx, dest) : dest; /* else MPI_ERR_RANK, below */
    lock_L();
    *req = new_request();
    request *r = &reqs[*req];
    r->sync = ++next_sync;
    r->dest = to;
    r->tag = tag;
    r->ctx = ctx;
    r->standard = standard;
    r->done = dest == MPI_PROC_NULL; /* MPI: a send to no process completes at once */
    long sync = r->sync;
    unlock_L();
    send_call(buf, count, type, dest, tag, comm, call, sync);
    return MPI_SUCCESS;
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    MPI_Request r;
    MPI_Issend(buf, count, type, dest, tag, comm, &r);
    CALLING("MPI_Ssend");
    int rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    CALLED();
    return rc;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request *req) {
    int ctx = ml_comm(comm, "MPI_Irecv");
    check_source(source, ctx, "MPI_Irecv");
    check_tag(tag, 1);
    ml_sync_stdout();
    *req = post(buf, ml_room(count, type), type, source, tag, ctx, 1);
    return MPI_SUCCESS;
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status *status) {
    MPI_Request r;
    MPI_Irecv(buf, count, type, source, tag, comm, &r);
    CALLING("MPI_Recv");
    int rc = MPI_Wait(&r, status);
    CALLED();
    return rc;
}

/* MPI_Sendrecv and MPI_Sendrecv_replace: as MPI_Isend, MPI_Irecv and MPI_Waitall: the send is a
 * standard send — synchronous past ML_EAGER bytes or under --sync-sends, completed once a receive
 * has matched it — and the receive is posted before either is waited for, so a ring of them never
 * waits for itself (before, the send never waited, and a Sendrecv whose message no rank received
 * completed). For the latter the bytes are packed at once, so the buffer is free for the receive;
 * an error names the call the program made. */
static int sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status,
                    const char *call) {
    MPI_Request sent = MPI_REQUEST_NULL;
    if (standard_sync(sendcount, sendtype, dest))
        issend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &sent, call, 1);
    else
        send_call(sendbuf, sendcount, sendtype, dest, sendtag, comm, call, 0);
    int ctx = ml_comm(comm, call);
    check_source(source, ctx, call);
    check_tag(recvtag, 1);
    ml_sync_stdout();
    MPI_Request r = post(recvbuf, ml_room(recvcount, recvtype), recvtype, source, recvtag, ctx, 1);
    CALLING(call);
    int rc = MPI_Wait(&r, status);
    if (rc == MPI_SUCCESS && sent != MPI_REQUEST_NULL) rc = MPI_Wait(&sent, MPI_STATUS_IGNORE);
    CALLED();
    return rc;
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status) {
    return sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm,
                    status, "MPI_Sendrecv");
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag, int source, int recvtag,
                         MPI_Comm comm, MPI_Status *status) {
    return sendrecv(buf, count, type, dest, sendtag, buf, count, type, source, recvtag, comm, status,
                    "MPI_Sendrecv_replace");
}

int MPI_Get_version(int *version, int *subversion) {
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

int MPI_Request_free(MPI_Request *handle) { /* a persistent request not started: done, so freed at once */
    if (*handle == MPI_REQUEST_NULL) return MPI_SUCCESS;
    counted_thread("MPI_Request_free");
    request *r = request_of(handle, "MPI_Request_free");
    lock_L();
    if (r->done)
        r->used = 0;
    else
        r->freed = 1; /* a receive: it still takes its message, and nobody learns when */
    *handle = MPI_REQUEST_NULL;
    unlock_L();
    return MPI_SUCCESS;
}

/* The first active request of ``handles`` that is done, finished into ``status``: its index, else
 * MPI_UNDEFINED; ``*active`` whether any is active (under L). */
static int finish_first_done(int count, MPI_Request handles[], MPI_Status *status, int *active) {
    *active = 0;
    for (int i = 0; i < count; i++) {
        if (inactive(handles[i])) continue;
        *active = 1;
        if (reqs[handles[i]].done) {
            finish(&handles[i], status);
            return i;
        }
    }
    return MPI_UNDEFINED;
}

int MPI_Waitany(int count, MPI_Request handles[], int *index, MPI_Status *status) {
    counted_thread("MPI_Waitany");
    ml_sync_stdout();
    for (int i = 0; i < count; i++)
        if (handles[i] != MPI_REQUEST_NULL) request_of(&handles[i], "MPI_Waitany"); /* each active */
    for (;;) { /* a poll: with nothing new, the thread waits until something happens */
        int active;
        lock_L();
        *index = finish_first_done(count, handles, status, &active);
        unlock_L();
        if (*index != MPI_UNDEFINED || !active) return MPI_SUCCESS;
        CALLING("MPI_Waitany");
        poll_point();
        CALLED();
    }
}

int MPI_Testall(int count, MPI_Request handles[], int *flag, MPI_Status statuses[]) {
    counted_thread("MPI_Testall");
    ml_sync_stdout();
    for (int i = 0; i < count; i++)
        if (handles[i] != MPI_REQUEST_NULL) request_of(&handles[i], "MPI_Testall"); /* each active */
    lock_L();
    *flag = 1;
    for (int i = 0; i < count; i++)
        if (!inactive(handles[i]) && !reqs[handles[i]].done) *flag = 0;
    if (*flag)
        for (int i = 0; i < count; i++) {
            MPI_Status *st = statuses ? &statuses[i] : MPI_STATUS_IGNORE;
            if (!inactive(handles[i]))
                finish(&handles[i], st);
            else if (st != MPI_STATUS_IGNORE)
                *st = (MPI_Status){MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 0};
        }
    else
        poll_args = asked(count, handles);
    unlock_L();
    if (!*flag) poll_point();
    return MPI_SUCCESS;
}

/* MPI_Waitsome and MPI_Testsome: every active request that is done, finished in array order;
 * *outcount MPI_UNDEFINED when none is active. MPI_Waitsome polls, as MPI_Waitany does. */
static int finish_all_done(int count, MPI_Request handles[], int indices[], MPI_Status statuses[], int *active) {
    int n = 0;
    *active = 0;
    for (int i = 0; i < count; i++) {
        if (inactive(handles[i])) continue;
        *active = 1;
        if (reqs[handles[i]].done) {
            finish(&handles[i], statuses ? &statuses[n] : MPI_STATUS_IGNORE);
            indices[n++] = i;
        }
    }
    return *active ? n : MPI_UNDEFINED;
}

static int some(int count, MPI_Request handles[], int *outcount, int indices[], MPI_Status statuses[],
                const char *call, int wait) {
    counted_thread(call);
    ml_sync_stdout();
    for (int i = 0; i < count; i++)
        if (handles[i] != MPI_REQUEST_NULL) request_of(&handles[i], call); /* each active */
    for (;;) {
        int active;
        lock_L();
        *outcount = finish_all_done(count, handles, indices, statuses, &active);
        if (*outcount == 0 && !wait) poll_args = asked(count, handles);
        unlock_L();
        if (*outcount != 0) return MPI_SUCCESS;
        if (!wait) { /* MPI_Testsome: a poll of the program's own loop, which may end by a count */
            poll_point();
            return MPI_SUCCESS;
        }
        CALLING(call);
        poll_point();
        CALLED();
    }
}

int MPI_Waitsome(int incount, MPI_Request handles[], int *outcount, int indices[], MPI_Status statuses[]) {
    return some(incount, handles, outcount, indices, statuses, "MPI_Waitsome", 1);
}

int MPI_Testsome(int incount, MPI_Request handles[], int *outcount, int indices[], MPI_Status statuses[]) {
    return some(incount, handles, outcount, indices, statuses, "MPI_Testsome", 0);
}

/* MPI_Testany: the first finished request of the array, else flag 0 and a poll. */
int MPI_Testany(int count, MPI_Request handles[], int *index, int *flag, MPI_Status *status) {
    counted_thread("MPI_Testany");
    ml_sync_stdout();
    for (int i = 0; i < count; i++)
        if (handles[i] != MPI_REQUEST_NULL) request_of(&handles[i], "MPI_Testany"); /* each active */
    int active;
    lock_L();
    *index = finish_first_done(count, handles, status, &active);
    *flag = *index != MPI_UNDEFINED || !active; /* none active: MPI says flag true, index MPI_UNDEFINED */
    if (!*flag) poll_args = asked(count, handles);
    unlock_L();
    if (!*flag) poll_point();
    return MPI_SUCCESS;
}

/* A cancelled synchronous send of rank ``src``: the destination's library takes the message back
 * if no receive has matched it yet (from the unexpected queue, or, not yet come, once it comes)
 * and tells the sender, whose request completes cancelled; a message a receive matched was
 * acknowledged already, and the send completes as sent (under L). */
#define CANCELS 256
static struct { int src; long sync; } cancels[CANCELS];
static int n_cancels;

static void cancelled_to(int src, long sync) {
    if (src == rank_) {
        acked(sync, 1);
        return;
    }
    char line[160];
    int k = snprintf(line, sizeof line,
                     "{\"type\":\"send\",\"to\":%d,\"body\":{\"type\":\"ssend cancelled\",\"cancelled\":%ld}}\n",
                     src + first_, sync);
    drain();
    put(line, (size_t)k);
}

static int take_back(int src, long sync, int later) { /* later: it may yet come (another rank's) */
    for (msg **p = &unexpected; *p; p = &(*p)->next)
        if ((*p)->src == src && (*p)->sync == sync) {
            msg *m = *p;
            *p = m->next;
            free(m->data);
            free(m);
            cancelled_to(src, sync);
            bump();
            return 1;
        }
    if (!later) return 0; /* a receive matched it: the send completes as sent */
    if (n_cancels == CANCELS) memmove(cancels, cancels + 1, sizeof cancels[0] * --n_cancels); /* the oldest: matched */
    cancels[n_cancels].src = src; /* matched already (its ack went), or yet to come (dropped then) */
    cancels[n_cancels++].sync = sync;
    bump();
    return 0;
}

static int dropped(msg *m) {
    for (int i = 0; i < n_cancels; i++)
        if (cancels[i].src == m->src && cancels[i].sync == m->sync) {
            cancels[i] = cancels[--n_cancels];
            cancelled_to(m->src, m->sync);
            free(m->data);
            free(m);
            bump();
            return 1;
        }
    return 0;
}

/* MPI_Cancel: a receive no message has matched yet is taken back (its wait ends, the status says
 * cancelled); a synchronous send no receive has matched yet is taken back by its destination's
 * library (take_back: its wait ends once that answer comes, cancelled, or the ack of a receive
 * that matched it first, not cancelled); a standard send has already completed, so cancelling it
 * does nothing, as MPI allows. */
int MPI_Cancel(MPI_Request *handle) {
    if (inactive_now(*handle, MPI_STATUS_IGNORE)) return MPI_SUCCESS;
    counted_thread("MPI_Cancel");
    request *r = request_of(handle, "MPI_Cancel");
    lock_L();
    if (r->recv && !r->done) {
        r->status = (MPI_Status){MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 1};
        r->done = 1;
        if (r->freed) r->used = 0;
        for (waiter *w = waiters; w; w = w->next)
            if (w->kind == W_REQ && w->what == r) unblock(w);
        bump();
    } else if (r->sync && !r->done && !r->cancelling) { /* a synchronous send no receive matched yet */
        r->cancelling = 1;
        if (r->dest == rank_) {
            take_back(rank_, r->sync, 0); /* to itself: in the unexpected queue, or received */
        } else {
            char line[160];
            int k = snprintf(line, sizeof line,
                             "{\"type\":\"send\",\"to\":%d,\"body\":{\"type\":\"ssend cancel\",\"cancel\":%ld}}\n",
                             r->dest + first_, r->sync);
            drain();
            put(line, (size_t)k);
            bump();
        }
    }
    unlock_L();
    return MPI_SUCCESS;
}

int MPI_Test_cancelled(const MPI_Status *status, int *flag) {
    *flag = status->mutexlab_cancelled;
    return MPI_SUCCESS;
}

/* MPI_Bsend: a send never blocks here, as a buffered send never does; MPI requires an attached
 * buffer the message fits in (with MPI_BSEND_OVERHEAD), and a program without one is stopped. */
static long bsend_size = -1;
static void *bsend_buffer;

int MPI_Buffer_attach(void *buffer, int size) {
    ml_error_on(0); /* its errors: MPI_COMM_WORLD's handler */
    lock_L();
    if (bsend_size >= 0)
        fatal_error(MPI_ERR_BUFFER, "MPI_ERR_BUFFER: MPI_Buffer_attach while a buffer is attached (MPI allows one "
                    "at a time)");
    bsend_size = size;
    bsend_buffer = buffer;
    unlock_L();
    return MPI_SUCCESS;
}

int MPI_Buffer_detach(void *buffer_addr, int *size) {
    lock_L();
    if (bsend_size < 0) fatal("MPI_Buffer_detach with no buffer attached");
    *(void **)buffer_addr = bsend_buffer;
    *size = (int)bsend_size;
    bsend_size = -1;
    unlock_L();
    return MPI_SUCCESS;
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    long bytes = ml_room(count, type);
    ml_comm(comm, "MPI_Bsend"); /* a buffer's error is the communicator's: its handler */
    lock_L();
    if (bsend_size < 0)
        fatal_error(MPI_ERR_BUFFER, "MPI_ERR_BUFFER: MPI_Bsend with no buffer attached (MPI_Buffer_attach first)");
    if (bytes + MPI_BSEND_OVERHEAD > bsend_size)
        fatal_error(MPI_ERR_BUFFER, "MPI_ERR_BUFFER: MPI_Bsend of %ld bytes: the attached buffer holds %ld (with "
                    "MPI_BSEND_OVERHEAD %d a message)",
              bytes, bsend_size, MPI_BSEND_OVERHEAD);
    unlock_L();
    send_call(buf, count, type, dest, tag, comm, "MPI_Bsend", 0); /* buffered: never synchronous */
    return MPI_SUCCESS;
}

static msg *find_unexpected(int src, int tag, int ctx) {
    for (msg *m = unexpected; m; m = m->next)
        if (matches(src, tag, ctx, m)) return m;
    return NULL;
}

static void probe_status(msg *m, MPI_Status *status) {
    if (status == MPI_STATUS_IGNORE) return;
    status->MPI_SOURCE = ml_local_held(m->ctx, m->src);
    status->MPI_TAG = m->tag;
    status->MPI_ERROR = MPI_SUCCESS;
    status->mutexlab_bytes = m->bytes;
}

static int probe_nobody(int source, MPI_Status *status) { /* MPI: a probe of no process finds at once */
    if (source != MPI_PROC_NULL) return 0;
    if (status != MPI_STATUS_IGNORE) *status = (MPI_Status){MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0, 0};
    return 1;
}

/* Matched probes (MPI-3): the message probed leaves the queue, so no other receive or probe of
 * another thread can take it; MPI_Mrecv or MPI_Imrecv of its handle receives it. */
#define MESSAGES 1024
static msg *matched[MESSAGES]; /* by handle; [0] is MPI_MESSAGE_NULL */

static void take_matched(msg *m, MPI_Message *message) { /* under L */
    for (msg **p = &unexpected; *p; p = &(*p)->next)
        if (*p == m) {
            *p = m->next;
            break;
        }
    for (int i = 1; i < MESSAGES; i++)
        if (!matched[i]) {
            matched[i] = m;
            *message = i;
            return;
        }
    fatal("more than %d matched messages (MPI_Mprobe, MPI_Improbe) not yet received", MESSAGES - 1);
}

/* A probe of ``comm`` (``block``: until a message matches): 1 when one matched, its status given;
 * with ``message`` (a matched probe) that message leaves the queue under its handle. */
static int probe(int source, int tag, MPI_Comm comm, int block, MPI_Status *status, MPI_Message *message,
                 const char *call) {
    int ctx = ml_comm(comm, call);
    if (probe_nobody(source, status)) {
        if (message) *message = MPI_MESSAGE_NO_PROC;
        return 1;
    }
    check_source(source, ctx, call);
    source = ml_world(ctx, source);
    ml_sync_stdout();
    lock_L();
    msg *m;
    while ((m = find_unexpected(source, tag, ctx)) == NULL && block) {
        waiter w = {.kind = W_PROBE, .src = source, .tag = tag, .ctx = ctx, .call = call};
        block_on(&w);
    }
    if (m) {
        probe_status(m, status);
        if (message) take_matched(m, message);
    }
    if (!m) poll_args = ((unsigned long)(unsigned)source * 131 + (unsigned)tag) * 524287 + (unsigned)ctx;
    unlock_L();
    if (!m) poll_point();
    return m != NULL;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status) {
    probe(source, tag, comm, 1, status, NULL, "MPI_Probe");
    return MPI_SUCCESS;
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status) {
    *flag = probe(source, tag, comm, 0, status, NULL, "MPI_Iprobe");
    return MPI_SUCCESS;
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status) {
    probe(source, tag, comm, 1, status, message, "MPI_Mprobe");
    return MPI_SUCCESS;
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status) {
    *flag = probe(source, tag, comm, 0, status, message, "MPI_Improbe");
    return MPI_SUCCESS;
}

/* A receive of a matched message: done at once (a synchronous send's sender is told now). */
static MPI_Request receive_matched(void *buf, int count, MPI_Datatype type, MPI_Message *message, const char *call) {
    long capacity = ml_room(count, type);
    ml_sync_stdout();
    lock_L();
    int h = *message;
    if (h == MPI_MESSAGE_NO_PROC) { /* MPI: from MPI_PROC_NULL, empty */
        int i = new_request();
        reqs[i].recv = 1;
        reqs[i].status = (MPI_Status){MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0, 0};
        reqs[i].done = 1;
        *message = MPI_MESSAGE_NULL;
        unlock_L();
        return i;
    }
    if (h <= 0 || h >= MESSAGES || !matched[h]) {
        ml_error_on(0); /* no message, so no communicator: MPI_COMM_WORLD's handler */
        fatal_error(MPI_ERR_REQUEST, "MPI_ERR_REQUEST: %s of a message no MPI_Mprobe or MPI_Improbe of this rank "
                    "matched (%d), or one received already", call, h);
    }
    msg *m = matched[h];
    matched[h] = NULL;
    int i = new_request();
    request *r = &reqs[i];
    r->recv = 1;
    r->buf = buf;
    r->capacity = capacity;
    r->type = type;
    r->src = m->src;
    r->tag = m->tag;
    r->ctx = m->ctx;
    complete(r, m);
    *message = MPI_MESSAGE_NULL;
    bump();
    unlock_L();
    return i;
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status) {
    MPI_Request r = receive_matched(buf, count, type, message, "MPI_Mrecv");
    return MPI_Wait(&r, status);
}

int MPI_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Request *request) {
    *request = receive_matched(buf, count, type, message, "MPI_Imrecv");
    return MPI_SUCCESS;
}

int MPI_Get_count(const MPI_Status *status, MPI_Datatype type, int *count) {
    long extent = ml_room(1, type);
    *count = extent ? (int)(status->mutexlab_bytes / extent) : 0;
    if (extent && status->mutexlab_bytes % extent) *count = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int MPI_Barrier(MPI_Comm comm) { /* every rank tells rank 0, which answers all when all have come */
    int ctx = ml_comm(comm, "MPI_Barrier");
    ml_collective = "MPI_Barrier";
    ml_sync_stdout();
    char none = 0;
    MPI_Request r;
    int me = ml_rank(ctx), size = ml_size(ctx);
    if (me == 0) {
        for (int i = 1; i < size; i++) {
            r = ml_post_recv(&none, 0, MPI_ANY_SOURCE, 0, ctx + CTX_BARRIER_IN);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        for (int i = 1; i < size; i++) ml_send(i, 0, ctx + CTX_BARRIER_OUT, &none, 0, "MPI_Barrier");
    } else {
        ml_send(0, 0, ctx + CTX_BARRIER_IN, &none, 0, "MPI_Barrier");
        r = ml_post_recv(&none, 0, 0, 0, ctx + CTX_BARRIER_OUT);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    return MPI_SUCCESS;
}

/* -- the rank's life ------------------------------------------------------------------- */
static pid_t rank_pid; /* the rank's process (a forked child's exit is the child's own) */

/* main returned, exit was called (``flush``) or _exit (no stdio buffer written, as under any MPI) */
static void ended(int status, int flush) {
    if (getpid() != rank_pid) return; /* a forked child ends as it would anywhere */
    if (flush) {
        ml_sync_stdout();
        fflush(NULL);
    }
    lock_L();
    if (status != 0) { /* a failure: the director sees the rank end with it (a crash finding) */
        drain_all();
        end_now(status);
    }
    drain_all(); /* under mpirun the program's last words appear at its exit, newline or not */
    /* done: the rank stays, quiet, until the run ends and it is killed */
    waiter w = {.kind = W_FOREVER};
    block_on(&w);
    for (;;) real_cond_wait(&wake, &L);
}

static void at_end(int status, void *unused) {
    (void)unused;
    ended(status, 1);
}

/* A program may end by _exit or _Exit (after MPI_Finalize, past a detached thread still in a
 * call): no on_exit handler runs, so the rank ended there — a crash to the director, where exit(0)
 * leaves it quiet until the run ends. Both now end as exit does (its stdio buffers unwritten, as
 * _exit leaves them), in the rank's own process only (a forked child's _exit ends the child). */
void _exit(int status) {
    if (initialized && !in_L) ended(status, 0); /* not from a handler that interrupted the library */
    end_now(status);
}

void _Exit(int status) { _exit(status); }

static int init(void) {
    (void)ml_call_site(); /* backtrace's first call loads the unwinder (a dlopen): not under L */
    lock_L();
    if (initialized) {
        ml_error_on(0);
        fatal_error(MPI_ERR_OTHER, "MPI_ERR_OTHER: MPI_Init called twice");
    }
    while (rank_ < 0) {
        waiter w = {.kind = W_INIT};
        block_on(&w);
    }
    initialized = 1;
    rank_pid = getpid();
    bump();
    unlock_L();
    on_exit(at_end, NULL);
    return MPI_SUCCESS;
}

int MPI_Init(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    return init();
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    (void)argc;
    (void)argv;
    (void)required;
    *provided = MPI_THREAD_MULTIPLE;
    return init();
}

int MPI_Initialized(int *flag) {
    *flag = initialized;
    return MPI_SUCCESS;
}

int MPI_Finalized(int *flag) {
    *flag = finalized;
    return MPI_SUCCESS;
}

int MPI_Query_thread(int *provided) {
    *provided = MPI_THREAD_MULTIPLE;
    return MPI_SUCCESS;
}

static int mpi_wait(const waiter *w);

/* MPI calls a program erroneous whose other thread is still in an MPI call when MPI_Finalize is
 * called (MPICH ends it with a fatal error; Open MPI lets it pass): the first such thread is told
 * to the director ({"type":"log","finalize_pending":...}), whose PASS then says so (under L). */
static void finalize_pending(void) {
    for (waiter *w = waiters; w; w = w->next) {
        if (w->who == self || w->woken || !(w->kind == W_REQ || w->kind == W_PROBE || mpi_wait(w))) continue;
        request *r = w->kind == W_REQ ? w->what : NULL;
        int kind = r ? (r->recv ? ML_WAIT_RECV : r->standard ? ML_WAIT_STD_SEND : ML_WAIT_SEND)
                     : w->kind == W_PROBE ? ML_WAIT_PROBE : ML_WAIT_OTHER;
        char what[200], line[400];
        ml_wait_what(what, sizeof what, kind, w->call, r ? (r->recv ? r->src : r->dest) : w->src,
                     r ? r->tag : w->tag, r ? r->ctx : w->ctx);
        int k = snprintf(line, sizeof line,
                         "{\"type\":\"log\",\"finalize_pending\":\"rank %d called MPI_Finalize while its thread %d "
                         "was still in %s\"}\n",
                         rank_, w->who, what);
        if (k > 0 && (size_t)k < sizeof line) put(line, (size_t)k);
        return;
    }
    /* No thread in a call, but a request left active (an MPI_Irecv never waited for, a synchronous
     * send never received): erroneous too, MPI says every request completes first (Open MPI 4.1
     * and MPICH 4.0 end such a program; before, nothing said so). */
    for (int i = 1; i < REQUESTS; i++) {
        request *r = &reqs[i];
        if (!r->used || r->done || (r->persistent && !r->active) || !(r->recv || r->sync)) continue;
        char what[200], line[400];
        ml_wait_what(what, sizeof what, r->recv ? ML_WAIT_RECV : r->standard ? ML_WAIT_STD_SEND : ML_WAIT_SEND,
                     r->recv ? "a receive" : "a send", r->recv ? r->src : r->dest, r->tag, r->ctx);
        int k = snprintf(line, sizeof line,
                         "{\"type\":\"log\",\"finalize_pending\":\"rank %d called MPI_Finalize with a request "
                         "still pending: %s%s\"}\n",
                         rank_, what, r->recv ? ", never completed" : "");
        if (k > 0 && (size_t)k < sizeof line) put(line, (size_t)k);
        return;
    }
}

int MPI_Finalize(void) {
    ml_sync_stdout();
    lock_L();
    if (!finalized) finalize_pending();
    finalized = 1;
    bump();
    unlock_L();
    return MPI_SUCCESS;
}

int MPI_Abort(MPI_Comm comm, int code) {
    (void)comm;
    ml_sync_stdout();
    fflush(NULL);
    lock_L();
    drain_all();
    char line[160];
    int k = snprintf(line, sizeof line, "{\"type\":\"log\",\"mpi_abort\":%d,\"last_words\":\"MPI_Abort with errorcode %d\"}\n",
                     code, code);
    put(line, (size_t)k);
    end_now(code & 0xff ? code & 0xff : 1);
}

int MPI_Get_processor_name(char *name, int *len) {
    *len = snprintf(name, MPI_MAX_PROCESSOR_NAME, "mutexlab-rank-%d", rank_);
    return MPI_SUCCESS;
}

double MPI_Wtime(void) {
    lock_L();
    read_clock = 1;
    clock_ns += 1000;
    double now = clock_ns / 1e9;
    unlock_L();
    return now;
}

double MPI_Wtick(void) { return 1e-6; }

long long ml_clock_read(void) { /* clocks.c: the machine's clock read, as MPI_Wtime is (without L) */
    if (self < 0) return 0; /* a thread not counted sleeps for real: the real clock */
    read_clock = 1;
    return __atomic_load_n(&clock_ns, __ATOMIC_RELAXED);
}

static void slept(long long ns) {
    lock_L();
    if (ns > 0) clock_ns += ns;
    unlock_L();
}

/* sleeps.c: a sleep of ``ns`` by a thread the library counts (1), or 0: the caller sleeps for real. */
int ml_sleep(long long ns) {
    if (self < 0) return 0;
    slept(ns);
    ml_sync_stdout();
    sleep_point();
    return 1;
}

int ml_counted(void) { return self >= 0; }
void ml_clock_on(long long ns) { slept(ns); }

/* report.c: a line of mutexlab.h's (an entry, an exit, a state, an event), in order with the rest. */
void ml_say(const char *line) {
    fflush(stdout);
    lock_L();
    drain();
    put(line, strlen(line));
    bump();
    unlock_L();
}

/* rma.c: a line to the director, with the library's lock held (a read held: the verdict says so). */
void ml_put_line(const char *line) { put(line, strlen(line)); }

void ml_json_string(char *dst, size_t cap, const char *src) { json_string(dst, cap, src, strlen(src)); }

static long json_long(const char *line, const char *key, long otherwise) {
    const char *p = strstr(line, key);
    return p ? strtol(p + strlen(key), NULL, 10) : otherwise;
}

/* Rank r is node first_ + r: the nodes are ids first_.. (1.. for most problems; 0.. where the
 * problem has a role beside its N processes, node 0, the problem's coordinator), so the lowest id of the
 * node and its peers is rank 0 and the world's size is the peers and the node itself. */
static void ids(const char *line) {
    long id = json_long(line, "{\"id\":", 1), lowest = id;
    int n = 1;
    const char *p = strstr(line, "\"peers\":[");
    if (p) {
        p += strlen("\"peers\":[");
        while (*p && *p != ']') {
            char *end;
            long peer = strtol(p, &end, 10);
            if (end == p) break;
            if (peer < lowest) lowest = peer;
            n++;
            p = *end == ',' ? end + 1 : end;
        }
    }
    first_ = (int)lowest;
    rank_ = (int)(id - lowest);
    size_ = n;
}

/* A poll that is one blocking MPI call (MPI_Waitany, MPI_Waitsome … poll inside): it never returns
 * with nothing new, where a program's own loop of polls or timed waits may end by a count. */
static int mpi_wait(const waiter *w) { return w->kind == W_POLL && w->call && strncmp(w->call, "MPI_", 4) == 0; }

/* Whether thread ``i`` is held for ever at rest: ended, or waiting in a blocking receive, probe or
 * MPI wait (under L). One that polls, sleeps or waits on a lock may still move under MPI's own
 * timing where mutexlab's model of its waits holds it back. */
static int held(int i) {
    if (thread_state[i] == T_GONE) return 1;
    for (waiter *w = waiters; w; w = w->next)
        if (w->who == i && !w->woken && (w->kind == W_REQ || w->kind == W_PROBE || mpi_wait(w))) return 1;
    return 0;
}

/* Whether a thread of the rank waits in a poll (MPI_Test, MPI_Iprobe, a sleep, MPI_Waitany …): one
 * that may find several messages at once, so the director may land them (under L). */
static int polls(void) {
    for (waiter *w = waiters; w; w = w->next)
        if (w->kind == W_POLL && !w->woken) return 1;
    return 0;
}

static int with(char *line, int k, size_t size, const char *add) { /* {...}\n → {...,add}\n */
    size_t n = strlen(add);
    if (k < 2 || (size_t)k + n + 2 >= size) return k;
    memcpy(line + k - 2, add, n);
    memcpy(line + k - 2 + n, "}\n", 3);
    return k - 2 + (int)n + 2;
}

/* A thread waiting in its own loop of polls, sleeps or timed waits with nothing new, which the
 * director's linger lets go round (under L): not one stopped running (a stretch's), a poll inside
 * one MPI call, nor an RMA read held until its bytes change (rma.c: no linger changes them). */
static int in_own_loop(const waiter *w) { return w->kind == W_POLL && w->loop && !w->woken && !mpi_wait(w); }

static int lingers(void) {
    for (waiter *w = waiters; w; w = w->next)
        if (in_own_loop(w)) return 1;
    return 0;
}

/* Where the rank's threads wait in loops of their own: a digest of each one's number and place,
 * whatever the order of the waiters (under L). A linger after which it is the same, and in which
 * the rank said nothing, changed nothing the program can act on (docs/mpi.md#linger). */
static unsigned long loops_digest(void) {
    unsigned long digest = (unsigned long)made * 0xC2B2AE3D27D4EB4FUL;
    for (waiter *w = waiters; w; w = w->next)
        if (in_own_loop(w)) digest += (w->site ^ (unsigned long)w->who) * 0x9E3779B97F4A7C15UL;
    return digest;
}

static int spinning(void) { /* the lowest-numbered thread stopped running, not woken since, or -1 */
    int t = -1;
    for (waiter *w = waiters; w; w = w->next)
        if (w->kind == W_POLL && w->spinner && !w->woken && (t < 0 || w->who < t)) t = w->who;
    return t;
}

/* The done line (under L): with what the main thread waits in while it has not ended (neither
 * returned, exited nor reached MPI_Finalize), which is a hang when the run is at rest (hangs.c). */
static void done_line(void) {
    char line[400];
    int k = 0, astir = 0;
    for (int i = 1; i < n_threads; i++) astir |= !held(i); /* a hang only of a rank whose others are held */
    for (waiter *w = waiters; w && !finalized && !astir; w = w->next) {
        if (w->who != 0 || w->woken || w->kind == W_FOREVER || w->kind == W_INIT || w->kind == W_PAUSE) continue;
        if (w->kind == W_POLL && !mpi_wait(w)) { /* its own loop of polls, sleeps or timed waits: perhaps bounded */
            astir = 1;
            break;
        }
        request *r = w->kind == W_REQ ? w->what : NULL;
        int kind = r ? (r->recv ? ML_WAIT_RECV : r->standard ? ML_WAIT_STD_SEND : ML_WAIT_SEND)
                     : w->kind == W_PROBE ? ML_WAIT_PROBE : ML_WAIT_OTHER;
        int ctx = r ? r->ctx : w->ctx;
        k = ml_waits_in(line, sizeof line, kind, w->call, r ? (r->recv ? r->src : r->dest) : w->src, r ? r->tag : w->tag, ctx);
        break;
    }
    /* astir: this rank may still move under MPI's timing, so no rank of the run is claimed hung
     * (a peer waiting for it may be served when its loop ends) */
    if (k <= 0) k = snprintf(line, sizeof line, "{\"type\":\"done\"%s}\n", astir && !finalized ? ",\"astir\":true" : "");
    if (polls()) k = with(line, k, sizeof line, ",\"polls\":true");
    int t = spinning();
    char spun[80];
    snprintf(spun, sizeof spun, ",\"spinning\":\"rank %d's thread %d\"", rank_, t);
    if (t >= 0 && !finalized) k = with(line, k, sizeof line, spun); /* at rest, the director may give it a stretch */
    char loops[64];
    snprintf(loops, sizeof loops, ",\"lingers\":true,\"loops\":\"%016lx\"", loops_digest());
    if (!finalized && lingers()) k = with(line, k, sizeof line, loops); /* a linger may be given */
    put(line, (size_t)k);
}

/* Messages that landed (a recv line with "land":true: the director's `land` step) while the rank's
 * threads poll: they arrive, in order, just before its next other input, so a poll then finds them
 * all at once, as a real MPI's messages may come in between two polls. No thread runs meanwhile. */
static msg *landed, **landed_end = &landed;

static void arrive_landed(void) { /* under L */
    while (landed) {
        msg *m = landed;
        landed = m->next;
        m->next = NULL;
        arrive(m);
    }
    landed_end = &landed;
}

/* A thread that keeps the rank busy past UNSEEN_AFTER s of a step: the running thread's wait the
 * library cannot see, in words, told to the director once a step (the director forgets them at
 * each done), which a stalled finding then gives (under L). Before, once a run: a step slow for a
 * while told it, and a later step that stalled said nothing, the finding guessing at a buffer. */
#define UNSEEN_AFTER 1
static const char *unseen_call[THREADS]; /* what each thread said it waits in (omp.c, sems.c) */
static int unseen_told;

void ml_unseen(const char *what) {
    if (self >= 0) __atomic_store_n(&unseen_call[self], what, __ATOMIC_RELAXED);
}

static void tell_unseen(void) {
    int t = baton >= 0 && baton < n_threads && thread_state[baton] == T_RUN ? baton : pick();
    if (unseen_told || t < 0) return;
    unseen_told = 1;
    char what[600], said[700], line[900];
    ml_unseen_words(what, sizeof what, tids[t], __atomic_load_n(&unseen_call[t], __ATOMIC_RELAXED));
    snprintf(said, sizeof said, "rank %d's thread %d %s", rank_, t, what);
    int k = snprintf(line, sizeof line, "{\"type\":\"log\",\"unseen_wait\":");
    json_string(line + k, sizeof line - (size_t)k - 4, said, strlen(said));
    k += (int)strlen(line + k);
    k += snprintf(line + k, sizeof line - (size_t)k, "}\n");
    put(line, (size_t)k);
}

static void *director(void *unused) { /* one input line at a time; done once the rank is quiet */
    (void)unused;
    int stretching = 0;
    static char line[LINE_MAX_];
    while (fgets(line, sizeof line, in)) {
        lock_L();
        clock_ns += 1000000;
        int land = strstr(line, "\"type\":\"recv\"") && strstr(line, "\"land\":true") && !strstr(line, "\"ack\":") &&
                   !strstr(line, "\"cancel") && !strstr(line, "\"rma\":");
        if (!land) arrive_landed();
        linger_left = 0;
        if (strstr(line, "\"type\":\"init\"")) {
            if (rank_ >= 0) fatal("a second init: a rank starts once per run");
            ids(line);
            for (waiter *w = waiters; w; w = w->next)
                if (w->kind == W_INIT) unblock(w);
            bump();
        } else if (strstr(line, "\"type\":\"wake\"")) {
            wake_paused();
        } else if (strstr(line, "\"type\":\"stretch\"")) {
            stretching = 1; /* the run is at rest: its stopped threads run alone, up to stretch_ns each */
            long long ns = json_long(line, "\"ns\":", 0);
            if (ns <= 0) fatal("a stretch line without its \"ns\" (the director's processor time for it)");
            for (waiter *w = waiters; w; w = w->next)
                if (w->kind == W_POLL && w->spinner && !w->woken) {
                    ml_busy_stretch(w->who, gen, ns);
                    unblock(w);
                }
            real_cond_broadcast(&wake);
        } else if (strstr(line, "\"type\":\"linger\"")) {
            linger_left = json_long(line, "\"polls\":", 0); /* at rest: its own loops go round */
            if (linger_left <= 0) fatal("a linger line without its \"polls\" (the director's count for it)");
            for (waiter *w = waiters; w; w = w->next)
                if (in_own_loop(w)) {
                    w->lingered = 1;
                    unblock(w);
                }
            real_cond_broadcast(&wake);
        } else if (strstr(line, "\"type\":\"recv\"") && strstr(line, "\"rma\":")) {
            ml_rma_arrive(line, (int)json_long(line, "\"from\":", 0) - first_); /* one-sided: rma.c */
        } else if (strstr(line, "\"type\":\"recv\"") && strstr(line, "\"ack\":")) {
            acked(json_long(line, "\"ack\":", 0), 0); /* a receive of another rank matched our synchronous send */
        } else if (strstr(line, "\"type\":\"recv\"") && strstr(line, "\"cancelled\":")) {
            acked(json_long(line, "\"cancelled\":", 0), 1); /* our synchronous send was taken back */
        } else if (strstr(line, "\"type\":\"recv\"") && strstr(line, "\"cancel\":")) {
            take_back((int)json_long(line, "\"from\":", 0) - first_, json_long(line, "\"cancel\":", 0), 1);
        } else if (strstr(line, "\"type\":\"recv\"")) {
            msg *m = calloc(1, sizeof *m);
            const char *data = strstr(line, "\"data\":\"");
            if (!m || !data) fatal("a recv line mutexlab's MPI cannot read");
            m->src = (int)json_long(line, "\"from\":", 0) - first_;
            m->tag = (int)json_long(line, "\"tag\":", 0);
            m->ctx = (int)json_long(line, "\"ctx\":", 0);
            m->sync = json_long(line, "\"sync\":", 0);
            if (m->ctx % 4 == CTX_BARRIER_OUT) m->src = ml_world_held(m->ctx, 0);
            data += 8;
            const char *end = strchr(data, '"');
            m->bytes = end ? (end - data) / 2 : 0;
            m->data = malloc((size_t)m->bytes + 1);
            for (long i = 0; i < m->bytes; i++) sscanf(data + 2 * i, "%2hhx", &m->data[i]);
            if (land) {
                *landed_end = m;
                landed_end = &m->next;
                done_line(); /* nothing ran: the rank is as its last done said */
                unlock_L();
                continue;
            }
            arrive(m);
        } else {
            fatal("an input mutexlab's MPI does not take: %.60s", line);
        }
        struct timespec began;
        ml_real_clock_gettime(CLOCK_MONOTONIC, &began);
        ml_busy_watch watch = {began, gen, stretching ? -2 : baton, 0}; /* a stretch counts from its start */
        stretching = 0;
        unseen_told = 0;
        for (int wakes = 0;; wakes++) {
            while (blocked < live) {
                struct timespec t;
                if (baton >= 0 && baton < n_threads && thread_state[baton] == T_RUN && initialized)
                    ml_busy_check(&watch, baton, tids[baton], gen);
                ml_real_clock_gettime(CLOCK_MONOTONIC, &t);
                if (t.tv_sec - began.tv_sec > UNSEEN_AFTER) tell_unseen();
                ml_real_clock_gettime(CLOCK_REALTIME, &t); /* the real clock: a real wait of 2 ms */
                t.tv_nsec += 2000000;
                if (t.tv_nsec >= 1000000000) {
                    t.tv_sec++;
                    t.tv_nsec -= 1000000000;
                }
                pthread_cond_timedwait(&quiet, &L, &t);
                drain();
            }
            if (wakes >= SLEEP_WAKES || !wake_a_sleeper()) break;
        }
        ml_rma_settle(); /* reads held until the memory they read changed: answered if it did */
        drain();
        done_line();
        unlock_L();
    }
    end_now(0);
}

__attribute__((constructor)) static void start(void) {
    resolve();
    self = 0; /* main: it holds the baton first (baton = 0, thread_state[0] = T_RUN) */
    tids[0] = getpid();
    ml_types_init();
    /* the program's standard input: /dev/null, or for rank 0 the file of --stdin (the adapter
     * names it, knowing the rank from init), as mpirun gives rank 0 its own */
    const char *given = getenv("MUTEXLAB_MPI_STDIN");
    int fd_in = dup(0), null = open(given && *given ? given : "/dev/null", O_RDONLY), p[2];
    out_fd = dup(1);
    if (fd_in < 0 || out_fd < 0 || null < 0 || pipe(p) < 0) {
        perror("mutexlab MPI");
        end_now(70);
    }
    if (isatty(fd_in)) {
        fprintf(stderr, "this program was built with mutexlab mpicc: run it with `mutexlab test PROBLEM --mpi --np N "
                        "PROGRAM` (docs/mpi.md)\n");
        end_now(2);
    }
    dup2(null, 0);
    close(null);
    dup2(p[1], 1);
    close(p[1]);
    stdout_r = p[0];
    fcntl(stdout_r, F_SETFL, O_NONBLOCK);
    fcntl(stdout_r, F_SETFD, FD_CLOEXEC);
    fcntl(out_fd, F_SETFD, FD_CLOEXEC);
    fcntl(fd_in, F_SETFD, FD_CLOEXEC);
    setvbuf(stdout, NULL, _IOLBF, 0);
    in = fdopen(fd_in, "r");
    ml_busy_install();
    pthread_t t;
    if (real_create(&t, NULL, director, NULL) != 0) {
        perror("mutexlab MPI");
        end_now(70);
    }
}

/* -- the program's threads, counted ---------------------------------------------------- */
typedef struct {
    void *(*fn)(void *);
    void *arg;
    int number;
} start_box;

static void thread_gone(void) {
    lock_L();
    live--;
    thread_state[self] = T_GONE;
    if (n_exited < EXITED) exited[n_exited++] = pthread_self();
    for (waiter *w = waiters; w; w = w->next)
        if (w->kind == W_JOIN && pthread_equal(w->thread, pthread_self())) unblock(w);
    bump();
    real_cond_signal(&quiet);
    release();
    self = -1;
    unlock_L();
}

static void *trampoline(void *box_) {
    start_box box = *(start_box *)box_;
    free(box_);
    self = box.number;
    tids[self] = (pid_t)syscall(SYS_gettid);
    lock_L();
    acquire();
    unlock_L();
    void *result = box.fn(box.arg);
    ml_sync_stdout();
    thread_gone();
    return result;
}

int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg) {
    resolve();
    start_box *box = malloc(sizeof *box);
    if (!box) return EAGAIN;
    *box = (start_box){fn, arg, 0};
    lock_L();
    if (n_threads == THREADS) fatal("more than %d threads in a rank", THREADS - 1);
    box->number = n_threads++;
    thread_state[box->number] = T_RUN;
    live++;
    bump();
    unlock_L();
    int rc = real_create(t, attr, trampoline, box);
    if (rc != 0) {
        lock_L();
        thread_state[box->number] = T_GONE;
        live--;
        unlock_L();
        free(box);
    }
    return rc;
}

void pthread_exit(void *value) {
    resolve();
    ml_sync_stdout();
    thread_gone();
    real_exit(value);
}

int pthread_join(pthread_t t, void **value) {
    resolve();
    lock_L();
    for (;;) {
        int gone = 0;
        for (int i = 0; i < n_exited; i++) gone |= pthread_equal(exited[i], t);
        if (gone) break;
        waiter w = {.kind = W_JOIN, .thread = t, .call = "pthread_join"};
        block_on(&w);
    }
    unlock_L();
    return real_join(t, value);
}

static void mutex_released(pthread_mutex_t *m) { /* under L */
    for (waiter *w = waiters; w; w = w->next)
        if (w->kind == W_MUTEX && w->what == m) unblock(w);
}

/* A mutex a thread cannot take now is a wait: it hands the baton on until the mutex is let go. */
/* Whether this thread, having let go of m for a waiter, lets that waiter take it first (under L). */
static int yields(pthread_mutex_t *m) {
    if (handed != m) return 0;
    for (waiter *w = waiters; w; w = w->next)
        if (w->kind == W_MUTEX && w->what == m && w->woken && w->who != self) return 1;
    handed = NULL; /* it has: the mutex is anyone's again */
    return 0;
}

static void wake_holder(pthread_mutex_t *m) { /* its holder, polling with nothing new, goes on (under L) */
    int t = holder(m);
    for (waiter *w = waiters; w && t >= 0 && t != self; w = w->next)
        if (w->who == t && !w->woken && w->kind == W_POLL && !mpi_wait(w)) {
            handing[t] = m;
            unblock(w);
        }
}

int pthread_mutex_lock(pthread_mutex_t *m) {
    resolve();
    /* in_L: the C library's own lock, taken inside the library's work (the unwinder sites.c calls) */
    if (self < 0 || in_L) return real_mutex_lock(m);
    for (;;) {
        int yield = 0;
        if (handed == m) { /* it let go of m for a waiter: has that one taken it? */
            lock_L();
            yield = yields(m);
            unlock_L();
        }
        int rc = yield ? EBUSY : real_mutex_trylock(m);
        if (rc != EBUSY) return rc;
        lock_L();
        waiter w = {.kind = W_MUTEX, .what = m, .call = "pthread_mutex_lock"};
        wake_holder(m);
        block_on(&w);
        unlock_L();
    }
}

int pthread_mutex_unlock(pthread_mutex_t *m) {
    resolve();
    int rc = real_mutex_unlock(m);
    if (self >= 0 && !in_L) {
        lock_L();
        if (handing[self] == m) handing[self] = NULL, handed = m;
        mutex_released(m);
        unlock_L();
    }
    return rc;
}

/* The library's own condition variable: the mutex let go, a wait until a signal, the mutex again. */
int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m) {
    resolve();
    if (self < 0) return real_cond_wait(c, m);
    ml_sync_stdout();
    waiter w = {.kind = W_COND, .what = c, .call = "pthread_cond_wait"};
    lock_L();
    real_mutex_unlock(m);
    mutex_released(m);
    block_on(&w);
    unlock_L();
    return pthread_mutex_lock(m);
}

static void cond_wake(pthread_cond_t *c) { /* every waiter of c: a signal wakes them all (allowed) */
    lock_L();
    for (waiter *w = waiters; w; w = w->next)
        if ((w->kind == W_COND || w->kind == W_POLL) && w->what == c) {
            w->signalled = 1;
            unblock(w);
        }
    bump();
    unlock_L();
    resolve();
    real_cond_broadcast(c);
}

/* sems.c: the program's output flushed (the lock not held); a wait on ``key`` (a semaphore) as on
 * a condition variable, called and returning with the lock held; a wake of every such waiter; a
 * poll that found nothing. */
void ml_flush(void) { ml_sync_stdout(); }

void ml_block_held(void *key) { ml_block_as(key, "sem_wait"); }

void ml_block_as(void *key, const char *call) {
    waiter w = {.kind = W_COND, .what = key, .call = calling ? calling : call};
    block_on(&w);
}

void ml_wake_held(void *key) { /* rma.c: ml_wake with the library's lock held */
    for (waiter *w = waiters; w; w = w->next)
        if ((w->kind == W_COND || w->kind == W_POLL) && w->what == key) {
            w->signalled = 1;
            unblock(w);
        }
    bump();
}

/* rma.c: a message of the library's own to rank dest (under L; it wakes no thread) */
void ml_put_held(int dest, const char *body) {
    char head[64];
    int k = snprintf(head, sizeof head, "{\"type\":\"send\",\"to\":%d,\"body\":", dest + first_);
    drain();
    put(head, (size_t)k);
    put(body, strlen(body));
    put("}\n", 2);
    sent();
}

void ml_block_astir(void *key, const char *call) { /* rma.c: a wait that may be a program's loop (astir) */
    waiter w = {.kind = W_POLL, .what = key, .call = call};
    block_on(&w);
}

void ml_wake(void *key) {
    lock_L();
    for (waiter *w = waiters; w; w = w->next)
        if ((w->kind == W_COND || w->kind == W_POLL) && w->what == key) {
            w->signalled = 1;
            unblock(w);
        }
    bump();
    unlock_L();
}

void ml_poll(void) {
    if (self < 0) return;
    ml_sync_stdout();
    poll_point();
}

/* A timed wait is a poll, as a sleep is (time passes only in mutexlab's clock): it times out at
 * once while something new happens in the rank, and after POLLS times with nothing new it waits
 * until something happens or the condition variable is signalled. One that times out moves
 * mutexlab's clock on to its deadline (``abstime`` on ``clock``), as a sleep moves it by the time
 * it asked for: libstdc++'s wait_for and wait_until say timeout only once the clock has passed
 * the deadline, and before, a timed-out wait said no_timeout (a spurious wakeup), so a program's
 * timeout branch (a token taken for lost after 200 ms) never ran. */
static int timed_wait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime) {
    lock_L();
    real_mutex_unlock(m);
    mutex_released(m);
    int signalled = 0;
    unsigned long here;
    if (gen != seen) {
        seen = gen;
        unchanged = homing = 0;
    } else if (++unchanged >= POLLS && !lingers_on() && !homes(here = place())) {
        waiter w = {.kind = W_POLL, .what = c, .loop = 1, .call = "pthread_cond_timedwait", .site = here};
        wait_in_loop(&w);
        signalled = w.signalled;
        seen = gen;
        unchanged = 0;
    }
    unlock_L();
    if (!signalled && abstime) { /* timed out: its deadline has come */
        struct timespec now;
        clock_gettime(clock, &now);
        slept((abstime->tv_sec - now.tv_sec) * 1000000000LL + (abstime->tv_nsec - now.tv_nsec));
    }
    pthread_mutex_lock(m);
    return signalled ? 0 : ETIMEDOUT;
}

int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime) {
    resolve();
    if (self < 0) {
        int (*timed)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *) =
            ml_real("pthread_cond_timedwait", "GLIBC_2.3.2");
        return timed(c, m, abstime);
    }
    return timed_wait(c, m, CLOCK_REALTIME, abstime); /* a condition variable's default clock */
}

int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime) {
    resolve();
    if (self < 0) {
        int (*timed)(pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *) =
            ml_real("pthread_cond_clockwait", NULL);
        return timed(c, m, clock, abstime);
    }
    return timed_wait(c, m, clock, abstime);
}

int pthread_cond_signal(pthread_cond_t *c) {
    cond_wake(c);
    return 0;
}

int pthread_cond_broadcast(pthread_cond_t *c) {
    cond_wake(c);
    return 0;
}

unsigned int sleep(unsigned int seconds) {
    slept(seconds * 1000000000LL);
    ml_sync_stdout();
    sleep_point();
    return 0;
}

int usleep(useconds_t us) {
    slept(us * 1000LL);
    ml_sync_stdout();
    sleep_point();
    return 0;
}

int nanosleep(const struct timespec *req, struct timespec *rem) {
    if (req) slept(req->tv_sec * 1000000000LL + req->tv_nsec);
    if (rem) rem->tv_sec = rem->tv_nsec = 0;
    ml_sync_stdout();
    sleep_point();
    return 0;
}

/* The other ways a program sleeps: clock_nanosleep (relative, or until an absolute time of the
 * machine's clock), and select or poll given no descriptor, only a timeout. Each takes no time,
 * as nanosleep does, and is a poll; a select or poll with descriptors is the C library's. */
int clock_nanosleep(clockid_t clock, int flags, const struct timespec *req, struct timespec *rem) {
    if (self < 0) {
        int (*real_sleep)(clockid_t, int, const struct timespec *, struct timespec *) = ml_real("clock_nanosleep", NULL);
        return real_sleep(clock, flags, req, rem);
    }
    long long ns = req ? req->tv_sec * 1000000000LL + req->tv_nsec : 0;
    if (req && (flags & TIMER_ABSTIME)) { /* until then: what is left of it now */
        struct timespec now;
        clock_gettime(clock, &now);
        ns -= now.tv_sec * 1000000000LL + now.tv_nsec;
    }
    if (ns > 0) slept(ns);
    if (rem && !(flags & TIMER_ABSTIME)) rem->tv_sec = rem->tv_nsec = 0;
    ml_sync_stdout();
    sleep_point();
    return 0;
}

int select(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds, struct timeval *timeout) {
    if (self < 0 || nfds > 0 || !timeout) {
        int (*real_select)(int, fd_set *, fd_set *, fd_set *, struct timeval *) = ml_real("select", NULL);
        return real_select(nfds, readfds, writefds, exceptfds, timeout);
    }
    slept(timeout->tv_sec * 1000000000LL + timeout->tv_usec * 1000LL);
    timeout->tv_sec = timeout->tv_usec = 0; /* Linux leaves the time not slept */
    ml_sync_stdout();
    sleep_point();
    return 0;
}

int poll(struct pollfd *fds, nfds_t nfds, int timeout) {
    if (self < 0 || nfds > 0 || timeout < 0) {
        int (*real_poll)(struct pollfd *, nfds_t, int) = ml_real("poll", NULL);
        return real_poll(fds, nfds, timeout);
    }
    slept(timeout * 1000000LL);
    ml_sync_stdout();
    sleep_point();
    return 0;
}

/* std::this_thread::yield() and sched_yield() in a loop waiting for another thread's flag: a poll,
 * as a sleep is (threads take turns here, so the thread that would set the flag runs only once this
 * one waits). */
int sched_yield(void) {
    if (self < 0) {
        int (*yield)(void) = ml_real("sched_yield", NULL);
        return yield();
    }
    ml_sync_stdout();
    poll_point();
    return 0;
}

