/* The tables of the compiled search core (_core.c): an open-addressing map uint64 -> int64 and
 * a growable array. Plain C, no Python objects; an allocation failure sets MemoryError. */
#ifndef MUTEXLAB_CORE_TABLES_H
#define MUTEXLAB_CORE_TABLES_H
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define EMPTY INT64_MIN  /* a free slot's value */

/* -- an open-addressing map uint64 -> int64 (linear probing, never deletes; a key and its value
 * side by side: one cache line a probe) ---------------------------------------------------- */
typedef struct { uint64_t key; int64_t val; } Slot;
typedef struct { Slot *slots; size_t cap, count; } Map;

static inline uint64_t mix(uint64_t x) {
    x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ULL; x ^= x >> 27; x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static int map_init(Map *m, size_t cap) {
    m->slots = PyMem_RawMalloc(cap * sizeof(Slot));
    if (!m->slots) { PyErr_NoMemory(); return -1; }
#ifdef MADV_HUGEPAGE
    if (cap * sizeof(Slot) >= (4u << 20)) {  /* a large table: fewer TLB misses on huge pages */
        uintptr_t from = ((uintptr_t)m->slots + 4095) & ~(uintptr_t)4095;
        uintptr_t to = ((uintptr_t)m->slots + cap * sizeof(Slot)) & ~(uintptr_t)4095;
        if (to > from) madvise((void *)from, to - from, MADV_HUGEPAGE);  /* advice only */
    }
#endif
    for (size_t i = 0; i < cap; i++) m->slots[i].val = EMPTY;
    m->cap = cap; m->count = 0;
    return 0;
}

static void map_free(Map *m) { PyMem_RawFree(m->slots); m->slots = NULL; }

static inline int64_t *map_slot(Map *m, uint64_t key) {  /* the key's slot: its value or EMPTY */
    size_t mask = m->cap - 1, i = mix(key) & mask;
    while (m->slots[i].val != EMPTY && m->slots[i].key != key) i = (i + 1) & mask;
    m->slots[i].key = key;
    return &m->slots[i].val;
}

static int map_grow(Map *m) {
    Map bigger;
    if (map_init(&bigger, m->cap * 2) < 0) return -1;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].val != EMPTY) *map_slot(&bigger, m->slots[i].key) = m->slots[i].val;
    bigger.count = m->count;
    map_free(m);
    *m = bigger;
    return 0;
}

static inline size_t map_room(Map *m) { return m->cap / 3 * 2 - m->count; }  /* inserts left */

static int map_put(Map *m, uint64_t key, int64_t val) {
    if (map_room(m) == 0 && map_grow(m) < 0) return -1;
    int64_t *slot = map_slot(m, key);
    if (*slot == EMPTY) m->count++;
    *slot = val;
    return 0;
}

static inline int64_t map_get(Map *m, uint64_t key) {
    size_t mask = m->cap - 1, i = mix(key) & mask;
    while (m->slots[i].val != EMPTY) {
        if (m->slots[i].key == key) return m->slots[i].val;
        i = (i + 1) & mask;
    }
    return EMPTY;
}

/* -- a growable array of int32 or of fixed-size records -------------------------------------- */
typedef struct { char *data; size_t size, cap, item; } Vec;

static int vec_reserve(Vec *v, size_t more) {
    if (v->size + more <= v->cap) return 0;
    size_t cap = v->cap ? v->cap : 64;
    while (cap < v->size + more) cap *= 2;
    char *data = PyMem_RawRealloc(v->data, cap * v->item);
    if (!data) { PyErr_NoMemory(); return -1; }
    v->data = data; v->cap = cap;
    return 0;
}
#define AT(v, type, i) (((type *)(v).data)[i])

#endif
