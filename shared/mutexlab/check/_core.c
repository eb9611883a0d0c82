/* The compiled twin of check/core.py's PyCore: the plain depth-first (Tarjan) search over
 * integer worlds. Protocol code never runs here: every transition, sequence edit and holding
 * change the search has not met before is asked of the Python tables (core.Tables), which run
 * the production code once; the answer is remembered in the tables below.
 *
 * Invariants: a world is W = 2n + L + 1 int32s (process state ids, link ids, pending ids,
 * holdings id), as sim/world.py lays it out; its fingerprint is CPython's hash of the same
 * tuple of ints (same visited set, same counts as the Python search); the visited set keeps the
 * fingerprints alone (8 bytes a slot, 6 in compact parts, 3/4 full at most, grown a 256th at a
 * time: 8-16 bytes a world; the limits look at each growth before it happens) and a map fingerprint -> Tarjan
 * index holds the worlds on the Tarjan stack only (its growth, and its arrays', looked at alike). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include "_core_tables.h"

#define XXPRIME_1 11400714785074694791ULL
#define XXPRIME_2 14029467366897019727ULL
#define XXPRIME_5 2870177450012600261ULL
#define XXROTATE(x) (((x) << 31) | ((x) >> 33))

typedef struct { int64_t tidx, lab, low; uint64_t fp; int32_t nlab, pos, via[3], loop; } Frame;

typedef struct {
    PyObject_HEAD
    PyObject *tables;
    int n, L, W, P0, H, check;
    int32_t *link_to;
    Map trans, push, add, drop, hold, stack;  /* stack: fingerprint -> Tarjan index, while on it */
    KeySet seen;                              /* every visited fingerprint */
    Vec recs, pool;         /* a transition: state, holding id, offset, sends, schedules */
    Vec seqinfo, distinct;  /* a sequence id: tail, head, offset and count of its distinct items */
    Vec finished;           /* a state id: 1 finished, 0 not, -1 not asked yet */
    Vec frames, labels, tfp, tworld;
    long long states, transitions, depth, finals;
    int cycles;
    /* the reductions (_core_reduce.h): partial-order mode (0 off, 1 no bound, 2 a bound by pid,
     * 3 one reading the receiver) and normalisation flags; the sampler's calls and next due */
    int por, norm;
    long long calls, due, reduced, work, nothing;
    int32_t *into_off, *into, *link_of;  /* links into x: into[into_off[x]..into_off[x+1]) */
    Map vis, mayid, may, closures, low, reqlow, done, shifted, retired, linkid, linkshift;
    int64_t mayids, linkids;
    Vec owners, linkinfo, linkidx, rawbuf;
    /* the figures' search's dictionaries and interned parts, read by advance (_core_figures.h) */
    PyObject *f_sigs, *f_awaits, *f_edges, *f_known, *f_auxes, *f_keyof, *f_shown, *f_ids;
    struct LFrame *lf; /* the figures' loop's frames (_core_loop.h) */
    int lf_n, lf_cap;
} Core;

/* -- the tables, asked of Python on a miss -------------------------------------------------- */
static int64_t ask_int(Core *c, const char *name, long a, long b) {
    PyObject *got = PyObject_CallMethod(c->tables, name, "ll", a, b);
    if (!got) return EMPTY;
    long v = PyLong_AsLong(got);
    Py_DECREF(got);
    return (v == -1 && PyErr_Occurred()) ? EMPTY : v;
}

static inline int64_t edit(Core *c, Map *m, const char *name, int32_t q, int32_t e) {
    uint64_t key = ((uint64_t)(uint32_t)q << 32) | (uint32_t)e;
    int64_t got = map_get(m, key);
    if (got != EMPTY) return got;
    got = ask_int(c, name, q, e);
    if (got == EMPTY || map_put(m, key, got) < 0) return EMPTY;
    return got;
}

static int32_t *transition(Core *c, int32_t sid, int32_t code) {  /* its record, NULL: error */
    uint64_t key = ((uint64_t)(uint32_t)sid << 32) | (uint32_t)code;
    int64_t r = map_get(&c->trans, key);
    if (r == EMPTY) {
        PyObject *got = PyObject_CallMethod(c->tables, "trans", "ii", sid, code);
        if (!got) return NULL;
        PyObject *state, *sends, *scheds, *hid;
        if (!PyArg_ParseTuple(got, "OO!O!O", &state, &PyTuple_Type, &sends, &PyTuple_Type, &scheds, &hid)) {
            Py_DECREF(got); return NULL;
        }
        Py_ssize_t ns = PyTuple_GET_SIZE(sends), nc = PyTuple_GET_SIZE(scheds);
        if (vec_reserve(&c->recs, 5) < 0 || vec_reserve(&c->pool, ns + nc) < 0) { Py_DECREF(got); return NULL; }
        r = (int64_t)c->recs.size;
        int32_t *rec = &AT(c->recs, int32_t, r);
        rec[0] = (int32_t)PyLong_AsLong(state); rec[1] = (int32_t)PyLong_AsLong(hid);
        rec[2] = (int32_t)c->pool.size; rec[3] = (int32_t)(ns / 2); rec[4] = (int32_t)nc;
        for (Py_ssize_t k = 0; k < ns; k++) AT(c->pool, int32_t, c->pool.size++) = (int32_t)PyLong_AsLong(PyTuple_GET_ITEM(sends, k));
        for (Py_ssize_t k = 0; k < nc; k++) AT(c->pool, int32_t, c->pool.size++) = (int32_t)PyLong_AsLong(PyTuple_GET_ITEM(scheds, k));
        Py_DECREF(got);
        if (PyErr_Occurred()) return NULL;
        c->recs.size += 5;
        if (map_put(&c->trans, key, r) < 0) return NULL;
    }
    return &AT(c->recs, int32_t, r);
}

static int32_t *seqinfo(Core *c, int32_t q) {  /* tail, head, offset, count (of distinct items) */
    if ((size_t)q * 4 >= c->seqinfo.size) {
        size_t want = ((size_t)q + 1) * 4;
        if (vec_reserve(&c->seqinfo, want - c->seqinfo.size) < 0) return NULL;
        for (size_t k = c->seqinfo.size; k < want; k++) AT(c->seqinfo, int32_t, k) = -2;
        c->seqinfo.size = want;
    }
    int32_t *info = &AT(c->seqinfo, int32_t, (size_t)q * 4);
    if (info[0] == -2) {
        PyObject *got = PyObject_CallMethod(c->tables, "seq", "i", q), *items;
        long tail, head;
        if (!got) return NULL;
        if (!PyArg_ParseTuple(got, "llO!", &tail, &head, &PyTuple_Type, &items)) { Py_DECREF(got); return NULL; }
        Py_ssize_t k, m = PyTuple_GET_SIZE(items);
        if (vec_reserve(&c->distinct, m) < 0) { Py_DECREF(got); return NULL; }
        info = &AT(c->seqinfo, int32_t, (size_t)q * 4);
        info[0] = (int32_t)tail; info[1] = (int32_t)head; info[2] = (int32_t)c->distinct.size; info[3] = (int32_t)m;
        for (k = 0; k < m; k++) AT(c->distinct, int32_t, c->distinct.size++) = (int32_t)PyLong_AsLong(PyTuple_GET_ITEM(items, k));
        Py_DECREF(got);
        if (PyErr_Occurred()) return NULL;
    }
    return info;
}

static int is_finished(Core *c, int32_t sid) {  /* 1, 0, or -1 on an error */
    if ((size_t)sid >= c->finished.size) {
        if (vec_reserve(&c->finished, sid + 1 - c->finished.size) < 0) return -1;
        memset(c->finished.data + c->finished.size, 0xff, sid + 1 - c->finished.size);
        c->finished.size = sid + 1;
    }
    int8_t *f = &AT(c->finished, int8_t, sid);
    if (*f < 0) {
        PyObject *got = PyObject_CallMethod(c->tables, "finished", "i", sid);
        if (!got) return -1;
        *f = (int8_t)PyObject_IsTrue(got);
        Py_DECREF(got);
    }
    return *f;
}

/* One input taken in world ``w`` (edited in place): ``label`` a local decision or a link's oldest
 * message, its transition applied (its sends pushed, its pending set's additions, a holding change;
 * ``*over``: the resource overfilled). 1: taken; 0: the state refuses it (a finding); 2: a dead end
 * (a refusal: the handler left a state of no name, Tables.trans's -2); -1: an error is set. The
 * search loop and ``successor`` (_core_step.h) both step through here. */
static int take(Core *c, int32_t *w, const int32_t *label, int *over) {
    int n = c->n, P0 = c->P0, H = c->H, i, code;
    if (label[0]) {  /* a local decision */
        i = label[1];
        int64_t q = edit(c, &c->drop, "drop", w[P0 + i], label[2]);
        if (q == EMPTY) return -1;
        w[P0 + i] = (int32_t)q;
        code = 2 * label[2] + 1;
    } else {  /* the oldest message of a link */
        int32_t *info = seqinfo(c, w[n + label[1]]);
        if (!info) return -1;
        w[n + label[1]] = info[0];
        i = c->link_to[label[1]];
        code = 2 * label[2];
    }
    int32_t *t = transition(c, w[i], code);  /* stable until the next transition() */
    if (!t) return -1;
    if (t[0] == -2) return 2;
    if (t[0] < 0) return 0;
    w[i] = t[0];
    const int32_t *p = &AT(c->pool, int32_t, t[2]);
    for (int k = 0; k < t[3]; k++, p += 2) {
        int64_t q = edit(c, &c->push, "push", w[n + p[0]], p[1]);
        if (q == EMPTY) return -1;
        w[n + p[0]] = (int32_t)q;
    }
    for (int k = 0; k < t[4]; k++, p++) {
        int64_t q = edit(c, &c->add, "add", w[P0 + i], *p);
        if (q == EMPTY) return -1;
        w[P0 + i] = (int32_t)q;
    }
    *over = 0;
    if (t[1] >= 0) {  /* enters or exits: (holdings, holding id) -> 2 * holdings + overfull */
        int64_t h = edit(c, &c->hold, "hold", w[H], t[1]);
        if (h == EMPTY) return -1;
        w[H] = (int32_t)(h >> 1);
        *over = (int)(h & 1);
    }
    c->transitions++;
    return 1;
}

/* -- worlds ------------------------------------------------------------------------------------ */
static uint64_t fingerprint(const int32_t *w, int W) {  /* CPython's tuple hash of small ints */
    uint64_t acc = XXPRIME_5;
    for (int k = 0; k < W; k++) {
        acc += (uint64_t)w[k] * XXPRIME_2;
        acc = XXROTATE(acc);
        acc *= XXPRIME_1;
    }
    acc += (uint64_t)W ^ (XXPRIME_5 ^ 3527539ULL);
    return acc == (uint64_t)-1 ? 1546275796ULL : acc;
}

static PyObject *world_tuple(const int32_t *w, int W) {
    PyObject *t = PyTuple_New(W);
    for (int k = 0; t && k < W; k++) PyTuple_SET_ITEM(t, k, PyLong_FromLong(w[k]));
    return t;
}

#include "_core_reduce.h"

/* The labels of every step possible in ``w``, appended to c->labels (3 ints each): each link's
 * oldest message by link, then each process's distinct pending decisions in order — the order
 * of model.steps() on FIFO links without duplicates. Their count, or -1 on an error. */
static int32_t list_labels(Core *c, const int32_t *w) {
    int n = c->n;
    int32_t nlab = 0;
    for (int k = 0; k < c->L; k++) {
        int32_t q = w[n + k];
        if (!q) continue;
        int32_t *info = seqinfo(c, q);
        if (!info || vec_reserve(&c->labels, 3) < 0) return -1;
        int32_t *l = &AT(c->labels, int32_t, c->labels.size);
        l[0] = 0; l[1] = k; l[2] = info[1]; c->labels.size += 3; nlab++;
    }
    for (int i = 0; i < n; i++) {
        int32_t q = w[c->P0 + i];
        if (!q) continue;
        int32_t *info = seqinfo(c, q);
        if (!info || vec_reserve(&c->labels, 3 * (size_t)info[3]) < 0) return -1;
        for (int32_t a = 0; a < info[3]; a++) {
            int32_t *l = &AT(c->labels, int32_t, c->labels.size);
            l[0] = 1; l[1] = i; l[2] = AT(c->distinct, int32_t, info[2] + a); c->labels.size += 3; nlab++;
        }
    }
    return nlab;
}

static PyObject *label_tuple(const int32_t *l) { return Py_BuildValue("(iii)", l[0], l[1], l[2]); }

static PyObject *path(Core *c, size_t upto) {  /* the labels that led to frames[1..upto) */
    PyObject *out = PyList_New(0);
    for (size_t f = 1; out && f < upto; f++) {
        PyObject *l = label_tuple(AT(c->frames, Frame, f).via);
        if (!l || PyList_Append(out, l) < 0) { Py_XDECREF(l); Py_DECREF(out); return NULL; }
        Py_DECREF(l);
    }
    return out;
}

/* Enter world ``w`` (new): visited, Tarjan stack, its steps, a frame. 0, or -1 on an error. */
static int enter(Core *c, const int32_t *w, uint64_t fp, const int32_t *via, int64_t *counter) {
    int W = c->W;
    if (keyset_add(&c->seen, fp) < 0 || map_put(&c->stack, fp, *counter) < 0) return -1;
    c->states++;
    if (vec_reserve(&c->tfp, 1) < 0 || vec_reserve(&c->tworld, W) < 0 || vec_reserve(&c->frames, 1) < 0) return -1;
    AT(c->tfp, uint64_t, c->tfp.size) = fp;
    memcpy(&AT(c->tworld, int32_t, c->tworld.size), w, W * sizeof(int32_t));
    Frame *f = &AT(c->frames, Frame, c->frames.size);
    f->tidx = (int64_t)c->tfp.size++; c->tworld.size += W;
    f->fp = fp; f->lab = (int64_t)c->labels.size; f->pos = 0; f->loop = 0; f->low = (*counter)++;
    memcpy(f->via, via, sizeof f->via);
    int32_t nlab = list_labels(c, w);
    if (nlab < 0) return -1;
    if (c->por && nlab > 1 && ample(c, w, &AT(c->labels, int32_t, c->labels.size - 3 * (size_t)nlab), &nlab) < 0)
        return -1;
    f = &AT(c->frames, Frame, c->frames.size);  /* the arenas above may have moved */
    c->labels.size = (size_t)f->lab + 3 * (size_t)nlab;
    f->nlab = nlab;
    c->frames.size++;
    if ((long long)c->frames.size - 1 > c->depth) c->depth = (long long)c->frames.size - 1;
    return 0;
}

/* What ends the search, for the Python side: (code, world, label, path). Codes: 0 done,
 * 1 an edge finding (the step ``label`` from ``world``), 2 a world finding (the invariant, or a
 * dead end: Python tells which), 3 a component callback recorded a finding, 4 partial-order
 * reduction met a cycle of the reduced graph (the search starts again without it). */
static PyObject *ending(Core *c, int code, const int32_t *w, const int32_t *label, size_t upto) {
    PyObject *world = w ? world_tuple(w, c->W) : (Py_INCREF(Py_None), Py_None);
    PyObject *lab = label ? label_tuple(label) : (Py_INCREF(Py_None), Py_None);
    PyObject *p = path(c, upto);
    if (!world || !lab || !p) { Py_XDECREF(world); Py_XDECREF(lab); Py_XDECREF(p); return NULL; }
    return Py_BuildValue("(iNNN)", code, world, lab, p);
}

/* A new world's own checks: 1 a finding (ends the search), 0 none, -1 an error. */
static int world_checks(Core *c, const int32_t *w, int has_steps) {
    if (c->check) {
        PyObject *t = world_tuple(w, c->W), *got;
        if (!t) return -1;
        PyObject *name = PyUnicode_FromString("check");
        got = name ? PyObject_CallMethodOneArg(c->tables, name, t) : NULL;
        Py_XDECREF(name);
        Py_DECREF(t);
        if (!got) return -1;
        int bad = PyObject_IsTrue(got);
        Py_DECREF(got);
        if (bad) return bad;
    }
    if (has_steps) return 0;
    for (int i = 0; i < c->n; i++) {
        int done = is_finished(c, w[i]);
        if (done <= 0) return done < 0 ? -1 : 1;
    }
    c->finals++;
    return 0;
}


/* Ask the Python side to look at the limits: it raises LimitReached, or returns how many states
 * may be added before the next look. ``need``: the bytes the next insert allocates (a part of
 * the visited set growing), looked at before it; 0: none is due (``left`` unbounded). */
static int64_t look(Core *c, size_t need) {
    size_t left = need ? 0 : (size_t)1 << 40;
    PyObject *got = PyObject_CallMethod(c->tables, "look", "LLLnn", c->states, c->transitions, c->depth,
                                        (Py_ssize_t)left, (Py_ssize_t)need);
    if (!got) return -1;
    long stride = PyLong_AsLong(got);
    Py_DECREF(got);
    return (stride == -1 && PyErr_Occurred()) ? -1 : stride;
}

/* The bytes the next world's entry onto the Tarjan stack allocates at once, looked at before it
 * as a part of the visited set's growth is: the map of the stack's fingerprints doubling (its new
 * slots are written at once), or an array of the stack (fingerprints, worlds, frames) doubling.
 * With millions of worlds on the stack (one large component) each is a jump of hundreds of MB. */
static inline size_t vec_growth(const Vec *v, size_t more) {
    if (v->size + more <= v->cap) return 0;
    size_t cap = v->cap ? v->cap : 64;
    while (cap < v->size + more) cap *= 2;
    return cap * v->item;
}

static inline size_t stack_growth(Core *c) {
    return (map_room(&c->stack) ? 0 : c->stack.cap * 2 * sizeof(Slot)) + vec_growth(&c->tfp, 1) +
           vec_growth(&c->tworld, (size_t)c->W) + vec_growth(&c->frames, 1);
}

/* A non-trivial component closed: its worlds (the Tarjan stack from ``from``, top first) to the
 * Python liveness check, with the path to its root. 1: a finding was recorded, 0: none, -1: an error. */
static int component(Core *c, size_t from, const int32_t *via) {
    size_t count = c->tfp.size - from;
    PyObject *worlds = PyList_New((Py_ssize_t)count), *prefix = path(c, c->frames.size), *got;
    if (!worlds || !prefix) { Py_XDECREF(worlds); Py_XDECREF(prefix); return -1; }
    for (size_t k = 0; k < count; k++) {
        PyObject *t = world_tuple(&AT(c->tworld, int32_t, (c->tfp.size - 1 - k) * c->W), c->W);
        if (!t) { Py_DECREF(worlds); Py_DECREF(prefix); return -1; }
        PyList_SET_ITEM(worlds, (Py_ssize_t)k, t);
    }
    if (via[0] >= 0) {
        PyObject *l = label_tuple(via);
        if (!l || PyList_Append(prefix, l) < 0) { Py_XDECREF(l); Py_DECREF(worlds); Py_DECREF(prefix); return -1; }
        Py_DECREF(l);
    }
    got = PyObject_CallMethod(c->tables, "component", "NN", worlds, prefix);
    if (!got) return -1;
    int found = PyObject_IsTrue(got);
    Py_DECREF(got);
    return found;
}

static PyObject *Core_dfs(Core *c, PyObject *root) {
    int W = c->W;
    int32_t *w = PyMem_RawMalloc(W * sizeof(int32_t)), none[3] = {-1, -1, -1};
    int64_t counter = 0, next_look = 0;
    PyObject *out = NULL;
    if (!w) return PyErr_NoMemory();
    if (!PyTuple_Check(root) || PyTuple_GET_SIZE(root) != W) {
        PyErr_SetString(PyExc_ValueError, "root: not a world of this model");
        goto done;
    }
    for (int k = 0; k < W; k++) w[k] = (int32_t)PyLong_AsLong(PyTuple_GET_ITEM(root, k));
    if (PyErr_Occurred() || enter(c, w, fingerprint(w, W), none, &counter) < 0) goto done;
    int bad = world_checks(c, w, AT(c->frames, Frame, 0).nlab > 0);
    if (bad) { out = bad < 0 ? NULL : ending(c, 2, w, NULL, c->frames.size); goto done; }
    while (c->frames.size) {
        Frame *f = &AT(c->frames, Frame, c->frames.size - 1);
        if (f->pos < f->nlab) {  /* the frame's next step */
            int32_t label[3];
            memcpy(label, &AT(c->labels, int32_t, f->lab + 3 * (int64_t)f->pos), sizeof label);
            f->pos++;
            const int32_t *world = &AT(c->tworld, int32_t, f->tidx * W);
            memcpy(w, world, W * sizeof(int32_t));
            int over, taken = take(c, w, label, &over);
            if (taken < 0) goto done;
            if (taken == 2) continue;  /* a refused step: a dead end, the search goes on (core.py) */
            if (!taken) { out = ending(c, 1, world, label, c->frames.size); goto done; }
            if (c->norm && normal(c, w) < 0) goto done;
            if (over) { out = ending(c, 1, world, label, c->frames.size); goto done; }
            uint64_t fp = fingerprint(w, W);
            int64_t got = map_get(&c->stack, fp);
            if (got != EMPTY || keyset_has(&c->seen, fp)) {
                if (got != EMPTY) {  /* on the Tarjan stack */
                    if (c->por) { out = ending(c, 4, NULL, NULL, 0); goto done; }  /* a reduced cycle */
                    if (fp == f->fp) f->loop = 1;
                    else if (got < f->low) f->low = got;
                }
                continue;
            }
            size_t grows = keyset_growth(&c->seen, fp) + stack_growth(c);
            if (c->states >= next_look || grows) {
                int64_t stride = look(c, grows);
                if (stride < 0) goto done;
                next_look = c->states + stride;
            }
            if (enter(c, w, fp, label, &counter) < 0) goto done;
            bad = world_checks(c, w, AT(c->frames, Frame, c->frames.size - 1).nlab > 0);
            if (bad) { out = bad < 0 ? NULL : ending(c, 2, w, NULL, c->frames.size); goto done; }
            continue;
        }
        /* every successor done: close the frame */
        Frame closed = *f;
        c->frames.size--;
        c->labels.size = (size_t)closed.lab;
        if (c->frames.size && closed.low < AT(c->frames, Frame, c->frames.size - 1).low)
            AT(c->frames, Frame, c->frames.size - 1).low = closed.low;
        if (closed.low != map_get(&c->stack, closed.fp)) continue;
        size_t from = (size_t)closed.tidx;  /* its world and those above it: the component */
        for (size_t k = from; k < c->tfp.size; k++) map_del(&c->stack, AT(c->tfp, uint64_t, k));
        if (from == c->tfp.size - 1 && !closed.loop) {  /* a trivial component */
            c->tfp.size--; c->tworld.size -= W;
            continue;
        }
        c->cycles = 1;
        int found = component(c, from, closed.via);
        if (found < 0) goto done;
        c->tfp.size = from; c->tworld.size = from * W;
        if (found) { out = ending(c, 3, NULL, NULL, 0); goto done; }
    }
    out = ending(c, 0, NULL, NULL, 0);
done:
    PyMem_RawFree(w);
    return out;
}

static PyObject *Core_counts(Core *c, PyObject *unused) {
    return Py_BuildValue("(LLLLi)", c->states, c->transitions, c->depth, c->finals, c->cycles);
}

static PyObject *Core_reduce_counts(Core *c, PyObject *unused) {
    return Py_BuildValue("(LL)", c->calls, c->reduced);
}

static PyObject *Core_hash(Core *c, PyObject *world) {  /* the fingerprint, for the tests */
    if (!PyTuple_Check(world) || PyTuple_GET_SIZE(world) != c->W) {
        PyErr_SetString(PyExc_ValueError, "not a world of this model");
        return NULL;
    }
    int32_t w[4096];
    if (c->W > 4096) return PyErr_NoMemory();
    for (int k = 0; k < c->W; k++) w[k] = (int32_t)PyLong_AsLong(PyTuple_GET_ITEM(world, k));
    if (PyErr_Occurred()) return NULL;
    return PyLong_FromLongLong((long long)fingerprint(w, c->W));
}

#include "_core_step.h"
#include "_core_augment.h"
#include "_core_figures.h"
#include "_core_loop.h"

static void Core_dealloc(Core *c) {
    Map *maps[] = {&c->trans, &c->push, &c->add, &c->drop, &c->hold, &c->stack, &c->vis, &c->mayid, &c->may,
                   &c->closures, &c->low, &c->reqlow, &c->done, &c->shifted, &c->retired, &c->linkid, &c->linkshift};
    Vec *vecs[] = {&c->recs, &c->pool, &c->seqinfo, &c->distinct, &c->finished, &c->frames, &c->labels,
                   &c->tfp, &c->tworld, &c->owners, &c->linkinfo, &c->linkidx, &c->rawbuf};
    for (size_t k = 0; k < sizeof maps / sizeof *maps; k++) map_free(maps[k]);
    keyset_free(&c->seen);
    for (size_t k = 0; k < sizeof vecs / sizeof *vecs; k++) PyMem_RawFree(vecs[k]->data);
    PyMem_RawFree(c->link_to); PyMem_RawFree(c->into_off); PyMem_RawFree(c->into); PyMem_RawFree(c->link_of);
    Py_XDECREF(c->tables);
    Py_XDECREF(c->f_sigs); Py_XDECREF(c->f_awaits); Py_XDECREF(c->f_edges); Py_XDECREF(c->f_known);
    Py_XDECREF(c->f_auxes); Py_XDECREF(c->f_keyof); Py_XDECREF(c->f_shown); Py_XDECREF(c->f_ids);
    lframes_free(c);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

/* Core(tables, n, link_to, check[, por, into, link_of, norm, calls, due, work, nothing]): a
 * search over the worlds of n processes and the links ``link_to`` (link -> receiving process);
 * ``check``: ask tables.check of each new world; the rest: the reductions (_core_reduce.h). */
static int Core_init(Core *c, PyObject *args, PyObject *kwds) {
    PyObject *tables, *link_to, *into = NULL, *link_of = NULL;
    int n, check, por = 0, norm = 0;
    long long calls = 0, due = -1, work = 0, nothing = 0;
    if (!PyArg_ParseTuple(args, "OiO!p|iO!O!iLLLL", &tables, &n, &PyTuple_Type, &link_to, &check, &por,
                          &PyTuple_Type, &into, &PyTuple_Type, &link_of, &norm, &calls, &due, &work, &nothing))
        return -1;
    c->por = por; c->norm = norm; c->calls = calls; c->due = due; c->work = work; c->nothing = nothing;
    c->n = n; c->L = (int)PyTuple_GET_SIZE(link_to); c->P0 = n + c->L; c->H = 2 * n + c->L;
    c->W = c->H + 1; c->check = check;
    Py_INCREF(tables); c->tables = tables;
    c->link_to = PyMem_RawMalloc((c->L + 1) * sizeof(int32_t));
    if (!c->link_to) { PyErr_NoMemory(); return -1; }
    for (int k = 0; k < c->L; k++) c->link_to[k] = (int32_t)PyLong_AsLong(PyTuple_GET_ITEM(link_to, k));
    if (PyErr_Occurred()) return -1;
    Map *maps[] = {&c->trans, &c->push, &c->add, &c->drop, &c->hold, &c->stack};
    for (size_t k = 0; k < sizeof maps / sizeof *maps; k++)
        if (map_init(maps[k], 1024) < 0) return -1;
    if (keyset_init(&c->seen) < 0) return -1;
    c->recs.item = c->pool.item = c->seqinfo.item = c->distinct.item = c->labels.item = c->tworld.item = 4;
    c->finished.item = 1; c->frames.item = sizeof(Frame); c->tfp.item = 8;
    PyObject *none = PyTuple_New(0);
    if (!none) return -1;
    int ok = reduce_init(c, into ? into : none, link_of ? link_of : none);
    Py_DECREF(none);
    return ok;
}

static PyMethodDef Core_methods[] = {
    {"dfs", (PyCFunction)Core_dfs, METH_O, "Search depth-first from the root world: (code, world, label, path)."},
    {"counts", (PyCFunction)Core_counts, METH_NOARGS, "(states, transitions, depth, finals, cycles)"},
    {"reduce_counts", (PyCFunction)Core_reduce_counts, METH_NOARGS, "(the sampler's calls, worlds reduced)"},
    {"fingerprint", (PyCFunction)Core_hash, METH_O, "The fingerprint of a world (hash of its tuple)."},
    {"successor", (PyCFunction)Core_successor, METH_VARARGS, "successor(world, label): the world reached, or None."},
    {"steps", (PyCFunction)Core_steps, METH_O, "steps(world): the labels of every step possible, as model.steps()."},
    {"figures", (PyCFunction)Core_figures, METH_VARARGS, "figures(sigs, awaits, remembered, known, auxes, keyof): what advance reads."},
    {"tracking", (PyCFunction)Core_tracking, METH_VARARGS, "tracking(shown, ids): advance computes the steps augment.py can."},
    {"augmented", (PyCFunction)Core_augmented, METH_VARARGS, "augmented(aux, sig, sends, bits, i): augment.py's step, remembered, or None."},
    {"advance", (PyCFunction)Core_advance, METH_VARARGS, "advance(world, label, aux id): a step and its remembered lookups."},
    {"sampling", (PyCFunction)Core_sampling, METH_VARARGS, "sampling(calls, due): the sampler's count set."},
    {"climb", (PyCFunction)Core_climb, METH_VARARGS, "climb(root, aux, key, labels, interned, states, max, hooks): the figures' loop."},
    {"trail", (PyCFunction)Core_trail, METH_NOARGS, "trail(): the labels from the root to the world climbed now."},
    {NULL}
};

static PyTypeObject CoreType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "mutexlab.check._core.Core",
    .tp_basicsize = sizeof(Core),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The depth-first search over integer worlds, compiled (core.PyCore is its twin).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Core_init,
    .tp_dealloc = (destructor)Core_dealloc,
    .tp_methods = Core_methods,
};

static PyMethodDef module_methods[] = {
    {"tables_selftest", tables_selftest, METH_VARARGS, "tables_selftest(n, seed): the tables' self-test (tests)."},
    {NULL}
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_core", "check's compiled search loop", -1, module_methods};

PyMODINIT_FUNC PyInit__core(void) {
    if (PyType_Ready(&CoreType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&CoreType);
    if (PyModule_AddObject(m, "Core", (PyObject *)&CoreType) < 0) { Py_DECREF(&CoreType); Py_DECREF(m); return NULL; }
    /* core.py's INTERFACE: a build older than its source (a pull without a rebuild) is not used */
    if (PyModule_AddIntConstant(m, "INTERFACE", 9) < 0) { Py_DECREF(m); return NULL; }
    return m;
}
