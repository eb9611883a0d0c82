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

static void huge(void *at, size_t bytes) {  /* a large table: fewer TLB misses on huge pages */
#ifdef MADV_HUGEPAGE
    if (bytes >= (4u << 20)) {
        uintptr_t from = ((uintptr_t)at + 4095) & ~(uintptr_t)4095;
        uintptr_t to = ((uintptr_t)at + bytes) & ~(uintptr_t)4095;
        if (to > from) madvise((void *)from, to - from, MADV_HUGEPAGE);  /* advice only */
    }
#endif
}

static int map_init(Map *m, size_t cap) {
    m->slots = PyMem_RawMalloc(cap * sizeof(Slot));
    if (!m->slots) { PyErr_NoMemory(); return -1; }
    huge(m->slots, cap * sizeof(Slot));
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

/* Remove ``key`` (backward-shift deletion: no tombstones, so count and room stay exact). */
static void map_del(Map *m, uint64_t key) {
    size_t mask = m->cap - 1, i = mix(key) & mask, j;
    while (m->slots[i].val != EMPTY && m->slots[i].key != key) i = (i + 1) & mask;
    if (m->slots[i].val == EMPTY) return;
    m->count--;
    for (j = (i + 1) & mask; m->slots[j].val != EMPTY; j = (j + 1) & mask) {
        size_t home = mix(m->slots[j].key) & mask;  /* j stays when its home lies in (i, j] */
        if (i <= j ? (i < home && home <= j) : (i < home || home <= j)) continue;
#ifdef MUTEXLAB_CORE_BROKEN_DELETE  /* the tests' broken build: a hole left in the chain */
        break;
#endif
        m->slots[i] = m->slots[j];
        i = j;
    }
    m->slots[i].val = EMPTY;
}

/* -- a set of 64-bit keys (the visited fingerprints): 8 bytes a slot, in SHARDS parts that each
 * grow by half when 3/4 full, so a growth copies 1/SHARDS of the set (no doubling of the whole
 * table at once) and the slots per key stay between 4/3 and 2. A part's slot: fastrange of the
 * mixed key's bits; its part: the low bits. Key 0 marks a free slot (a key 0 is a flag). ------ */
#define SHARDS 256
typedef struct { uint64_t *keys; size_t cap, count; } Part;
typedef struct { Part part[SHARDS]; size_t count, bytes; int zero; } KeySet;

static inline size_t part_home(const Part *p, uint64_t h) { return (size_t)(((__uint128_t)h * p->cap) >> 64); }

static int part_init(Part *p, size_t cap) {
    p->keys = PyMem_RawCalloc(cap, sizeof(uint64_t));
    if (!p->keys) { PyErr_NoMemory(); return -1; }
    huge(p->keys, cap * sizeof(uint64_t));
    p->cap = cap; p->count = 0;
    return 0;
}

static inline void part_place(Part *p, uint64_t key, uint64_t h) {  /* key not there, room known */
    size_t i = part_home(p, h);
    while (p->keys[i]) if (++i == p->cap) i = 0;
    p->keys[i] = key;
    p->count++;
}

static inline size_t part_room(const Part *p) { return p->cap / 4 * 3 - p->count; }

static int keyset_init(KeySet *s) {
    memset(s, 0, sizeof *s);
    for (int k = 0; k < SHARDS; k++)
        if (part_init(&s->part[k], 64) < 0) return -1;
    s->bytes = (size_t)SHARDS * 64 * sizeof(uint64_t);
    return 0;
}

static void keyset_free(KeySet *s) {
    for (int k = 0; k < SHARDS; k++) { PyMem_RawFree(s->part[k].keys); s->part[k].keys = NULL; }
}

static inline int keyset_has(const KeySet *s, uint64_t key) {
    if (!key) return s->zero;
    uint64_t h = mix(key);
    const Part *p = &s->part[h & (SHARDS - 1)];
    size_t i = part_home(p, h);
    for (uint64_t k; (k = p->keys[i]); ) {
        if (k == key) return 1;
        if (++i == p->cap) i = 0;
    }
    return 0;
}

static int keyset_add(KeySet *s, uint64_t key) {  /* a key not yet there; -1 on MemoryError */
    s->count++;
    if (!key) { s->zero = 1; return 0; }
    uint64_t h = mix(key);
    Part *p = &s->part[h & (SHARDS - 1)];
    if (!part_room(p)) {
        Part bigger;
        if (part_init(&bigger, p->cap + p->cap / 2) < 0) return -1;
        for (size_t i = 0; i < p->cap; i++)
            if (p->keys[i]) part_place(&bigger, p->keys[i], mix(p->keys[i]));
        s->bytes += (bigger.cap - p->cap) * sizeof(uint64_t);
        PyMem_RawFree(p->keys);
        *p = bigger;
    }
    part_place(p, key, h);
    return 0;
}

/* The bytes ``key``'s part allocates when the key goes in: 0, or its growth's (the limits look
 * at each growth before it happens: a few thousand looks in a whole search). */
static inline size_t keyset_growth(const KeySet *s, uint64_t key) {
    if (!key) return 0;
    const Part *p = &s->part[mix(key) & (SHARDS - 1)];
    return part_room(p) ? 0 : (p->cap + p->cap / 2) * sizeof(uint64_t);
}

/* tables_selftest(n, seed): the visited set and the map's deletion against what they must
 * hold, on n pseudo-random keys (a key 0 among them): True when every answer is right. */
static PyObject *tables_selftest(PyObject *mod, PyObject *args) {
    Py_ssize_t n; unsigned long long seed;
    if (!PyArg_ParseTuple(args, "nK", &n, &seed)) return NULL;
    KeySet set; Map m;
    if (keyset_init(&set) < 0) return NULL;
    if (map_init(&m, 1024) < 0) { keyset_free(&set); return NULL; }
    int ok = 1;
    for (Py_ssize_t k = 0; ok > 0 && k < n; k++) {  /* even keys in, odd keys out */
        uint64_t key = k ? mix(seed + (uint64_t)k) << 1 : 0;
        if (keyset_add(&set, key) < 0 || map_put(&m, key, k) < 0) ok = -1;
    }
    for (Py_ssize_t k = 0; ok > 0 && k < n; k++) {
        uint64_t key = k ? mix(seed + (uint64_t)k) << 1 : 0;
        ok = keyset_has(&set, key) && !keyset_has(&set, key | 1) && map_get(&m, key) == k;
    }
    for (Py_ssize_t k = 0; ok > 0 && k < n; k += 2) map_del(&m, k ? mix(seed + (uint64_t)k) << 1 : 0);
    for (Py_ssize_t k = 0; ok > 0 && k < n; k++) {  /* the odd-numbered keys stay, found */
        int64_t got = map_get(&m, k ? mix(seed + (uint64_t)k) << 1 : 0);
        ok = got == (k % 2 ? k : EMPTY);
    }
    if (ok > 0) ok = set.count == (size_t)n && m.count == (size_t)(n / 2);
    keyset_free(&set); map_free(&m);
    if (ok < 0) return NULL;
    return PyBool_FromLong(ok);
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
