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

/* -- a set of 64-bit keys (the visited fingerprints), in SHARDS parts that each grow by half when
 * 3/4 full, so a growth copies 1/SHARDS of the set (no doubling of the whole table at once) and
 * the slots per key stay between 4/3 and 2 (compact parts: see below). A key is kept as h = mix(key), a bijection (h is 0
 * only for key 0, a flag): its part is h's low bits, x = h >> 8 the rest (56 bits).
 * A part under compact_min slots keeps h whole, 8 bytes a slot (home: fastrange of h). A larger
 * part is compact (Cleary's compact hashing, lossless): x's home is x mod cap, and a 6-byte slot
 * keeps only the quotient x / cap (< 2^38, since cap >= 2^18) and the slot's distance d from
 * that home, + 1 (DBITS bits: a used slot is never 0). From a slot, home = slot - d and
 * x = quotient * cap + home: every bit of the key is kept, in 6 bytes instead of 8, so the
 * answers are those of a set of whole 64-bit keys. A compact part fills to 4/5 and grows by a
 * quarter (slots per key between 1.25 and 1.56: the largest searches are the compact ones, and
 * the last growth that fits the memory limit comes closer to it). A key that would land past
 * DMAX from its home grows its part first (linear probing at 4/5 full: the farthest distance in
 * a part of 2.4 million slots was 232-335 in 3 trials, against DMAX 1,022). ------------------ */
#define SHARDS 256
#define COMPACT_MIN ((size_t)1 << 18)   /* 2^56 / 2^18 = 2^38: the quotient fits DBITS below it */
#define DBITS 10
#define DMAX ((1u << DBITS) - 2)        /* the farthest distance a slot can say */
static size_t compact_min = COMPACT_MIN;  /* lowered only by tables_selftest, for a while */
typedef struct { uint64_t *keys; uint8_t *packed; size_t cap, count; } Part;
typedef struct { Part part[SHARDS]; size_t count, bytes; int zero; } KeySet;

static inline uint64_t ld48(const uint8_t *b, size_t i) {
    uint32_t lo; uint16_t hi;
    memcpy(&lo, b + 6 * i, 4); memcpy(&hi, b + 6 * i + 4, 2);
    return (uint64_t)lo | (uint64_t)hi << 32;
}
static inline void st48(uint8_t *b, size_t i, uint64_t v) {
    uint32_t lo = (uint32_t)v; uint16_t hi = (uint16_t)(v >> 32);
    memcpy(b + 6 * i, &lo, 4); memcpy(b + 6 * i + 4, &hi, 2);
}

static inline size_t part_bytes(size_t cap) { return cap * (cap >= compact_min ? 6 : sizeof(uint64_t)); }
static inline size_t part_home(const Part *p, uint64_t h) { return (size_t)(((__uint128_t)h * p->cap) >> 64); }

static int part_init(Part *p, size_t cap) {
    p->keys = NULL; p->packed = NULL;
    void *at = PyMem_RawCalloc(part_bytes(cap), 1);
    if (!at) { PyErr_NoMemory(); return -1; }
    huge(at, part_bytes(cap));
    if (cap >= compact_min) p->packed = at; else p->keys = at;
    p->cap = cap; p->count = 0;
    return 0;
}

static void part_free(Part *p) { PyMem_RawFree(p->keys ? (void *)p->keys : (void *)p->packed); p->keys = NULL; p->packed = NULL; }

/* Place h (not there; room known): 0, or 1 when a compact part would put it past DMAX. */
static inline int part_place(Part *p, uint64_t h) {
    if (!p->packed) {
        size_t i = part_home(p, h);
        while (p->keys[i]) if (++i == p->cap) i = 0;
        p->keys[i] = h;
        p->count++;
        return 0;
    }
    uint64_t x = h >> 8, q = x / p->cap;
    size_t i = (size_t)(x % p->cap);
    for (uint64_t d = 0; d <= DMAX; d++) {
        if (!ld48(p->packed, i)) { st48(p->packed, i, q << DBITS | (d + 1)); p->count++; return 0; }
        if (++i == p->cap) i = 0;
    }
    return 1;
}

static inline int part_has(const Part *p, uint64_t h) {
    if (!p->packed) {
        size_t i = part_home(p, h);
        for (uint64_t k; (k = p->keys[i]); ) {
            if (k == h) return 1;
            if (++i == p->cap) i = 0;
        }
        return 0;
    }
    uint64_t x = h >> 8, q = x / p->cap, s;
    size_t i = (size_t)(x % p->cap);
    for (uint64_t d = 0; d <= DMAX && (s = ld48(p->packed, i)); d++) {
        if (s == (q << DBITS | (d + 1))) return 1;
        if (++i == p->cap) i = 0;
    }
    return 0;
}

/* The key h of part k's slot i, or 0 when the slot is free. */
static inline uint64_t part_at(const Part *p, int k, size_t i) {
    if (!p->packed) return p->keys[i];
    uint64_t s = ld48(p->packed, i);
    if (!s) return 0;
    size_t d = (size_t)(s & ((1u << DBITS) - 1)) - 1;
#ifdef MUTEXLAB_CORE_BROKEN_COMPACT  /* the tests' broken build: the distance forgotten */
    d = 0;
#endif
    size_t home = (i + p->cap - d) % p->cap;
    return ((s >> DBITS) * p->cap + home) << 8 | (uint64_t)k;
}

static inline size_t part_room(const Part *p) {
    return (p->packed ? p->cap / 5 * 4 : p->cap / 4 * 3) - p->count;
}
/* The slots of a part's next growth from ``cap`` slots (compact: by a quarter, else by half). */
static inline size_t part_next(size_t cap) { return cap + (cap >= compact_min ? cap / 4 : cap / 2); }

/* Part k moved to ``cap`` slots (more again while a key lands past DMAX); -1 on MemoryError. */
static int part_grow(KeySet *s, int k, size_t cap) {
    Part *p = &s->part[k], bigger;
    for (int placed = 0; !placed; cap = part_next(cap)) {
        if (part_init(&bigger, cap) < 0) return -1;
        placed = 1;
        for (size_t i = 0; placed && i < p->cap; i++) {
            uint64_t h = part_at(p, k, i);
            if (h && part_place(&bigger, h)) placed = 0;
        }
        if (!placed) part_free(&bigger);
    }
    s->bytes += part_bytes(bigger.cap) - part_bytes(p->cap);
    part_free(p);
    *p = bigger;
    return 0;
}

static int keyset_init(KeySet *s) {
    memset(s, 0, sizeof *s);
    for (int k = 0; k < SHARDS; k++)
        if (part_init(&s->part[k], 64) < 0) return -1;
    s->bytes = (size_t)SHARDS * part_bytes(64);
    return 0;
}

static void keyset_free(KeySet *s) {
    for (int k = 0; k < SHARDS; k++) part_free(&s->part[k]);
}

static inline int keyset_has(const KeySet *s, uint64_t key) {
    if (!key) return s->zero;
    uint64_t h = mix(key);
    return part_has(&s->part[h & (SHARDS - 1)], h);
}

static int keyset_add(KeySet *s, uint64_t key) {  /* a key not yet there; -1 on MemoryError */
    s->count++;
    if (!key) { s->zero = 1; return 0; }
    uint64_t h = mix(key);
    int k = (int)(h & (SHARDS - 1));
    Part *p = &s->part[k];
    if (!part_room(p) && part_grow(s, k, part_next(p->cap)) < 0) return -1;
    while (part_place(p, h))  /* past DMAX: rare, not foreseen by keyset_growth */
        if (part_grow(s, k, part_next(p->cap)) < 0) return -1;
    return 0;
}

/* The bytes ``key``'s part allocates when the key goes in: 0, or its growth's (the limits look
 * at each growth before it happens: a few thousand looks in a whole search). */
static inline size_t keyset_growth(const KeySet *s, uint64_t key) {
    if (!key) return 0;
    const Part *p = &s->part[mix(key) & (SHARDS - 1)];
    return part_room(p) ? 0 : part_bytes(part_next(p->cap));
}

/* mix's inverse (the self-test builds keys of chosen mixed bits with it). */
static uint64_t unshift(uint64_t x, int by) {
    uint64_t y = x;
    for (int i = 0; i < 64 / by + 1; i++) y = x ^ (y >> by);
    return y;
}
static uint64_t odd_inverse(uint64_t c) {  /* c * it = 1 mod 2^64, c odd (Newton) */
    uint64_t v = c;
    for (int i = 0; i < 6; i++) v *= 2 - c * v;
    return v;
}
static uint64_t unmix(uint64_t h) {
    h = unshift(h, 31) * odd_inverse(0x94d049bb133111ebULL);
    h = unshift(h, 27) * odd_inverse(0xbf58476d1ce4e5b9ULL);
    return unshift(h, 30);
}

/* The self-test's k-th key: keys in (k even) and out (k odd) of the set. With ``small`` parts
 * compact from ``small`` slots on, the mixed key's x stays below 2^38 * small (the quotient's
 * bound there). */
static uint64_t test_key(uint64_t seed, Py_ssize_t k, size_t small) {
    if (!k) return 0;
    uint64_t h = mix(seed + (uint64_t)k);
    if (small) {
        int bits = 8 + 38;
        while (((size_t)1 << (bits - 46)) < small) bits++;
        h &= ((uint64_t)1 << bits) - 1;
        if (!h) h = 1 << 8;
    }
    return unmix(h);
}

/* tables_selftest(n, seed[, compact_from]): the visited set and the map's deletion against what
 * they must hold, on n pseudo-random keys (a key 0 among them) and n others left out; with
 * ``compact_from`` (a power of two, at least 64), the visited set's parts compact from that
 * many slots on (else from COMPACT_MIN: over 50 million keys). True when every answer is right
 * and every part's growth was the one keyset_growth foresaw. */
static PyObject *tables_selftest(PyObject *mod, PyObject *args) {
    Py_ssize_t n; unsigned long long seed; Py_ssize_t small = 0;
    if (!PyArg_ParseTuple(args, "nK|n", &n, &seed, &small)) return NULL;
    if (small && (small < 64 || (small & (small - 1)))) {
        PyErr_SetString(PyExc_ValueError, "compact_from: a power of two, at least 64");
        return NULL;
    }
    for (uint64_t k = 1; k < 1000; k++)  /* the inverse first: the keys rest on it */
        if (unmix(mix(seed * 7919 + k)) != seed * 7919 + k) Py_RETURN_FALSE;
    compact_min = small ? (size_t)small : COMPACT_MIN;
    KeySet set; Map m;
    int ok = 1;
    if (keyset_init(&set) < 0) { compact_min = COMPACT_MIN; return NULL; }
    if (map_init(&m, 1024) < 0) { keyset_free(&set); compact_min = COMPACT_MIN; return NULL; }
    for (Py_ssize_t k = 0; ok > 0 && k < n; k++) {
        uint64_t key = test_key(seed, 2 * k, (size_t)small);
        const Part *p = key ? &set.part[mix(key) & (SHARDS - 1)] : NULL;
        size_t foreseen = keyset_growth(&set, key), cap = p ? p->cap : 0;
        if (keyset_add(&set, key) < 0 || map_put(&m, key, k) < 0) ok = -1;
        /* the growth --max-memory foresees is the one made (a part past DMAX may grow more) */
        else if (p && (foreseen ? part_bytes(p->cap) < foreseen : p->cap != cap)) ok = 0;
    }
    for (Py_ssize_t k = 0; ok > 0 && k < n; k++)
        ok = keyset_has(&set, test_key(seed, 2 * k, (size_t)small))
             && !keyset_has(&set, test_key(seed, 2 * k + 1, (size_t)small))
             && map_get(&m, test_key(seed, 2 * k, (size_t)small)) == k;
    for (Py_ssize_t k = 0; ok > 0 && k < n; k += 2) map_del(&m, test_key(seed, 2 * k, (size_t)small));
    for (Py_ssize_t k = 0; ok > 0 && k < n; k++) {  /* the odd-numbered keys stay, found */
        int64_t got = map_get(&m, test_key(seed, 2 * k, (size_t)small));
        ok = got == (k % 2 ? k : EMPTY);
    }
    size_t bytes = 0;
    for (int k = 0; k < SHARDS; k++) bytes += part_bytes(set.part[k].cap);
    if (ok > 0) ok = set.count == (size_t)n && m.count == (size_t)(n / 2) && bytes == set.bytes;
    if (ok > 0 && small) {  /* the set did go compact */
        int compact = 0;
        for (int k = 0; k < SHARDS; k++) compact += set.part[k].packed != NULL;
        ok = n < 2 * SHARDS * small || compact > 0;
    }
    keyset_free(&set); map_free(&m);
    compact_min = COMPACT_MIN;
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
