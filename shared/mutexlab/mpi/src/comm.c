/* Communicators of mutexlab's MPI: MPI_COMM_WORLD, MPI_COMM_SELF, their copies by MPI_Comm_dup and
 * their parts by MPI_Comm_split and MPI_Comm_create (groups.c) (docs/mpi.md#subset).
 *
 * A communicator is a list of world ranks (its rank r is the world's members[r]) and a context id:
 * its messages carry context 4·id + kind (internal.h), so a message on one communicator is never
 * received on another. The world's id is 0. A new communicator's id is its parent's id and its
 * number among the parent's children: every member of the parent makes them in the same order (MPI
 * calls MPI_Comm_dup and MPI_Comm_split collective), so all members agree on it without a message.
 * The world's children are 1, 2, … (as the copies were numbered before splits came); a deeper
 * one's is a hash, checked against the rank's other communicators. MPI_COMM_SELF's id is SELF_ID,
 * above every hash: its one member is the rank itself, so its messages never leave the rank. MPI_Comm_split learns the
 * others' colors and keys by an MPI_Allgather on the parent: messages the director orders. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define FIRST_HANDLE 3 /* after MPI_COMM_NULL, MPI_COMM_WORLD, MPI_COMM_SELF */
#define COMMS 64       /* communicators besides the world at once */
#define WORLD_CHILDREN 4096
#define SELF_ID (WORLD_CHILDREN + (1 << 27)) /* above every child_id; 4·id stays an int */

typedef struct {
    int live, id, size, me, children, seq; /* seq: its collectives so far */
    int *members;
} comm_t;

static comm_t comms[COMMS + 1]; /* [0]: the world */
static comm_t self_comm;         /* MPI_COMM_SELF, made on first use */
static int self_member;

static comm_t *self(void) { /* under the lock */
    if (!self_comm.live) {
        self_member = ml_me();
        self_comm = (comm_t){1, SELF_ID, 1, 0, 0, 0, &self_member};
    }
    return &self_comm;
}

static comm_t *slot_of(MPI_Comm comm) {
    if (comm == MPI_COMM_WORLD) return &comms[0];
    if (comm == MPI_COMM_SELF) return self();
    if (comm >= FIRST_HANDLE && comm < FIRST_HANDLE + COMMS && comms[comm - FIRST_HANDLE + 1].live)
        return &comms[comm - FIRST_HANDLE + 1];
    return NULL;
}

static comm_t *world(void) { /* made on first use: the world is known once MPI_Init has returned */
    comm_t *w = &comms[0];
    if (!w->live) {
        int n = ml_np();
        w->members = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
        if (!w->members) ml_fatal("out of memory");
        for (int i = 0; i < n; i++) w->members[i] = i;
        w->size = n;
        w->me = ml_me();
        w->live = 1;
    }
    return w;
}

static comm_t *of_ctx(int ctx) { /* under the lock */
    int id = ctx / 4;
    if (id == 0) return world();
    if (id == SELF_ID) return self();
    for (int i = 1; i <= COMMS; i++)
        if (comms[i].live && comms[i].id == id) return &comms[i];
    return NULL;
}

static comm_t *of_ctx_known(int ctx, int held) { /* held: the caller holds the lock */
    if (!held) ml_lock();
    comm_t *c = of_ctx(ctx);
    if (!held) ml_unlock();
    if (!c) {
        if (held) ml_unlock();
        ml_fatal("a message context (%d) of no communicator of this rank", ctx);
    }
    return c;
}

int ml_comm(MPI_Comm comm, const char *call) {
    ml_thread(call);
    if (ml_phase() == 0) ml_error(MPI_ERR_OTHER, "MPI_ERR_OTHER: %s called before MPI_Init", call);
    /* after MPI_Finalize (a thread of the program's still at work): erroneous under MPI, which Open
     * MPI and MPICH end the job for — the program's crash, in the schedule that led to it */
    if (ml_phase() == 2)
        ml_error(MPI_ERR_OTHER, "MPI_ERR_OTHER: %s called after MPI_Finalize (MPI allows no call after it: Open "
                 "MPI and MPICH "
                 "abort the job)", call);
    ml_lock();
    comm_t *c = slot_of(comm);
    if (c == &comms[0]) world();
    int id = c ? c->id : -1;
    ml_unlock();
    if (c) ml_error_on(4 * id);
    if (!c)
        ml_fatal("%s on a communicator mutexlab's MPI does not know (%d): it has MPI_COMM_WORLD, MPI_COMM_SELF "
                 "and the communicators MPI_Comm_dup, MPI_Comm_split and MPI_Comm_create make%s",
                 call, comm,
                 comm == MPI_COMM_NULL ? " (MPI_COMM_NULL: MPI_Comm_split or MPI_Comm_create gave this rank none)"
                                       : "");
    return 4 * id;
}

int ml_next_seq(int ctx) {
    comm_t *c = of_ctx_known(ctx, 0);
    ml_lock();
    int seq = ++c->seq;
    ml_unlock();
    return seq;
}

int ml_rank(int ctx) { return of_ctx_known(ctx, 0)->me; }
int ml_size(int ctx) { return of_ctx_known(ctx, 0)->size; }

static int to_world(int ctx, int rank, int held) {
    if (rank < 0 || ctx / 4 == 0) return rank; /* MPI_ANY_SOURCE, MPI_PROC_NULL; the world's own */
    comm_t *c = of_ctx_known(ctx, held);
    return rank < c->size ? c->members[rank] : rank;
}

static int to_local(int ctx, int world_rank, int held) {
    if (world_rank < 0 || ctx / 4 == 0) return world_rank;
    comm_t *c = of_ctx_known(ctx, held);
    for (int r = 0; r < c->size; r++)
        if (c->members[r] == world_rank) return r;
    return world_rank;
}

/* The size of ``comm`` and its members (world ranks): a copy taken under the lock, the caller's to free. */
int ml_comm_members(MPI_Comm comm, int **members, const char *call) {
    ml_comm(comm, call);
    ml_lock();
    comm_t *c = slot_of(comm);
    if (!c) { /* freed by another thread since ml_comm looked: the program's error */
        ml_unlock();
        ml_error(MPI_ERR_COMM, "MPI_ERR_COMM: %s on a communicator another thread freed meanwhile (%d)", call, comm);
    }
    int size = c->size;
    *members = malloc(sizeof(int) * (size_t)(size > 0 ? size : 1));
    if (*members) memcpy(*members, c->members, sizeof(int) * (size_t)size);
    ml_unlock();
    if (!*members) ml_fatal("%s: out of memory", call);
    return size;
}

MPI_Comm ml_comm_handle(int ctx) {
    int id = ctx / 4;
    if (id == 0) return MPI_COMM_WORLD;
    if (id == SELF_ID) return MPI_COMM_SELF;
    ml_lock();
    MPI_Comm handle = MPI_COMM_NULL;
    for (int i = 1; i <= COMMS; i++)
        if (comms[i].live && comms[i].id == id) handle = FIRST_HANDLE + i - 1;
    ml_unlock();
    return handle;
}

int ml_world(int ctx, int rank) { return to_world(ctx, rank, 0); }
int ml_local(int ctx, int world_rank) { return to_local(ctx, world_rank, 0); }
int ml_world_held(int ctx, int rank) { return to_world(ctx, rank, 1); }
int ml_local_held(int ctx, int world_rank) { return to_local(ctx, world_rank, 1); }

static int child_id(int parent, int n) {
    if (parent == 0 && n < WORLD_CHILDREN) return n;
    unsigned long h = 1469598103934665603UL; /* FNV-1a of the two numbers */
    for (int k = 0; k < 2; k++) {
        unsigned v = (unsigned)(k ? n : parent);
        for (int b = 0; b < 4; b++) h = (h ^ ((v >> (8 * b)) & 0xff)) * 1099511628211UL;
    }
    return WORLD_CHILDREN + (int)(h % (1UL << 27)); /* 4·id stays an int */
}

/* A new communicator of ``parent``'s child number ``n``: ``members`` (world ranks, taken) with this
 * rank at ``me``; its handle. */
static MPI_Comm made(comm_t *parent, int n, int *members, int size, int me, const char *call) {
    int id = child_id(parent->id, n);
    ml_lock();
    int free_slot = 0, clash = 0; /* the lowest free slot; a live communicator of the same context */
    for (int i = COMMS; i >= 1; i--) {
        if (!comms[i].live) free_slot = i;
        else if (comms[i].id == id) clash = 1;
    }
    if (clash) free_slot = -1;
    if (free_slot > 0) comms[free_slot] = (comm_t){1, id, size, me, 0, 0, members};
    ml_unlock();
    if (free_slot > 0) ml_errhandler_inherit(4 * parent->id, 4 * id);
    if (free_slot == 0) ml_fatal("%s: more than %d communicators at once (besides MPI_COMM_WORLD)", call, COMMS);
    if (free_slot < 0) ml_fatal("%s: two communicators of this rank would share a context (%d)", call, id);
    return FIRST_HANDLE + free_slot - 1;
}

static int child_number(comm_t *parent) {
    ml_lock();
    int n = ++parent->children;
    ml_unlock();
    return n;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *out) {
    ml_comm(comm, "MPI_Comm_dup");
    comm_t *parent = slot_of(comm);
    int *members = malloc(sizeof(int) * (size_t)parent->size);
    if (!members) ml_fatal("MPI_Comm_dup: out of memory");
    memcpy(members, parent->members, sizeof(int) * (size_t)parent->size);
    *out = made(parent, child_number(parent), members, parent->size, parent->me, "MPI_Comm_dup");
    return MPI_SUCCESS;
}

int MPI_Comm_free(MPI_Comm *comm) {
    ml_comm(*comm, "MPI_Comm_free");
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        ml_error(MPI_ERR_COMM, "MPI_ERR_COMM: MPI_Comm_free of %s",
                 *comm == MPI_COMM_WORLD ? "MPI_COMM_WORLD" : "MPI_COMM_SELF");
    ml_errhandler_forget(ml_comm(*comm, "MPI_Comm_free"));
    ml_topo_forget(*comm);
    ml_lock();
    comm_t *c = slot_of(*comm);
    c->live = 0;
    free(c->members);
    c->members = NULL;
    ml_unlock();
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

/* MPI_Comm_split: the ranks of the parent that give one color make a communicator, numbered by
 * key, then by their rank in the parent; MPI_UNDEFINED gives MPI_COMM_NULL. */
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *out) {
    ml_comm(comm, "MPI_Comm_split");
    if (color < 0 && color != MPI_UNDEFINED)
        ml_error(MPI_ERR_ARG, "MPI_ERR_ARG: MPI_Comm_split with color %d (a color is 0 or more, or MPI_UNDEFINED)",
                 color);
    comm_t *parent = slot_of(comm);
    int n = parent->size, mine[2] = {color, key};
    int *all = malloc(sizeof(int) * 2 * (size_t)n), *members = malloc(sizeof(int) * (size_t)n);
    if (!all || !members) ml_fatal("MPI_Comm_split: out of memory");
    MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, comm);
    int child = child_number(parent);
    if (color == MPI_UNDEFINED) {
        free(all);
        free(members);
        *out = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    int size = 0, me = 0; /* members: parent ranks of this color, by (key, parent rank) */
    for (int r = 0; r < n; r++) {
        if (all[2 * r] != color) continue;
        int at = size++;
        while (at > 0 && all[2 * members[at - 1] + 1] > all[2 * r + 1]) {
            members[at] = members[at - 1];
            at--;
        }
        members[at] = r;
    }
    for (int i = 0; i < size; i++) {
        if (members[i] == parent->me) me = i;
        members[i] = parent->members[members[i]];
    }
    free(all);
    *out = made(parent, child, members, size, me, "MPI_Comm_split");
    return MPI_SUCCESS;
}

int MPI_Comm_rank(MPI_Comm comm, int *rank) {
    *rank = ml_rank(ml_comm(comm, "MPI_Comm_rank"));
    return MPI_SUCCESS;
}

int MPI_Comm_size(MPI_Comm comm, int *size) {
    *size = ml_size(ml_comm(comm, "MPI_Comm_size"));
    return MPI_SUCCESS;
}

/* MPI_Comm_create's new communicator of ``comm``: ``members`` (world ranks, taken, or NULL where
 * this rank is not among them, then MPI_COMM_NULL). Every member of ``comm`` calls it, in the
 * same order as its other MPI_Comm_dup/split/create of ``comm``, so that all agree on its id. */
MPI_Comm ml_comm_create(MPI_Comm comm, int *members, int size, int me, const char *call) {
    ml_comm(comm, call);
    comm_t *parent = slot_of(comm);
    int child = child_number(parent);
    if (!members) return MPI_COMM_NULL;
    return made(parent, child, members, size, me, call);
}
