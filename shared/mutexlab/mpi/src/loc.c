/* MPI_MAXLOC and MPI_MINLOC on the pair types MPI_2INT and MPI_DOUBLE_INT: the greatest (least)
 * value and, where several ranks have it, the least index, as MPI says (a leader elected by
 * MPI_Allreduce). */
#include "internal.h"

typedef struct {
    double value;
    int index;
} double_int;

#define LOC(T, V, I)                                                                                      \
    for (int i = 0; i < n; i++) {                                                                         \
        T *a = (T *)acc + i;                                                                              \
        const T *b = (const T *)in + i;                                                                   \
        int better = op == MPI_MAXLOC ? b->V > a->V : b->V < a->V;                                        \
        if (better || (b->V == a->V && b->I < a->I)) *a = *b;                                             \
    }

typedef struct {
    int value, index;
} int_int;

int ml_combine_loc(void *acc, const void *in, int n, MPI_Datatype type, MPI_Op op) {
    if (op != MPI_MAXLOC && op != MPI_MINLOC) return 0;
    if (type == MPI_2INT) {
        LOC(int_int, value, index)
    } else if (type == MPI_DOUBLE_INT) {
        LOC(double_int, value, index)
    } else {
        return 0;
    }
    return 1;
}

/* Their maps (types.c): MPI_DOUBLE_INT's padding is no part of its message. */
void ml_loc_types(long *size, long *extent, long *align, long *data) {
    size[0] = extent[0] = sizeof(int_int);
    align[0] = sizeof(int);
    data[0] = sizeof(int_int);
    size[1] = sizeof(double) + sizeof(int);
    extent[1] = sizeof(double_int);
    align[1] = sizeof(double);
    data[1] = sizeof(double) + sizeof(int);
}
