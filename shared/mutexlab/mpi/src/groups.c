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

static int *alloc_ranks(int n, const char *call) {
    int *p = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    if (!p) ml_fatal("%s: out of memory", call);
    return p;
}

static void not_a_group(MPI_Group g, const char *call) {
    ml_error_on(0); /* no communicator: MPI_COMM_WORLD's handler, as MPI-3 says */
    ml_error(MPI_ERR_GROUP, "MPI_ERR_GROUP: %s on a group that is not one (%d)%s", call, g,
             g == MPI_GROUP_NULL ? ": MPI_GROUP_NULL" : "");
}

/* A copy of group ``g``'s members (world ranks), taken under the library's lock, which the
 * group's writers (new_group, MPI_Group_free) hold too; its size is returned. MPI_ERR_GROUP (a
 * crash) when ``g`` is no group. The caller frees the copy. */
static int copy_of(MPI_Group g, int **members, const char *call) {
    ml_thread(call);
    if (g == MPI_GROUP_EMPTY) {
        *members = alloc_ranks(0, call);
        return 0;
    }
    int size = -1, *copy = NULL;
    ml_lock();
    if (g >= 2 && g < 2 + GROUPS && groups[g - 2].live) {
        size = groups[g - 2].size;
        copy = malloc(sizeof(int) * (size_t)(size > 0 ? size : 1));
        if (copy) memcpy(copy, groups[g - 2].members, sizeof(int) * (size_t)size);
    }
    ml_unlock();
    if (size < 0) not_a_group(g, call);
    if (!copy) ml_fatal("%s: out of memory", call);
    *members = copy;
    return size;
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

/* The place of world rank ``w`` among ``members``, or -1. */
static int place(const int *members, int size, int w) {
    for (int i = 0; i < size; i++)
        if (members[i] == w) return i;
    return -1;
}

int MPI_Comm_group(MPI_Comm comm, MPI_Group *group) {
    int *members;
    int size = ml_comm_members(comm, &members, "MPI_Comm_group");
    *group = new_group(members, size, "MPI_Comm_group");
    return MPI_SUCCESS;
}

int MPI_Group_size(MPI_Group group, int *size) {
    int *members;
    *size = copy_of(group, &members, "MPI_Group_size");
    free(members);
    return MPI_SUCCESS;
}

int MPI_Group_rank(MPI_Group group, int *rank) {
    int *members, size = copy_of(group, &members, "MPI_Group_rank");
    int at = place(members, size, ml_me());
    free(members);
    *rank = at < 0 ? MPI_UNDEFINED : at;
    return MPI_SUCCESS;
}

/* ``ranks`` must name n distinct ranks of a group of ``size``, as MPI_Group_incl and MPI_Group_excl require. */
static void check_ranks(int size, int n, const int ranks[], const char *call) {
    ml_error_on(0); /* errors here: MPI_COMM_WORLD's handler */
    if (n < 0 || n > size) ml_error(MPI_ERR_ARG, "MPI_ERR_ARG: %s of %d ranks from a group of %d", call, n, size);
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= size)
            ml_error(MPI_ERR_RANK, "MPI_ERR_RANK: %s names rank %d of a group of %d", call, ranks[i], size);
        for (int j = 0; j < i; j++)
            if (ranks[j] == ranks[i]) ml_error(MPI_ERR_RANK, "MPI_ERR_RANK: %s names rank %d twice", call, ranks[i]);
    }
}

int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup) {
    int *from, size = copy_of(group, &from, "MPI_Group_incl");
    check_ranks(size, n, ranks, "MPI_Group_incl");
    if (n == 0) {
        free(from);
        *newgroup = MPI_GROUP_EMPTY;
        return MPI_SUCCESS;
    }
    int *members = alloc_ranks(n, "MPI_Group_incl");
    for (int i = 0; i < n; i++) members[i] = from[ranks[i]];
    free(from);
    *newgroup = new_group(members, n, "MPI_Group_incl");
    return MPI_SUCCESS;
}

int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup) {
    int *from, size = copy_of(group, &from, "MPI_Group_excl");
    check_ranks(size, n, ranks, "MPI_Group_excl");
    if (n == size) {
        free(from);
        *newgroup = MPI_GROUP_EMPTY;
        return MPI_SUCCESS;
    }
    int *members = alloc_ranks(size - n, "MPI_Group_excl"), kept = 0;
    for (int r = 0; r < size; r++) {
        int out = 0;
        for (int i = 0; i < n && !out; i++) out = ranks[i] == r;
        if (!out) members[kept++] = from[r];
    }
    free(from);
    *newgroup = new_group(members, kept, "MPI_Group_excl");
    return MPI_SUCCESS;
}

int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[]) {
    int *a, *b;
    int a_size = copy_of(group1, &a, "MPI_Group_translate_ranks");
    int b_size = copy_of(group2, &b, "MPI_Group_translate_ranks");
    for (int i = 0; i < n; i++) {
        if (ranks1[i] == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        if (ranks1[i] < 0 || ranks1[i] >= a_size) {
            ml_error_on(0); /* no communicator: MPI_COMM_WORLD's handler, not the thread's last one's */
            ml_error(MPI_ERR_RANK, "MPI_ERR_RANK: MPI_Group_translate_ranks names rank %d of a group of %d", ranks1[i],
                     a_size);
        }
        int at = place(b, b_size, a[ranks1[i]]);
        ranks2[i] = at < 0 ? MPI_UNDEFINED : at;
    }
    free(a);
    free(b);
    return MPI_SUCCESS;
}

int MPI_Group_free(MPI_Group *group) {
    MPI_Group g = *group;
    ml_thread("MPI_Group_free");
    if (g != MPI_GROUP_EMPTY) {
        int *members = NULL, live = 0;
        ml_lock();
        if (g >= 2 && g < 2 + GROUPS && groups[g - 2].live) {
            live = 1;
            members = groups[g - 2].members;
            groups[g - 2] = (group_t){0, 0, NULL};
        }
        ml_unlock();
        if (!live) not_a_group(g, "MPI_Group_free");
        free(members);
    }
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}

/* Every member of ``comm`` calls it; the group must be part of ``comm`` (MPI_ERR_GROUP otherwise). */
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm) {
    int *parent;
    int parent_size = ml_comm_members(comm, &parent, "MPI_Comm_create");
    int *members, size = copy_of(group, &members, "MPI_Comm_create");
    for (int i = 0; i < size; i++) {
        int in = 0;
        for (int r = 0; r < parent_size && !in; r++) in = parent[r] == members[i];
        if (!in)
            ml_error(MPI_ERR_GROUP,
                     "MPI_ERR_GROUP: MPI_Comm_create with a group of a rank (world rank %d) not in the communicator",
                     members[i]);
    }
    free(parent);
    int me = place(members, size, ml_me());
    if (me < 0) {
        free(members);
        members = NULL;
    }
    *newcomm = ml_comm_create(comm, members, size, me, "MPI_Comm_create");
    return MPI_SUCCESS;
}
