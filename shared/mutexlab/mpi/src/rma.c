/* One-sided communication (docs/mpi.md#rma): windows, passive-target locks, MPI_Put, MPI_Get,
 * the accumulates, MPI_Fetch_and_op, MPI_Compare_and_swap, and MPI_Win_fence.
 *
 * Every operation on another rank's window is a message the director holds and delivers when its
 * strategy says, like any other: the target's library (its director thread, between two steps,
 * while every thread of the program waits) applies it to the window's memory and answers with a
 * message of its own (the data of a get, or that a put was done), which the director delivers in
 * turn. So an operation takes effect at the target at a moment the director chooses, anywhere
 * between the call and the MPI_Win_unlock, MPI_Win_flush or MPI_Win_fence that completes it, as MPI
 * allows. MPI_Win_lock asks the target for its lock (a message) and waits for the grant (another);
 * the target grants in the order the requests came, shared locks together. An operation on the
 * rank's own window is applied at once, with no message. Each window works on a copy of its
 * communicator (MPI_Comm_dup), whose context names it in the messages. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define WINS 16
#define QUEUE 256
#define GETS 1024
#define SEEN 64 /* a read of at most this many bytes may be held until they change */
enum { K_LOCK = 1, K_GRANT, K_UNLOCK, K_PUT, K_ACC, K_GET, K_GACC, K_CAS, K_DONE };
static const char *kinds[] = {"", "lock", "grant", "unlock", "put", "accumulate", "get", "get_accumulate",
                              "compare_and_swap", "done"};
enum { M_NONE, M_WAIT, M_SHARED, M_EXCL, M_NOCHECK }; /* an origin's lock on one target */

typedef struct { /* as an origin: what its last read-only operation on a target read */
    int valid;
    long disp, bytes;
    unsigned char v[SEEN];
} seen_t;

typedef struct { /* as a target: a read held until what it reads differs from what its origin saw last */
    int used, from;
    long id, disp, bytes;
    unsigned char v[SEEN];
} held_t;

typedef struct {
    int used;
    MPI_Comm comm;             /* the window's own copy of its communicator */
    int ctx, me, np, *world;   /* world[r]: the world rank of the communicator's rank r */
    unsigned char *base;
    long size;
    int disp_unit;
    void *allocated;           /* MPI_Win_allocate's memory, freed with the window */
    int holder, shared;        /* its lock as a target: the exclusive holder (world rank) or -1; shared holders */
    int qfrom[QUEUE], qexcl[QUEUE], qn; /* lock requests waiting, in the order they came */
    int *mode, *outstanding;   /* as an origin, by target rank: its lock, its operations unanswered */
    int fenced, error;         /* an MPI_Win_fence was called; an error a target answered (MPI_ERR_RMA_RANGE) */
    int *holdable;             /* as an origin, by target rank: reads under way that the target may hold */
    seen_t *seen;
    held_t held[QUEUE];
    char said[200];
} window;

typedef struct {
    int used, read_only;
    long id, disp;
    void *buf;
    long bytes;
    MPI_Datatype type;
} pending;

static window wins[WINS];
static pending gets[GETS];
static long next_id;
static char body[2 * 30000 + 400];

static window *of(MPI_Win win, const char *call) {
    if (win < 1 || win > WINS || !wins[win - 1].used) {
        ml_error_on(0); /* no window: MPI_COMM_WORLD's handler */
        ml_error(MPI_ERR_WIN, "MPI_ERR_WIN: %s on a window that is not one", call);
    }
    return &wins[win - 1];
}

static window *of_ctx(int ctx) {
    for (int i = 0; i < WINS; i++)
        if (wins[i].used && wins[i].ctx == ctx) return &wins[i];
    return NULL;
}

static int local_of(window *w, int world) {
    for (int r = 0; r < w->np; r++)
        if (w->world[r] == world) return r;
    return -1;
}

static long field(const char *line, const char *key, long otherwise) {
    const char *p = strstr(line, key);
    return p ? strtol(p + strlen(key), NULL, 10) : otherwise;
}

/* A message of the library's own to the communicator's rank ``to`` (under L). */
static void say(window *w, int to, int kind, long disp, MPI_Datatype type, long count, MPI_Op op, long id, int err,
                const unsigned char *data, long bytes, int holdable) {
    if (bytes > 30000) ml_fatal("MPI RMA operation of %ld bytes: mutexlab's MPI carries at most 30000 bytes a message", bytes);
    int k = snprintf(body, sizeof body,
                     "{\"type\":\"rma %s\",\"rma\":%d,\"rctx\":%d,\"rdisp\":%ld,\"rtype\":%d,\"rcount\":%ld,"
                     "\"rop\":%d,\"rid\":%ld,\"rerr\":%d,\"rhold\":%d,\"rdata\":\"",
                     kinds[kind], kind, w->ctx, disp, type, count, op, id, err, holdable);
    for (long i = 0; i < bytes; i++) k += sprintf(body + k, "%02x", data[i]);
    snprintf(body + k, sizeof body - (size_t)k, "\"}");
    ml_put_held(w->world[to], body);
}

/* -- the target: locks and operations on its window (under L) ------------------------------ */

static void granted(window *w, int from, int excl) { /* from: the communicator's rank */
    if (excl) w->holder = from;
    else w->shared++;
    if (from == w->me) {
        w->mode[from] = excl ? M_EXCL : M_SHARED;
        ml_wake_held(w);
    } else {
        say(w, from, K_GRANT, 0, 0, 0, 0, excl, 0, NULL, 0, 0);
    }
}

static int can_grant(window *w, int excl) { return w->holder < 0 && (!excl || w->shared == 0); }

static void let_held_go(window *w, int all);

static void ask_lock(window *w, int from, int excl) {
    if (w->qn == 0 && can_grant(w, excl) && from == w->me) { /* its own, at once: nothing new */
        if (excl) w->holder = from;
        else w->shared++;
        w->mode[from] = excl ? M_EXCL : M_SHARED;
        return;
    }
    if (w->qn == 0 && can_grant(w, excl)) {
        granted(w, from, excl);
        return;
    }
    if (w->qn == QUEUE) ml_fatal("more than %d lock requests waiting for one window", QUEUE);
    let_held_go(w, 1); /* a reader held in its epoch keeps the lock: it goes on, and lets go of it */
    w->qfrom[w->qn] = from;
    w->qexcl[w->qn++] = excl;
}

static void let_go(window *w, int from) {
    if (w->holder == from) w->holder = -1;
    else if (w->shared > 0) w->shared--;
    while (w->qn > 0 && can_grant(w, w->qexcl[0])) { /* the oldest requests, as far as they can go */
        int f = w->qfrom[0], e = w->qexcl[0];
        memmove(w->qfrom, w->qfrom + 1, sizeof(int) * (size_t)(w->qn - 1));
        memmove(w->qexcl, w->qexcl + 1, sizeof(int) * (size_t)(w->qn - 1));
        w->qn--;
        granted(w, f, e);
    }
}

/* Whether ``bytes`` at displacement ``disp`` lie inside the window, asked before ``disp * disp_unit``
 * is formed: a displacement so large that the product overflows is outside, never wrapped inside. */
static int inside(const window *w, long disp, long bytes) {
    return disp >= 0 && bytes >= 0 && bytes <= w->size && w->disp_unit > 0 &&
           disp <= (w->size - bytes) / w->disp_unit;
}

/* Apply an operation to this rank's window; the old contents into ``old`` (bytes long) if given.
 * 0 on success, MPI_ERR_RMA_RANGE past the window's end. */
static int apply(window *w, int kind, long disp, MPI_Datatype type, long count, MPI_Op op, const unsigned char *data,
                 long bytes, unsigned char *old) {
    if (!inside(w, disp, bytes)) return MPI_ERR_RMA_RANGE;
    long at = disp * w->disp_unit;
    unsigned char *t = w->base + at;
    if (old) memcpy(old, t, (size_t)bytes);
    if (kind == K_PUT || ((kind == K_ACC || kind == K_GACC) && op == MPI_REPLACE)) {
        memcpy(t, data, (size_t)bytes);
    } else if (kind == K_ACC || kind == K_GACC) {
        if (op != MPI_NO_OP) {
            unsigned char *in = malloc((size_t)bytes + 1);
            memcpy(in, data, (size_t)bytes);
            ml_combine(t, in, (int)count, type, op);
            free(in);
        }
    } else if (kind == K_CAS) { /* data: the new value, then the value to compare with */
        if (memcmp(t, data + bytes, (size_t)bytes) == 0) memcpy(t, data, (size_t)bytes);
    }
    return 0;
}

static unsigned char *hex(const char *line, long *bytes) {
    const char *p = strstr(line, "\"rdata\":\"");
    p = p ? p + 9 : "";
    const char *end = strchr(p, '"');
    *bytes = end ? (end - p) / 2 : 0;
    unsigned char *d = malloc((size_t)*bytes + 1);
    for (long i = 0; i < *bytes; i++) sscanf(p + 2 * i, "%2hhx", &d[i]);
    return d;
}

static void answered(window *w, int from, long id, int err, const unsigned char *data, long bytes) {
    if (err && !w->error) {
        w->error = err;
        snprintf(w->said, sizeof w->said, "an operation past the end of rank %d's window", from);
    }
    if (id) {
        for (int i = 0; i < GETS; i++)
            if (gets[i].used && gets[i].id == id) {
                pending *g = &gets[i];
                if (!err) ml_unpack(g->buf, data, bytes < g->bytes ? bytes : g->bytes, g->type);
                if (g->read_only && !err && bytes == g->bytes && bytes <= SEEN) {
                    w->seen[from] = (seen_t){1, g->disp, bytes, {0}};
                    memcpy(w->seen[from].v, data, (size_t)bytes);
                }
                if (g->read_only && w->holdable[from] > 0) w->holdable[from]--;
                g->used = 0;
            }
    }
    if (w->outstanding[from] > 0) w->outstanding[from]--;
    ml_wake_held(w);
}

/* Reads held (a read-only operation whose origin read the same bytes last time, the same still):
 * a loop reading a value until another rank changes it waits instead of sending for ever, and the run
 * comes to rest. A held read is answered once its bytes differ (settle: after every operation
 * applied and at the end of every step, so the program's own stores count), or, with what they are,
 * when a lock request must wait (the reader holds its lock while it waits: it goes on and lets go).
 * Its origin's wait is a poll's, so no rank is claimed hung while one waits (docs/mpi.md#rma). */
/* The first read held is told to the director ({"type":"log","read_held":true}): the schedules in
 * which its origin read the same bytes again and went on were never run, which a verdict says. */
static int held_told;

static int hold(window *w, int from, long id, long disp, long n, const unsigned char *expected) {
    if (n > SEEN || !inside(w, disp, n) || memcmp(w->base + disp * w->disp_unit, expected, (size_t)n) != 0) return 0;
    if (w->qn > 0) return 0; /* a lock request waits already (for the reader's lock?): it goes on, and lets go */
    for (int i = 0; i < QUEUE; i++)
        if (!w->held[i].used) {
            w->held[i] = (held_t){1, from, id, disp, n, {0}};
            memcpy(w->held[i].v, expected, (size_t)n);
            if (!held_told) { /* the first, told: no run read the same bytes again and went on */
                held_told = 1;
                ml_put_line("{\"type\":\"log\",\"read_held\":true}\n");
            }
            return 1;
        }
    return 0;
}

static void let_held_go(window *w, int all) { /* under L */
    for (int i = 0; i < QUEUE; i++) {
        held_t *h = &w->held[i];
        if (!h->used) continue;
        const unsigned char *now = w->base + h->disp * w->disp_unit;
        if (!all && memcmp(now, h->v, (size_t)h->bytes) == 0) continue;
        h->used = 0;
        if (h->from == w->me) continue; /* never: a rank's reads of its own window are not held */
        say(w, h->from, K_DONE, 0, 0, 0, 0, h->id, 0, now, h->bytes, 0);
    }
}

static void settle(window *w) { let_held_go(w, 0); }

void ml_rma_settle(void) {
    for (int i = 0; i < WINS; i++)
        if (wins[i].used) settle(&wins[i]);
}

void ml_rma_arrive(const char *line, int from_world) {
    window *w = of_ctx((int)field(line, "\"rctx\":", -1));
    if (!w) return; /* a window freed while an operation on it was under way: the program's error */
    int from = local_of(w, from_world), kind = (int)field(line, "\"rma\":", 0);
    if (from < 0) return;
    long disp = field(line, "\"rdisp\":", 0), count = field(line, "\"rcount\":", 0), id = field(line, "\"rid\":", 0);
    MPI_Datatype type = (MPI_Datatype)field(line, "\"rtype\":", 0);
    MPI_Op op = (MPI_Op)field(line, "\"rop\":", 0);
    long bytes;
    unsigned char *data = hex(line, &bytes);
    if (kind == K_LOCK) {
        ask_lock(w, from, (int)id);
    } else if (kind == K_GRANT) {
        w->mode[from] = id ? M_EXCL : M_SHARED;
        ml_wake_held(w);
    } else if (kind == K_UNLOCK) {
        let_go(w, from);
    } else if (kind == K_DONE) {
        answered(w, from, id, (int)field(line, "\"rerr\":", 0), data, bytes);
    } else { /* an operation: applied, and answered (with the old contents for those that fetch) */
        long n = kind == K_CAS ? bytes / 2 : kind == K_GET ? count : bytes; /* a get's count: its bytes */
        int fetch = kind == K_GET || kind == K_GACC || kind == K_CAS;
        if (field(line, "\"rhold\":", 0) && hold(w, from, id, disp, n, data)) {
            free(data);
            return;
        }
        unsigned char *old = malloc((size_t)n + 1);
        int err = apply(w, kind, disp, type, count, op, data, n, old);
        say(w, from, K_DONE, 0, 0, 0, 0, id, err, old, fetch && !err ? n : 0, 0);
        free(old);
        if (kind != K_GET && !(kind == K_GACC && op == MPI_NO_OP)) settle(w);
    }
    free(data);
    ml_wake_held(w); /* something happened: the rank's polls look again */
}

/* -- the origin: the program's calls ------------------------------------------------------ */

static long unanswered(window *w, int rank) { /* under L */
    long left = 0;
    for (int r = 0; r < w->np; r++)
        if (rank < 0 || r == rank) left += w->outstanding[r];
    return left;
}

static void wait_until(window *w, int rank, const char *call) { /* its operations answered (under L) */
    while (unanswered(w, rank)) {
        long holdable = 0;
        for (int r = 0; r < w->np; r++)
            if (rank < 0 || r == rank) holdable += w->holdable[r];
        if (holdable) ml_block_astir(w, "a read of a window held until another rank changes what it reads");
        else ml_block_as(w, call);
    }
    if (w->error) {
        int err = w->error;
        w->error = 0;
        ml_unlock();
        ml_error(err, "MPI_ERR_RMA_RANGE: %s (%s)", w->said, call);
    }
}

static void check_rank(window *w, int rank, const char *call) {
    if (rank < 0 || rank >= w->np) {
        ml_unlock();
        ml_error(MPI_ERR_RANK, "MPI_ERR_RANK: %s on rank %d (there are ranks 0 to %d)", call, rank, w->np - 1);
    }
}

static int make(void *base, MPI_Aint size, int disp_unit, MPI_Comm comm, MPI_Win *win, void *allocated,
                const char *call) {
    MPI_Comm copy;
    ml_comm(comm, call);
    if (size < 0 || disp_unit <= 0) ml_error(MPI_ERR_ARG, "MPI_ERR_ARG: %s of size %ld, disp_unit %d", call, (long)size, disp_unit);
    MPI_Comm_dup(comm, &copy);
    int ctx = ml_comm(copy, call), np = ml_size(ctx), me = ml_rank(ctx);
    int *world = malloc(sizeof(int) * (size_t)np), *mode = calloc((size_t)np, sizeof(int)),
        *outstanding = calloc((size_t)np, sizeof(int)), *holdable = calloc((size_t)np, sizeof(int));
    seen_t *seen = calloc((size_t)np, sizeof(seen_t));
    for (int r = 0; r < np; r++) world[r] = ml_world(ctx, r);
    ml_lock();
    int i = 0;
    while (i < WINS && wins[i].used) i++;
    if (i == WINS) {
        ml_unlock();
        ml_fatal("%s: more than %d windows at once (docs/mpi.md#limits)", call, WINS);
    }
    wins[i] = (window){.used = 1, .comm = copy, .ctx = ctx, .me = me, .np = np, .world = world, .base = base,
                       .size = size, .disp_unit = disp_unit, .allocated = allocated, .holder = -1,
                       .mode = mode, .outstanding = outstanding, .holdable = holdable, .seen = seen};
    ml_unlock();
    *win = i + 1;
    MPI_Barrier(copy); /* collective: no operation reaches a rank before its window is there */
    return MPI_SUCCESS;
}

int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win) {
    (void)info;
    return make(base, size, disp_unit, comm, win, NULL, "MPI_Win_create");
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win) {
    (void)info;
    void *memory = calloc(1, (size_t)(size > 0 ? size : 1));
    if (!memory) ml_fatal("MPI_Win_allocate: out of memory for %ld bytes", (long)size);
    *(void **)baseptr = memory;
    return make(memory, size, disp_unit, comm, win, memory, "MPI_Win_allocate");
}

int MPI_Win_free(MPI_Win *win) {
    window *w = of(*win, "MPI_Win_free");
    ml_lock();
    wait_until(w, -1, "MPI_Win_free");
    ml_unlock();
    MPI_Barrier(w->comm); /* collective: every rank's operations on it are over */
    MPI_Comm comm = w->comm;
    ml_lock();
    free(w->world);
    free(w->mode);
    free(w->outstanding);
    free(w->holdable);
    free(w->seen);
    free(w->allocated);
    w->used = 0;
    ml_unlock();
    MPI_Comm_free(&comm);
    *win = MPI_WIN_NULL;
    return MPI_SUCCESS;
}

static void lock_one(window *w, int type, int rank, int assert_, const char *call) { /* under L */
    if (w->mode[rank] != M_NONE) {
        ml_unlock();
        ml_error(MPI_ERR_RMA_SYNC, "MPI_ERR_RMA_SYNC: %s on rank %d, whose window this rank has locked already", call, rank);
    }
    if (assert_ & MPI_MODE_NOCHECK) { /* the program promises no other lock conflicts: none is taken */
        w->mode[rank] = M_NOCHECK;
        return;
    }
    w->mode[rank] = M_WAIT;
    int excl = type == MPI_LOCK_EXCLUSIVE;
    if (rank == w->me) ask_lock(w, rank, excl);
    else say(w, rank, K_LOCK, 0, 0, 0, 0, excl, 0, NULL, 0, 0);
}

int MPI_Win_lock(int lock_type, int rank, int assert_, MPI_Win win) {
    window *w = of(win, "MPI_Win_lock");
    ml_flush();
    if (lock_type != MPI_LOCK_EXCLUSIVE && lock_type != MPI_LOCK_SHARED)
        ml_error(MPI_ERR_LOCKTYPE, "MPI_ERR_LOCKTYPE: MPI_Win_lock with lock type %d", lock_type);
    ml_lock();
    check_rank(w, rank, "MPI_Win_lock");
    lock_one(w, lock_type, rank, assert_, "MPI_Win_lock");
    while (w->mode[rank] == M_WAIT) ml_block_as(w, "MPI_Win_lock");
    ml_unlock();
    return MPI_SUCCESS;
}

int MPI_Win_lock_all(int assert_, MPI_Win win) {
    window *w = of(win, "MPI_Win_lock_all");
    ml_flush();
    ml_lock();
    for (int r = 0; r < w->np; r++) lock_one(w, MPI_LOCK_SHARED, r, assert_, "MPI_Win_lock_all");
    for (int r = 0; r < w->np; r++)
        while (w->mode[r] == M_WAIT) ml_block_as(w, "MPI_Win_lock_all");
    ml_unlock();
    return MPI_SUCCESS;
}

static void unlock_one(window *w, int rank, const char *call) { /* under L, its operations answered */
    int mode = w->mode[rank];
    if (mode == M_NONE) {
        ml_unlock();
        ml_error(MPI_ERR_RMA_SYNC, "MPI_ERR_RMA_SYNC: %s on rank %d, whose window this rank has not locked", call, rank);
    }
    w->mode[rank] = M_NONE;
    if (mode == M_NOCHECK) return;
    if (rank == w->me) let_go(w, rank);
    else say(w, rank, K_UNLOCK, 0, 0, 0, 0, 0, 0, NULL, 0, 0);
}

int MPI_Win_unlock(int rank, MPI_Win win) {
    window *w = of(win, "MPI_Win_unlock");
    ml_flush();
    ml_lock();
    check_rank(w, rank, "MPI_Win_unlock");
    long left = unanswered(w, rank);
    wait_until(w, rank, "MPI_Win_unlock");
    unlock_one(w, rank, "MPI_Win_unlock");
    ml_unlock();
    if (!left) ml_poll(); /* an epoch of no remote operation (its own window): a poll */
    return MPI_SUCCESS;
}

int MPI_Win_unlock_all(MPI_Win win) {
    window *w = of(win, "MPI_Win_unlock_all");
    ml_flush();
    ml_lock();
    long left = unanswered(w, -1);
    wait_until(w, -1, "MPI_Win_unlock_all");
    for (int r = 0; r < w->np; r++) unlock_one(w, r, "MPI_Win_unlock_all");
    ml_unlock();
    if (!left) ml_poll();
    return MPI_SUCCESS;
}

/* A flush (or an unlock) that has nothing to wait for is a poll (docs/mpi.md#threads): a loop reading
 * the rank's own window, which only another rank's operations change, waits until something happens. */
static int flush(MPI_Win win, int rank, const char *call) {
    window *w = of(win, call);
    ml_flush();
    ml_lock();
    if (rank >= 0) check_rank(w, rank, call);
    long left = unanswered(w, rank);
    wait_until(w, rank, call);
    ml_unlock();
    if (!left) ml_poll();
    return MPI_SUCCESS;
}

int MPI_Win_flush(int rank, MPI_Win win) { return flush(win, rank, "MPI_Win_flush"); }
int MPI_Win_flush_all(MPI_Win win) { return flush(win, -1, "MPI_Win_flush_all"); }
int MPI_Win_flush_local(int rank, MPI_Win win) { return flush(win, rank, "MPI_Win_flush_local"); }
int MPI_Win_flush_local_all(MPI_Win win) { return flush(win, -1, "MPI_Win_flush_local_all"); }

int MPI_Win_sync(MPI_Win win) { /* memory is one copy here: nothing to do but a poll */
    of(win, "MPI_Win_sync");
    ml_flush();
    ml_poll();
    return MPI_SUCCESS;
}

int MPI_Win_fence(int assert_, MPI_Win win) {
    (void)assert_;
    window *w = of(win, "MPI_Win_fence");
    ml_flush();
    ml_lock();
    wait_until(w, -1, "MPI_Win_fence");
    w->fenced = 1;
    ml_unlock();
    MPI_Barrier(w->comm); /* every rank's operations of the epoch are over before any rank goes on */
    return MPI_SUCCESS;
}

/* One operation: checked, then applied at once on the rank's own window, else sent (under L after). */
static void operate(int kind, const void *origin, int origin_count, MPI_Datatype origin_type, const void *compare,
                    void *result, MPI_Datatype result_type, int rank, MPI_Aint disp, int count, MPI_Datatype type,
                    MPI_Op op, MPI_Win win, const char *call) {
    window *w = of(win, call);
    if (type < 1 || type > MPI_DOUBLE_INT)
        ml_fatal("%s with a target datatype of the program's own is not supported by mutexlab's MPI, which takes "
                 "the predefined ones (MPI_INT, MPI_LONG …) on the target (docs/mpi.md#rma)",
                 call);
    long bytes = (long)count * ml_extent(type), sent = 0;
    unsigned char *data = NULL;
    if (kind != K_GET && !(kind == K_GACC && op == MPI_NO_OP)) {
        data = ml_pack(origin, origin_count, origin_type, &sent, call);
        if (sent != bytes)
            ml_fatal("%s of %ld bytes from the origin to %ld bytes of the target: mutexlab's MPI takes the same "
                     "size on both sides (docs/mpi.md#rma)",
                     call, sent, bytes);
        if (kind == K_CAS) {
            long more;
            unsigned char *cmp = ml_pack(compare, 1, type, &more, call);
            data = realloc(data, (size_t)(2 * bytes + 1));
            memcpy(data + bytes, cmp, (size_t)bytes);
            free(cmp);
            sent = 2 * bytes;
        }
    } else {
        data = calloc(1, (size_t)bytes + 1);
        sent = kind == K_GACC ? bytes : 0;
    }
    if (rank == w->me) ml_rma_pause(); /* another rank's operation on this window may come first */
    ml_lock();
    check_rank(w, rank, call);
    if (w->mode[rank] == M_NONE && !w->fenced) {
        ml_unlock();
        ml_error(MPI_ERR_RMA_SYNC, "MPI_ERR_RMA_SYNC: %s on rank %d's window outside an access epoch (no "
                 "MPI_Win_lock of it, MPI_Win_lock_all or MPI_Win_fence before)", call, rank);
    }
    int fetch = kind == K_GET || kind == K_GACC || kind == K_CAS;
    int read_only = kind == K_GET || (kind == K_GACC && op == MPI_NO_OP);
    if (rank == w->me) { /* the rank's own window: at once */
        unsigned char *old = malloc((size_t)bytes + 1);
        int err = apply(w, kind, disp, type, count, op, data, kind == K_CAS ? bytes : sent ? sent : bytes, old);
        if (err) {
            ml_unlock();
            ml_error(err, "MPI_ERR_RMA_RANGE: %s at displacement %ld of %ld bytes past the end of its own window "
                     "(%ld bytes)", call, (long)disp, bytes, w->size);
        }
        if (fetch) ml_unpack(result, old, bytes, result_type);
        free(old);
        if (!read_only) {
            settle(w);
            ml_wake_held(w); /* its window changed: something new, for its own polls too */
        }
    } else {
        long id = 0;
        if (fetch) {
            int i = 0;
            while (i < GETS && gets[i].used) i++;
            if (i == GETS) {
                ml_unlock();
                ml_fatal("%s: more than %d fetching operations under way at once (docs/mpi.md#limits)", call, GETS);
            }
            gets[i] = (pending){1, read_only, id = ++next_id, disp, result, bytes, result_type};
        }
        seen_t *seen = &w->seen[rank];
        int holdable = read_only && seen->valid && seen->disp == disp && seen->bytes == bytes;
        if (!read_only) seen->valid = 0; /* its own write: what it read is no longer what it expects */
        w->outstanding[rank]++;
        if (holdable) w->holdable[rank]++;
        say(w, rank, kind, disp, type, kind == K_GET ? bytes : count, op, id, 0, holdable ? seen->v : data,
            holdable ? bytes : sent, holdable);
    }
    ml_unlock();
    free(data);
}

int MPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
    operate(K_PUT, origin_addr, origin_count, origin_datatype, NULL, NULL, 0, target_rank, target_disp, target_count,
            target_datatype, 0, win, "MPI_Put");
    return MPI_SUCCESS;
}

int MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
    (void)origin_count;
    operate(K_GET, NULL, 0, 0, NULL, origin_addr, origin_datatype, target_rank, target_disp, target_count,
            target_datatype, 0, win, "MPI_Get");
    return MPI_SUCCESS;
}

static void check_op(MPI_Op op, MPI_Datatype type, const char *call) {
    if (op == MPI_REPLACE || op == MPI_NO_OP) return;
    int probe = 0;
    if (!ml_combine(&probe, &probe, 0, type, op))
        ml_error(MPI_ERR_OP, "MPI_ERR_OP: %s with an operation mutexlab's MPI does not apply to its datatype", call);
}

int MPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                   MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
    check_op(op, target_datatype, "MPI_Accumulate");
    operate(K_ACC, origin_addr, origin_count, origin_datatype, NULL, NULL, 0, target_rank, target_disp, target_count,
            target_datatype, op, win, "MPI_Accumulate");
    return MPI_SUCCESS;
}

int MPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
                       int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                       int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
    (void)result_count;
    check_op(op, target_datatype, "MPI_Get_accumulate");
    operate(K_GACC, origin_addr, origin_count, origin_datatype, NULL, result_addr, result_datatype, target_rank,
            target_disp, target_count, target_datatype, op, win, "MPI_Get_accumulate");
    return MPI_SUCCESS;
}

int MPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
                     MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
    check_op(op, datatype, "MPI_Fetch_and_op");
    operate(K_GACC, origin_addr, 1, datatype, NULL, result_addr, datatype, target_rank, target_disp, 1, datatype, op,
            win, "MPI_Fetch_and_op");
    return MPI_SUCCESS;
}

int MPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                         MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win) {
    operate(K_CAS, origin_addr, 1, datatype, compare_addr, result_addr, datatype, target_rank, target_disp, 1,
            datatype, 0, win, "MPI_Compare_and_swap");
    return MPI_SUCCESS;
}
