/* Groups of mutexlab's MPI and MPI_Comm_create (docs/mpi.md#subset).
 *
 * A group is an ordered list of world ranks, held locally: making, reading and freeing one sends
 * nothing, as in MPI. MPI_GROUP_EMPTY is handle 1; the others are handles 2 … GROUPS + 1 into
 * ``groups``. MPI_Comm_create is collective over its communicator: every member calls it, those
 * in the group get the new communicator (numbered as in the group), the others MPI_COMM_NULL. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define GROUPS 64 /* groups at once, besides MPI_GROUP_EMPTY */

typedef struct {
    int live, size;
    int *members; /* world ranks */
} group_t;

static group_t groups[GROUPS];

/* The group of handle ``g``; MPI_ERR_GROUP (a crash) when it is none. */
static group_t *group_of(MPI_Group g, const char *call) {
    static group_t empty = {1, 0, NULL};
    ml_thread(call);
    if (g == MPI_GROUP_EMPTY) return &empty;
    if (g >= 2 && g < 2 + GROUPS && groups[g - 2].live) return &groups[g - 2];
    ml_error(MPI_ERR_GROUP, "MPI_ERR_GROUP: %s on a group that is not one (%d)%s", call, g,
             g == MPI_GROUP_NULL ? ": MPI_GROUP_NULL" : "");
}

static MPI_Group new_group(int *members, int size, const char *call) { /* members: taken */
    ml_lock();
    int slot = -1;
    for (int i = 0; i < GROUPS && slot < 0; i++)
        if (!groups[i].live) slot = i;
    if (slot >= 0) groups[slot] = (group_t){1, size, members};
    ml_unlock();
    if (slot < 0) ml_fatal("%s: more than %d groups at once", call, GROUPS);
    return 2 + slot;
}

static int *alloc_ranks(int n, const char *call) {
    int *p = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    if (!p) ml_fatal("%s: out of memory", call);
    return p;
}

/* The place of world rank ``w`` in ``g``, or -1. */
static int place(const group_t *g, int w) {
    for (int i = 0; i < g->size; i++)
        if (g->members[i] == w) return i;
    return -1;
}

int MPI_Comm_group(MPI_Comm comm, MPI_Group *group) {
    const int *members;
    int size = ml_comm_members(comm, &members, "MPI_Comm_group");
    int *copy = alloc_ranks(size, "MPI_Comm_group");
    memcpy(copy, members, sizeof(int) * (size_t)size);
    *group = new_group(copy, size, "MPI_Comm_group");
    return MPI_SUCCESS;
}

int MPI_Group_size(MPI_Group group, int *size) {
    *size = group_of(group, "MPI_Group_size")->size;
    return MPI_SUCCESS;
}

int MPI_Group_rank(MPI_Group group, int *rank) {
    int at = place(group_of(group, "MPI_Group_rank"), ml_me());
    *rank = at < 0 ? MPI_UNDEFINED : at;
    return MPI_SUCCESS;
}

/* ``ranks`` must name n distinct ranks of ``g``, as MPI_Group_incl and MPI_Group_excl require. */
static void check_ranks(const group_t *g, int n, const int ranks[], const char *call) {
    if (n < 0 || n > g->size) ml_error(MPI_ERR_ARG, "MPI_ERR_ARG: %s of %d ranks from a group of %d", call, n, g->size);
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size)
            ml_error(MPI_ERR_RANK, "MPI_ERR_RANK: %s names rank %d of a group of %d", call, ranks[i], g->size);
        for (int j = 0; j < i; j++)
            if (ranks[j] == ranks[i]) ml_error(MPI_ERR_RANK, "MPI_ERR_RANK: %s names rank %d twice", call, ranks[i]);
    }
}

int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup) {
    group_t *g = group_of(group, "MPI_Group_incl");
    check_ranks(g, n, ranks, "MPI_Group_incl");
    if (n == 0) {
        *newgroup = MPI_GROUP_EMPTY;
        return MPI_SUCCESS;
    }
    int *members = alloc_ranks(n, "MPI_Group_incl");
    for (int i = 0; i < n; i++) members[i] = g->members[ranks[i]];
    *newgroup = new_group(members, n, "MPI_Group_incl");
    return MPI_SUCCESS;
}

int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup) {
    group_t *g = group_of(group, "MPI_Group_excl");
    check_ranks(g, n, ranks, "MPI_Group_excl");
    if (n == g->size) {
        *newgroup = MPI_GROUP_EMPTY;
        return MPI_SUCCESS;
    }
    int *members = alloc_ranks(g->size - n, "MPI_Group_excl"), size = 0;
    for (int r = 0; r < g->size; r++) {
        int out = 0;
        for (int i = 0; i < n && !out; i++) out = ranks[i] == r;
        if (!out) members[size++] = g->members[r];
    }
    *newgroup = new_group(members, size, "MPI_Group_excl");
    return MPI_SUCCESS;
}

int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[]) {
    group_t *a = group_of(group1, "MPI_Group_translate_ranks"), *b = group_of(group2, "MPI_Group_translate_ranks");
    for (int i = 0; i < n; i++) {
        if (ranks1[i] == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        if (ranks1[i] < 0 || ranks1[i] >= a->size)
            ml_error(MPI_ERR_RANK, "MPI_ERR_RANK: MPI_Group_translate_ranks names rank %d of a group of %d", ranks1[i],
                     a->size);
        int at = place(b, a->members[ranks1[i]]);
        ranks2[i] = at < 0 ? MPI_UNDEFINED : at;
    }
    return MPI_SUCCESS;
}

int MPI_Group_free(MPI_Group *group) {
    group_t *g = group_of(*group, "MPI_Group_free");
    if (*group != MPI_GROUP_EMPTY) {
        ml_lock();
        free(g->members);
        *g = (group_t){0, 0, NULL};
        ml_unlock();
    }
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}

/* Every member of ``comm`` calls it; the group must be part of ``comm`` (MPI_ERR_GROUP otherwise). */
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm) {
    const int *parent;
    int parent_size = ml_comm_members(comm, &parent, "MPI_Comm_create");
    group_t *g = group_of(group, "MPI_Comm_create");
    for (int i = 0; i < g->size; i++) {
        int in = 0;
        for (int r = 0; r < parent_size && !in; r++) in = parent[r] == g->members[i];
        if (!in)
            ml_error(MPI_ERR_GROUP,
                     "MPI_ERR_GROUP: MPI_Comm_create with a group of a rank (world rank %d) not in the communicator",
                     g->members[i]);
    }
    int me = place(g, ml_me());
    int *members = NULL;
    if (me >= 0) {
        members = alloc_ranks(g->size, "MPI_Comm_create");
        memcpy(members, g->members, sizeof(int) * (size_t)g->size);
    }
    *newcomm = ml_comm_create(comm, members, g->size, me, "MPI_Comm_create");
    return MPI_SUCCESS;
}
