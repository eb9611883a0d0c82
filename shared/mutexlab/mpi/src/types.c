/* Datatypes of mutexlab's MPI: the predefined ones, MPI_Type_contiguous and MPI_Type_create_struct
 * as maps of byte ranges, and the bytes a message of them carries (ml_pack: the map's ranges, the
 * gaps zero, so a send is the same every run); MPI_Pack and MPI_Unpack. A datatype is an index into
 * ``types``, made and freed under the library's lock. The strided ones (MPI_Type_vector,
 * MPI_Type_indexed and MPI_Type_create_resized that leave gaps between their elements' data:
 * stride.c) send their map's bytes alone, one after another, and a receive of one puts them back
 * where its map says, leaving the gaps of the buffer as they were, as MPI does. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define TYPES 1024
static dtype types[TYPES];


void ml_types_init(void) {
    static const long sizes[] = {0, 1, 1, 1, 1, sizeof(short), sizeof(short), sizeof(int), sizeof(int),
                                 sizeof(long), sizeof(long), sizeof(long long), sizeof(long long),
                                 sizeof(float), sizeof(double), sizeof(long double), 1, 1, 2, 4, 8, 1, 2,
                                 4, 8, sizeof(MPI_Aint), 4, 1};
    for (int i = 1; i < (int)(sizeof sizes / sizeof *sizes); i++) {
        types[i].size = types[i].extent = sizes[i];
        types[i].align = sizes[i] > 16 ? 16 : sizes[i];
        types[i].elems = 1;
        types[i].used = 1;
    }
    long size[2], extent[2], align[2], data[2];
    ml_loc_types(size, extent, align, data);
    for (int i = 0; i < 2; i++) { /* MPI_2INT, MPI_DOUBLE_INT: two elements each */
        dtype *t = &types[MPI_2INT + i];
        *t = (dtype){.size = size[i], .extent = extent[i], .align = align[i], .elems = 2, .used = 1};
        ml_add_block(t, 0, data[i]);
    }
}

dtype *ml_type(MPI_Datatype t) {
    if (t <= 0 || t >= TYPES || !types[t].used) {
        ml_fatal("datatype %d is not a datatype mutexlab's MPI knows (predefined, or made by one of the MPI_Type_ "
              "constructors)", t);
    }
    return &types[t];
}

void ml_add_block(dtype *t, long off, long len) { /* the map's byte ranges, merged */
    if (t->nblocks < 0 || len <= 0) return;
    if (t->nblocks > 0 && t->off[t->nblocks - 1] + t->len[t->nblocks - 1] == off) {
        t->len[t->nblocks - 1] += len;
    } else if (t->nblocks == BLOCKS) {
        t->nblocks = -1; /* too many: the whole extent */
    } else {
        t->off[t->nblocks] = off;
        t->len[t->nblocks++] = len;
    }
}

void ml_add_blocks(dtype *t, const dtype *old, long at) {
    if (old->nblocks <= 0) {
        ml_add_block(t, at, old->nblocks == 0 ? old->extent : 0);
        if (old->nblocks < 0) t->nblocks = -1;
        return;
    }
    for (int b = 0; b < old->nblocks; b++) ml_add_block(t, at + old->off[b], old->len[b]);
}

int ml_new_type(const dtype *made) {
    ml_lock();
    for (int i = 1; i < TYPES; i++)
        if (!types[i].used) {
            types[i] = *made;
            types[i].used = 1;
            if (types[i].align < 1) types[i].align = 1;
            if (types[i].nblocks < 0) types[i].nblocks = 0;
            ml_unlock();
            return i;
        }
    ml_unlock();
    ml_fatal("more than %d datatypes at once", TYPES);
    return 0;
}

/* The bytes a message of ``count`` elements carries: the type map's ranges of each element, the
 * gaps between them (a struct's padding) zero, so that a send is the same every run. */
static long packed_size(const dtype *t);
static void copy_packed(unsigned char *packed, unsigned char *data, int count, const dtype *t, int out);

static unsigned char *pack(const void *buf, int count, const dtype *t, long *bytes) {
    *bytes = t->strided ? packed_size(t) * count : t->extent * count;
    if (t->strided) { /* its map's bytes alone */
        unsigned char *out = calloc(1, (size_t)*bytes + 1);
        if (out) copy_packed(out, (unsigned char *)buf, count, t, 1);
        return out;
    }
    unsigned char *out = calloc(1, (size_t)*bytes + 1);
    if (!out) return NULL;
    for (int k = 0; k < count; k++) {
        if (t->nblocks == 0) {
            memcpy(out + k * t->extent, (const char *)buf + k * t->extent, (size_t)t->extent);
            continue;
        }
        for (int b = 0; b < t->nblocks; b++)
            memcpy(out + k * t->extent + t->off[b], (const char *)buf + k * t->extent + t->off[b], (size_t)t->len[b]);
    }
    return out;
}

int MPI_Type_contiguous(int count, MPI_Datatype old, MPI_Datatype *out) {
    dtype *o = ml_type(old), t = {o->size * count, o->extent * count, o->align, o->elems * count, 1, 0, o->strided, {0}, {0}};
    for (int i = 0; i < count; i++) ml_add_blocks(&t, o, i * o->extent);
    *out = ml_new_type(&t);
    return MPI_SUCCESS;
}

int MPI_Type_create_struct(int count, const int lens[], const MPI_Aint disps[], const MPI_Datatype ts[],
                           MPI_Datatype *out) {
    dtype made = {0, 0, 1, 0, 1, 0, 0, {0}, {0}};
    long end = 0;
    for (int i = 0; i < count; i++) {
        dtype *t = ml_type(ts[i]);
        made.size += t->size * lens[i];
        made.elems += t->elems * lens[i];
        if (disps[i] + t->extent * lens[i] > end) end = disps[i] + t->extent * lens[i];
        if (t->align > made.align) made.align = t->align;
        made.strided |= t->strided;
        for (int j = 0; j < lens[i]; j++) ml_add_blocks(&made, t, disps[i] + j * t->extent);
    }
    made.extent = (end + made.align - 1) / made.align * made.align; /* as the C compiler pads a struct */
    *out = ml_new_type(&made);
    return MPI_SUCCESS;
}

int MPI_Type_commit(MPI_Datatype *t) {
    ml_type(*t);
    return MPI_SUCCESS;
}

int MPI_Type_free(MPI_Datatype *t) {
    ml_type(*t);
    if (*t > MPI_DOUBLE_INT) types[*t].used = 0;
    *t = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}

int MPI_Type_size(MPI_Datatype t, int *size) {
    *size = (int)ml_type(t)->size;
    return MPI_SUCCESS;
}

int MPI_Get_address(const void *location, MPI_Aint *address) {
    *address = (MPI_Aint)location;
    return MPI_SUCCESS;
}

/* MPI_Pack/MPI_Unpack: the type map's bytes of each element, one after another (a struct's padding
 * left out, as MPI does); MPI_PACKED is a type of one byte. */
static long packed_size(const dtype *t) {
    if (t->nblocks == 0) return t->extent;
    long n = 0;
    for (int b = 0; b < t->nblocks; b++) n += t->len[b];
    return n;
}

static void copy_packed(unsigned char *packed, unsigned char *data, int count, const dtype *t, int out) {
    for (int k = 0; k < count; k++) {
        unsigned char *elem = data + k * t->extent;
        int nb = t->nblocks == 0 ? 1 : t->nblocks;
        for (int b = 0; b < nb; b++) {
            long off = t->nblocks == 0 ? 0 : t->off[b], len = t->nblocks == 0 ? t->extent : t->len[b];
            if (out)
                memcpy(packed, elem + off, (size_t)len);
            else
                memcpy(elem + off, packed, (size_t)len);
            packed += len;
        }
    }
}

int MPI_Pack_size(int incount, MPI_Datatype type, MPI_Comm comm, int *size) {
    ml_comm(comm, "MPI_Pack_size");
    *size = (int)(incount * packed_size(ml_type(type)));
    return MPI_SUCCESS;
}

int MPI_Pack(const void *inbuf, int incount, MPI_Datatype type, void *outbuf, int outsize, int *position,
             MPI_Comm comm) {
    ml_comm(comm, "MPI_Pack");
    dtype *t = ml_type(type);
    long n = incount * packed_size(t);
    if (*position < 0 || *position + n > outsize) {
        ml_fatal("MPI_Pack of %ld bytes at position %d overflows its buffer of %d bytes", n, *position, outsize);
    }
    copy_packed((unsigned char *)outbuf + *position, (unsigned char *)inbuf, incount, t, 1);
    *position += (int)n;
    return MPI_SUCCESS;
}

int MPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount, MPI_Datatype type,
               MPI_Comm comm) {
    ml_comm(comm, "MPI_Unpack");
    dtype *t = ml_type(type);
    long n = outcount * packed_size(t);
    if (*position < 0 || *position + n > insize) {
        ml_fatal("MPI_Unpack of %ld bytes at position %d reads past its buffer of %d bytes", n, *position, insize);
    }
    copy_packed((unsigned char *)inbuf + *position, outbuf, outcount, t, 0);
    *position += (int)n;
    return MPI_SUCCESS;
}


unsigned char *ml_pack(const void *buf, int count, MPI_Datatype type, long *bytes, const char *call) {
    unsigned char *packed = pack(buf, count, ml_type(type), bytes);
    if (!packed) {
        ml_fatal("%s: out of memory", call);
    }
    return packed;
}

long ml_extent(MPI_Datatype type) {
    dtype *t = ml_type(type);
    if (t->strided)
        ml_fatal("a collective of a strided datatype (MPI_Type_vector, MPI_Type_indexed or MPI_Type_create_resized "
                 "with gaps between its data, %d) is not supported by mutexlab's MPI", type);
    return t->extent;
}

/* A point-to-point receive of ``count`` of ``type``: the bytes it takes, and where they go. */
long ml_room(int count, MPI_Datatype type) {
    dtype *t = ml_type(type);
    return count * (t->strided ? packed_size(t) : t->extent);
}

void ml_unpack(void *buf, const unsigned char *data, long n, MPI_Datatype type) {
    dtype *t = type ? ml_type(type) : NULL;
    if (!t || !t->strided) {
        memcpy(buf, data, (size_t)n);
        return;
    }
    long unit = packed_size(t), whole = n / unit;
    copy_packed((unsigned char *)data, buf, (int)whole, t, 0);
    data += whole * unit, n -= whole * unit; /* a message ending within an element: its first blocks */
    for (int b = 0; b < t->nblocks && n > 0; b++) {
        long len = t->len[b] < n ? t->len[b] : n;
        memcpy((char *)buf + whole * t->extent + t->off[b], data, (size_t)len);
        data += len, n -= len;
    }
}

int MPI_Type_get_extent(MPI_Datatype type, MPI_Aint *lb, MPI_Aint *extent) {
    *lb = 0;
    *extent = ml_type(type)->extent;
    return MPI_SUCCESS;
}

/* The basic elements received: whole elements of ``type`` times the basic elements of each; a
 * message that ends within an element of a derived type stops the test, naming it. */
int MPI_Get_elements(const MPI_Status *status, MPI_Datatype type, int *count) {
    dtype *t = ml_type(type);
    long unit = t->strided ? packed_size(t) : t->extent;
    long whole = unit ? status->mutexlab_bytes / unit : 0, rest = unit ? status->mutexlab_bytes % unit : 0;
    if (rest && t->elems > 1)
        ml_fatal("MPI_Get_elements of a message of %ld bytes, which ends within an element of datatype %d (%ld "
                 "bytes): mutexlab's MPI counts whole elements", status->mutexlab_bytes, type, t->extent);
    *count = rest ? MPI_UNDEFINED : (int)(whole * t->elems);
    return MPI_SUCCESS;
}

MPI_Aint MPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) { return addr1 - addr2; }
MPI_Aint MPI_Aint_add(MPI_Aint base, MPI_Aint disp) { return base + disp; }
