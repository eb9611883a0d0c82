/* The reductions of the compiled search core, included once by _core.c after its Core struct:
 * partial-order reduction's persistent sets and the clock-shift normalisation of a world, the
 * compiled twin of core_reduce.Reducer (the algorithm, the order of the questions and the
 * caches are the same; core_reduce.py says why that order matters).
 *
 * Invariants: a closure is a bit set of processes (n <= 58), cached by (empty-link mask << 6 |
 * process) when no send bound is declared (L <= 57); every answer of the model is remembered by
 * the ids it was asked with; a key part that does not fit its 32 bits (a shift beyond 2^32) is
 * asked again, never cached under a truncated key. */
#ifndef MUTEXLAB_CORE_REDUCE_H
#define MUTEXLAB_CORE_REDUCE_H
#include <stdarg.h>

#define NORM 1
#define SHIFT 2
#define DEAD 4
#define RETIRED 8
#define KEY2(a, b) (((uint64_t)(uint32_t)(a) << 32) | (uint32_t)(b))

/* tables.name(*args) as an int64 (a bool is an int); EMPTY with an exception on an error */
static int64_t askv(Core *c, const char *name, const char *fmt, ...) {
    va_list va;
    va_start(va, fmt);
    PyObject *args = Py_VaBuildValue(fmt, va);
    va_end(va);
    if (!args) return EMPTY;
    PyObject *meth = PyObject_GetAttrString(c->tables, name), *got = NULL;
    if (meth) got = PyObject_CallObject(meth, args);
    Py_XDECREF(meth);
    Py_DECREF(args);
    if (!got) return EMPTY;
    long long v = PyLong_AsLongLong(got);
    Py_DECREF(got);
    return (v == -1 && PyErr_Occurred()) ? EMPTY : v;
}

/* -- partial-order reduction ------------------------------------------------------------------ */
static int visible(Core *c, const int32_t *w, const int32_t *l) {  /* 1, 0, -1 on an error */
    int32_t sid = l[0] ? w[l[1]] : w[c->link_to[l[1]]], code = l[0] ? 2 * l[2] + 1 : 2 * l[2];
    uint64_t key = KEY2(sid, code);
    int64_t got = map_get(&c->vis, key);
    if (got == EMPTY) {
        got = askv(c, "visible", "(ii)", sid, code);
        if (got == EMPTY || map_put(&c->vis, key, got != 0) < 0) return -1;
    }
    return got != 0;
}

static int64_t idof(Map *m, uint64_t key, int64_t *next) {  /* a small id for a 64-bit key */
    int64_t got = map_get(m, key);
    if (got == EMPTY) {
        got = (*next)++;
        if (map_put(m, key, got) < 0) return EMPTY;
    }
    return got;
}

static int may_send(Core *c, const int32_t *w, int q, int x) {  /* 1, 0, -1 on an error */
    if (c->por == 1) return 1;
    int n = c->n;
    int32_t back = w[n + c->link_of[x * n + q]], xkey = c->por == 3 ? w[x] : -1 - x;
    int64_t a = idof(&c->mayid, KEY2(w[q], w[c->P0 + q]), &c->mayids);
    int64_t b = idof(&c->mayid, KEY2(back, xkey) ^ (1ULL << 63), &c->mayids);  /* a second keyspace */
    if (a == EMPTY || b == EMPTY) return -1;
    uint64_t key = KEY2(a, b);
    int64_t got = map_get(&c->may, key);
    if (got == EMPTY) {
        PyObject *t = world_tuple(w, c->W);
        if (!t) return -1;
        got = askv(c, "may_send", "(Nii)", t, q, x);
        if (got == EMPTY || map_put(&c->may, key, got != 0) < 0) return -1;
    }
    return got != 0;
}

/* PartialOrder.closure: the members as a bit set; -2 past the work allowed; -1 on an error */
static int64_t closure(Core *c, const int32_t *w, int p, uint64_t mask, int64_t *spent) {
#ifdef MUTEXLAB_CORE_BROKEN_CLOSURE  /* tests only: the process alone, an unsound persistent set */
    return (int64_t)1 << p;
#endif
    uint64_t key = (mask << 6) | (uint64_t)p;
    if (c->por == 1) {
        int64_t got = map_get(&c->closures, key);
        if (got != EMPTY) return got;
    }
    int64_t members = (int64_t)1 << p;
    int todo[64], top = 0;
    todo[top++] = p;
    while (top) {
        int x = todo[--top];
        int32_t from = c->into_off[x], to = c->into_off[x + 1];
        *spent += (to - from) / 2;
        if (*spent > c->work) return -2;
        for (int32_t j = from; j < to; j += 2) {
            int k = c->into[j], q = c->into[j + 1];
            if (members >> q & 1 || mask >> k & 1) continue;
            int may = may_send(c, w, q, x);
            if (may < 0) return -1;
            if (may) { members |= (int64_t)1 << q; todo[top++] = q; }
        }
    }
    if (c->por == 1 && map_put(&c->closures, key, members) < 0) return -1;
    return members;
}

/* PartialOrder.ample: keep in ``labs`` (``*nlab`` of them) only the steps of the smallest
 * invisible persistent set of processes found; 0, or -1 on an error */
static int ample(Core *c, const int32_t *w, int32_t *labs, int32_t *nlab) {
    int nl = *nlab, np = 0, procs[64], count[64] = {0}, hidden[64], order[64];
    if (vec_reserve(&c->owners, nl) < 0) return -1;
    int32_t *owner = &AT(c->owners, int32_t, 0);
    for (int j = 0; j < nl; j++) {
        int o = labs[3 * j] ? labs[3 * j + 1] : c->link_to[labs[3 * j + 1]];
        owner[j] = o;
        if (!count[o]++) procs[np++] = o;
    }
    if (np < 2) return 0;
    for (int a = 0; a < np; a++) {  /* in order of first step, each up to its first visible one */
        int q = procs[a];
        hidden[q] = 1;
        for (int j = 0; j < nl && hidden[q]; j++) {
            if (owner[j] != q) continue;
            int v = visible(c, w, &labs[3 * j]);
            if (v < 0) return -1;
            if (v) hidden[q] = 0;
        }
    }
    uint64_t mask = 0;
    for (int k = 0; k < c->L; k++)
        if (w[c->n + k]) mask |= 1ULL << k;
    for (int a = 0; a < np; a++) {  /* a stable sort by the number of steps */
        int b = a;
        while (b > 0 && count[order[b - 1]] > count[procs[a]]) { order[b] = order[b - 1]; b--; }
        order[b] = procs[a];
    }
    int64_t spent = 0, best = 0, bestn = 0;
    for (int a = 0; a < np; a++) {
        int p = order[a];
        if (!hidden[p]) continue;
        int64_t members = closure(c, w, p, mask, &spent);
        if (members == -1) return -1;
        if (members == -2) return 0;  /* too dear to reduce this world: every enabled step */
        int bad = 0, chosen = 0;
        for (int b = 0; b < np; b++)
            if (members >> procs[b] & 1) { bad |= !hidden[procs[b]]; chosen += count[procs[b]]; }
        if (bad || chosen == nl || (best && chosen >= bestn)) continue;
        best = members; bestn = chosen;
        if (chosen == 1) break;
    }
    if (!best) return 0;
    c->reduced++;
    int kept = 0;
    for (int j = 0; j < nl; j++)
        if (best >> owner[j] & 1) { memmove(&labs[3 * kept], &labs[3 * j], 3 * sizeof(int32_t)); kept++; }
    *nlab = kept;
    return 0;
}

/* -- the clock shift --------------------------------------------------------------------------- */
static int64_t cached(Core *c, Map *m, uint64_t key, const char *name, const char *fmt, int64_t a, int64_t b, int64_t d) {
    int64_t got = map_get(m, key);
    if (got != EMPTY) return got;
    got = askv(c, name, fmt, a, b, d);
    if (got == EMPTY || map_put(m, key, got) < 0) return EMPTY;
    return got;
}

static int64_t shifted(Core *c, Map *m, const char *name, int i, int32_t sid, int64_t d) {
    if (d < 0 || d > 0xffffffffLL) return askv(c, name, "(iiL)", i, sid, (long long)d);
    return cached(c, m, KEY2(sid, d), name, "(LLL)", i, sid, d);
}

/* the link's (smallest live timestamp << 1 | any dead) for its receiver; *idx: its record */
static int64_t link_info(Core *c, int32_t q, int32_t receiver, int retired, int64_t *idx) {
    int64_t before = c->linkids;
    /* a receiver matters only to a declaration of dead messages */
    int32_t rkey = c->norm & DEAD ? receiver : -1;
    *idx = idof(&c->linkid, KEY2(q, rkey) ^ ((uint64_t)retired << 63), &c->linkids);
    if (*idx == EMPTY) return EMPTY;
    if (*idx < before) return AT(c->linkinfo, int64_t, *idx);
    PyObject *got = PyObject_CallMethod(c->tables, "link", "iii", q, receiver, retired);
    if (!got) return EMPTY;
    long long low;
    int dead;
    if (!PyArg_ParseTuple(got, "Lp", &low, &dead)) { Py_DECREF(got); return EMPTY; }
    Py_DECREF(got);
    if (vec_reserve(&c->linkinfo, 1) < 0) return EMPTY;
    return AT(c->linkinfo, int64_t, c->linkinfo.size++) = low * 2 + dead;
}

/* ClockShift of world ``w`` in place (unchanged when nothing is to shift); 0, -1 on an error */
static int shift(Core *c, int32_t *w) {
    int n = c->n, P0 = c->P0, retired = 0;
    int64_t d = c->nothing, got;
    if (c->norm & RETIRED) {
        retired = 1;
        for (int i = 0; i < n && retired; i++) {
            if ((got = cached(c, &c->done, KEY2(w[i], w[P0 + i]), "done", "(LL)", w[i], w[P0 + i], 0)) == EMPTY) return -1;
            retired = got != 0;
        }
    }
    for (int i = 0; i < n; i++) {
        Map *m = retired ? &c->reqlow : &c->low;
        if ((got = cached(c, m, (uint32_t)w[i], retired ? "req_low" : "low", "(L)", w[i], 0, 0)) == EMPTY) return -1;
        if (got < d) d = got;
    }
    if (!retired && d == 0 && !(c->norm & DEAD)) return 0;
    int dead = 0;
    int64_t *idx = &AT(c->linkidx, int64_t, 0);
    int32_t *recv = (int32_t *)&AT(c->linkidx, int64_t, c->L);
    for (int k = 0; k < c->L; k++) {
        int32_t q = w[n + k];
        recv[k] = w[c->link_to[k]];
        if (!q) continue;
        if ((got = link_info(c, q, recv[k], retired, &idx[k])) == EMPTY) return -1;
        if ((got >> 1) < d) d = got >> 1;
        dead |= (int)(got & 1);
    }
    if (d == c->nothing) d = 0;
    if (!(d || retired || dead)) return 0;
    if (retired || d)
        for (int i = 0; i < n; i++) {
            got = retired ? shifted(c, &c->retired, "retire", i, w[i], d) : shifted(c, &c->shifted, "shifted", i, w[i], d);
            if (got == EMPTY) return -1;
            w[i] = (int32_t)got;
        }
    for (int k = 0; k < c->L; k++) {
        int32_t q = w[n + k];
        if (!q) continue;
        uint64_t key = KEY2(idx[k], d);
        int fits = d >= 0 && d <= 0xffffffffLL;
        got = fits ? map_get(&c->linkshift, key) : EMPTY;
        if (got == EMPTY) {
            got = askv(c, "link_shift", "(iiLi)", q, recv[k], (long long)d, retired);
            if (got == EMPTY || (fits && map_put(&c->linkshift, key, got) < 0)) return -1;
        }
        w[n + k] = (int32_t)got;
    }
    return 0;
}

/* The model's normalisation of raw world ``w`` in place, counted and sampled as its sampler
 * would: 0, or -1 on an error (a sample's refusal included) */
static int normal(Core *c, int32_t *w) {
    int due = c->due >= 0 && c->calls + 1 >= c->due;
    int32_t *raw = &AT(c->rawbuf, int32_t, 0);
    if (due) memcpy(raw, w, c->W * sizeof(int32_t));
    if ((c->norm & SHIFT) && shift(c, w) < 0) return -1;
    c->calls++;
    if (!due) return 0;
    PyObject *a = world_tuple(raw, c->W), *b = world_tuple(w, c->W), *got;
    if (!a || !b) { Py_XDECREF(a); Py_XDECREF(b); return -1; }
    got = PyObject_CallMethod(c->tables, "sample", "NNL", a, b, c->calls);
    if (!got) return -1;
    long long calls, next;
    int ok = PyArg_ParseTuple(got, "LL", &calls, &next);
    Py_DECREF(got);
    if (!ok) return -1;
    c->calls = calls; c->due = next;
    return 0;
}
/* The reductions' arguments (core_reduce.ReduceTables.reduce_config): the links into each
 * process, the link x->q, the scratch the normalisation and the persistent sets use. */
static int reduce_init(Core *c, PyObject *into, PyObject *link_of) {
    int n = c->n;
    Py_ssize_t total = 0;
    if (c->por && PyTuple_GET_SIZE(into) != n) { PyErr_SetString(PyExc_ValueError, "into: one per process"); return -1; }
    for (Py_ssize_t x = 0; x < PyTuple_GET_SIZE(into); x++) {
        PyObject *links = PyTuple_GET_ITEM(into, x);
        if (!PyTuple_Check(links)) { PyErr_SetString(PyExc_TypeError, "into: tuples"); return -1; }
        total += PyTuple_GET_SIZE(links);
    }
    c->into_off = PyMem_RawCalloc(n + 1, sizeof(int32_t));
    c->into = PyMem_RawMalloc((total + 1) * sizeof(int32_t));
    c->link_of = PyMem_RawMalloc(((size_t)n * n + 1) * sizeof(int32_t));
    if (!c->into_off || !c->into || !c->link_of) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t x = 0, at = 0; x < PyTuple_GET_SIZE(into); x++) {
        PyObject *links = PyTuple_GET_ITEM(into, x);
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(links); j++) c->into[at++] = (int32_t)PyLong_AsLong(PyTuple_GET_ITEM(links, j));
        c->into_off[x + 1] = (int32_t)at;
    }
    for (Py_ssize_t j = 0; j < (Py_ssize_t)n * n && j < PyTuple_GET_SIZE(link_of); j++)
        c->link_of[j] = (int32_t)PyLong_AsLong(PyTuple_GET_ITEM(link_of, j));
    if (PyErr_Occurred()) return -1;
    if (c->por && (n > 58 || c->L > 57)) { PyErr_SetString(PyExc_ValueError, "too many processes or links"); return -1; }
    Map *maps[] = {&c->vis, &c->mayid, &c->may, &c->closures, &c->low, &c->reqlow, &c->done, &c->shifted,
                   &c->retired, &c->linkid, &c->linkshift};
    for (size_t k = 0; k < sizeof maps / sizeof *maps; k++)
        if (map_init(maps[k], 256) < 0) return -1;
    c->owners.item = c->rawbuf.item = 4; c->linkinfo.item = c->linkidx.item = 8;
    if (vec_reserve(&c->rawbuf, c->W) < 0 || vec_reserve(&c->linkidx, 2 * (size_t)c->L + 1) < 0) return -1;
    return 0;
}
#endif
