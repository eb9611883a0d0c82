/* The datatypes with gaps of their own between their data: MPI_Type_vector, MPI_Type_create_hvector,
 * MPI_Type_indexed, MPI_Type_create_indexed_block and MPI_Type_create_resized, as maps of byte ranges
 * (types.c). Where one leaves a gap (a stride longer than its block, blocks apart, an extent
 * resized past its data) it is strided: a message of it carries its map's bytes alone, and a
 * receive of it puts them back where its map says, leaving the gaps of the buffer as they were, as
 * MPI does; sent as a strided type and received as plain ones (a column received as MPI_INT), or
 * the other way round, the elements arrive in order. Without a gap it is as MPI_Type_contiguous. A
 * lower bound is 0 here: what would make it another (a negative stride, an indexed type whose first
 * block is not at 0, MPI_Type_create_resized with a lower bound) stops the test naming it. */
#include "internal.h"

static void refuse(const char *call, const char *what) {
    ml_fatal("%s with %s is not supported by mutexlab's MPI, whose datatypes have a lower bound of 0", call, what);
}

/* ``count`` blocks of ``lens[i]`` elements of ``old``, block i at byte ``at[i]``, in that order. */
static int blocks(int count, const int lens[], const long at[], MPI_Datatype old, const char *call) {
    dtype *o = ml_type(old), made = {0, 0, o->align, 0, 1, 0, o->strided, {0}, {0}};
    long end = 0, next = 0;
    for (int i = 0; i < count; i++) {
        if (lens[i] < 0 || at[i] < 0) refuse(call, "a negative block length or displacement");
        made.strided |= lens[i] > 0 && i > 0 && at[i] != next; /* a gap before this block, or an overlap */
        for (int j = 0; j < lens[i]; j++) ml_add_blocks(&made, o, at[i] + j * o->extent);
        made.size += o->size * lens[i];
        made.elems += o->elems * lens[i];
        next = at[i] + lens[i] * o->extent;
        if (next > end) end = next;
    }
    if (made.strided && made.nblocks < 0)
        ml_fatal("%s: a strided datatype of more than %d separate byte ranges", call, BLOCKS);
    made.extent = end;
    return ml_new_type(&made);
}

int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype old, MPI_Datatype *out) {
    return MPI_Type_create_hvector(count, blocklength, (MPI_Aint)stride * ml_type(old)->extent, old, out);
}

int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype old, MPI_Datatype *out) {
    if (count < 0 || blocklength < 0 || (stride < 0 && count > 1)) refuse("MPI_Type_vector", "a negative stride or count");
    int lens[count > 0 ? count : 1];
    long at[count > 0 ? count : 1];
    for (int i = 0; i < count; i++) lens[i] = blocklength, at[i] = i * stride;
    *out = blocks(count, lens, at, old, "MPI_Type_vector");
    return MPI_SUCCESS;
}

int MPI_Type_indexed(int count, const int lens[], const int displs[], MPI_Datatype old, MPI_Datatype *out) {
    long extent = ml_type(old)->extent, at[count > 0 ? count : 1];
    for (int i = 0; i < count; i++) at[i] = displs[i] * extent;
    if (count > 0 && at[0] != 0) refuse("MPI_Type_indexed", "a first block not at displacement 0");
    *out = blocks(count, lens, at, old, "MPI_Type_indexed");
    return MPI_SUCCESS;
}

int MPI_Type_create_indexed_block(int count, int blocklength, const int displs[], MPI_Datatype old,
                                  MPI_Datatype *out) {
    int lens[count > 0 ? count : 1];
    for (int i = 0; i < count; i++) lens[i] = blocklength;
    return MPI_Type_indexed(count, lens, displs, old, out);
}

/* A new extent for the same data: elements of it lie ``extent`` bytes apart (a struct's type resized
 * to sizeof the struct, a column's to one element). */
int MPI_Type_create_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *out) {
    dtype made = *ml_type(old);
    if (lb != 0) refuse("MPI_Type_create_resized", "a lower bound other than 0");
    long end = made.nblocks > 0 ? 0 : made.extent;
    for (int b = 0; b < made.nblocks; b++)
        if (made.off[b] + made.len[b] > end) end = made.off[b] + made.len[b];
    if (extent < end)
        ml_fatal("MPI_Type_create_resized to an extent of %ld bytes, within its data (%ld bytes): elements that "
                 "overlap are not supported by mutexlab's MPI", (long)extent, end);
    if (made.nblocks == 0 && extent != made.extent) ml_add_block(&made, 0, made.extent); /* its whole data */
    made.strided |= extent != made.extent;
    made.extent = extent;
    *out = ml_new_type(&made);
    return MPI_SUCCESS;
}
