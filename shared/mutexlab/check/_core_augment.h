/* The augmented steps of ``check --metrics`` computed in C when ``advance`` (_core_figures.h)
 * finds one not remembered yet: what charges.py's ``Tracker.step`` and edges.py's ``Edges.step``
 * make of it (the augmented successor interned, moved, the figures reached, the bypass plan),
 * remembered in the search's own dictionary as ``Edges.step`` remembers it, without calling back
 * into Python: deliveries (their hop counts merged), requests, entries and exits alike. Left to
 * the Tracker (None): a signature that is not edges.py's, a kind id past AUG_MAX_KIND, hop counts
 * of more than AUG_MAX_HOPS kinds. check/augment.py is the pure-Python twin, line for line;
 * tests/test_check_augment.py holds both to the Tracker's steps. Included by _core.c. */
#ifndef MUTEXLAB_CORE_AUGMENT_H
#define MUTEXLAB_CORE_AUGMENT_H

#define AUG_NONE (-1)                 /* charges.NONE */
#define AUG_NEG (-((long long)1 << 40)) /* edges.NEG */

/* tracking(shown, ids): edges.py's signature id -> what it shows, and interned aux -> aux id;
 * from then on advance computes the steps augment.py can. tracking(None, None) stops it. */
static PyObject *Core_tracking(Core *c, PyObject *args) {
    PyObject *shown, *ids;
    if (!PyArg_ParseTuple(args, "OO", &shown, &ids)) return NULL;
    if (shown == Py_None) {
        Py_CLEAR(c->f_shown); Py_CLEAR(c->f_ids);
        Py_RETURN_NONE;
    }
    if (!PyList_Check(shown) || !PyDict_Check(ids)) {
        PyErr_SetString(PyExc_TypeError, "tracking(shown: list, ids: dict)");
        return NULL;
    }
    Py_XSETREF(c->f_shown, Py_NewRef(shown));
    Py_XSETREF(c->f_ids, Py_NewRef(ids));
    Py_RETURN_NONE;
}

static long aug_int(PyObject *t, Py_ssize_t j) { return PyLong_AsLong(PyTuple_GET_ITEM(t, j)); }

/* A tuple of ``k`` ints, and ``last`` (borrowed) after them when not NULL: what
 * Py_BuildValue("(lll...)") gives, without parsing a format. */
static PyObject *aug_ints(int k, const long long *v, PyObject *last) {
    PyObject *t = PyTuple_New(k + (last != NULL));
    for (int j = 0; t && j < k; j++) {
        PyObject *e = PyLong_FromLongLong(v[j]);
        if (!e) Py_CLEAR(t);
        else PyTuple_SET_ITEM(t, j, e);
    }
    if (t && last) PyTuple_SET_ITEM(t, k, Py_NewRef(last));
    return t;
}

/* augment.py's ``referenced``: 1 when a process's own request or a message in flight is ``key``. */
static int aug_referenced(long key, PyObject *procs, PyObject *tags) {
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(procs); j++)
        if (aug_int(PyTuple_GET_ITEM(procs, j), 2) == key) return 1;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(tags); k++) {
        PyObject *link = PyTuple_GET_ITEM(tags, k);
        for (Py_ssize_t m = 0; m < PyTuple_GET_SIZE(link); m++)
            if (aug_int(PyTuple_GET_ITEM(link, m), 0) == key) return 1;
    }
    return PyErr_Occurred() ? -1 : 0;
}

/* augment.py's ``close``: a new reference to ``live`` without ``key`` (steals ``live``). */
static PyObject *aug_close(PyObject *live, long key, PyObject *closed) {
    PyObject *e = PyTuple_GET_ITEM(live, key), *k = PyLong_FromLong(key);
    PyObject *item = k ? PyTuple_Pack(2, k, PyTuple_GET_ITEM(e, 2)) : NULL;
    Py_XDECREF(k);
    if (!item || PyList_Append(closed, item) < 0) { Py_XDECREF(item); Py_DECREF(live); return NULL; }
    Py_DECREF(item);
    Py_ssize_t size = PyTuple_GET_SIZE(live);
    while (size > 0 && (size - 1 == key || PyTuple_GET_SIZE(PyTuple_GET_ITEM(live, size - 1)) == 0)) size--;
    PyObject *out = PyTuple_New(size);
    for (Py_ssize_t j = 0; out && j < size; j++)
        PyTuple_SET_ITEM(out, j, j == key ? PyTuple_New(0) : Py_NewRef(PyTuple_GET_ITEM(live, j)));
    Py_DECREF(live);
    return out;
}

/* augment.py's ``open_request``: the smallest free key of process ``i`` in ``live`` (a list). */
static long aug_open(PyObject *live, long *q, int i, int n, long kd) {
    long key = i;
    while (key < PyList_GET_SIZE(live) && PyTuple_GET_SIZE(PyList_GET_ITEM(live, key))) key += n;
    while (PyList_GET_SIZE(live) <= key) {
        PyObject *empty = PyTuple_New(0);
        if (PyList_Append(live, empty) < 0) { Py_DECREF(empty); return -2; }
        Py_DECREF(empty);
    }
    long long v[2] = {kd, 0};
    PyObject *e = aug_ints(2, v, Py_True);
    if (!e) return -2;
    PyList_SetItem(live, key, e);
    q[0] = key; q[1] = kd; q[2] = key;
    return key;
}

/* Hop counts ((kind, longest, shortest), ...) as C triples, at most AUG_MAX_HOPS of them. */
#define AUG_MAX_KIND 61 /* augment.py's MAX_KIND: measuring is a bit set */
#define AUG_MAX_HOPS 64 /* augment.py's MAX_HOPS */
typedef struct { int n; long long h[AUG_MAX_HOPS][3]; } AugHops;

/* ``hops`` (a tuple of (kind, longest, shortest)) into ``out``: 0, 1 when too many, -1 on an error. */
static int aug_hops_in(PyObject *hops, AugHops *out) {
    out->n = 0;
    if (!PyTuple_Check(hops)) { PyErr_SetString(PyExc_TypeError, "augment: hop counts are a tuple"); return -1; }
    if (PyTuple_GET_SIZE(hops) > AUG_MAX_HOPS) return 1;
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(hops); j++) {
        PyObject *e = PyTuple_GET_ITEM(hops, j);
        if (!PyTuple_Check(e) || PyTuple_GET_SIZE(e) != 3) { PyErr_SetString(PyExc_TypeError, "augment: a hop count is (kind, longest, shortest)"); return -1; }
        for (int m = 0; m < 3; m++) out->h[j][m] = PyLong_AsLongLong(PyTuple_GET_ITEM(e, m));
    }
    out->n = (int)PyTuple_GET_SIZE(hops);
    return PyErr_Occurred() ? -1 : 0;
}

static PyObject *aug_hops_out(const AugHops *h) {
    PyObject *out = PyTuple_New(h->n);
    for (int j = 0; out && j < h->n; j++) {
        PyObject *e = aug_ints(3, h->h[j], NULL);
        if (!e) Py_CLEAR(out);
        else PyTuple_SET_ITEM(out, j, e);
    }
    return out;
}

/* augment.py's ``merge``: ``mine`` after a message carrying ``carried``, one hop more, sorted by
 * kind; 1 when past AUG_MAX_HOPS kinds. */
static int aug_merge(AugHops *mine, const AugHops *carried) {
    AugHops got = {0};
    for (int pass = 0; pass < 2; pass++) {
        const AugHops *from = pass ? carried : mine;
        for (int j = 0; j < from->n; j++) {
            long long k = from->h[j][0], lo = from->h[j][1] + pass, sh = from->h[j][2] + pass;
#ifdef MUTEXLAB_CORE_BROKEN_HOPS /* the tests' deliberate break: a message's hop not counted */
            lo -= pass; sh -= pass;
#endif
            int at = 0;
            while (at < got.n && got.h[at][0] != k) at++;
            if (at == got.n) {
                if (got.n == AUG_MAX_HOPS) return 1;
                got.n++;
                got.h[at][0] = k; got.h[at][1] = lo; got.h[at][2] = sh;
            } else if (!pass) {
                got.h[at][1] = lo; got.h[at][2] = sh;
            } else {
                if (lo > got.h[at][1]) got.h[at][1] = lo;
                if (sh < got.h[at][2]) got.h[at][2] = sh;
            }
        }
    }
    for (int a = 1; a < got.n; a++) /* by kind (unique), insertion */
        for (int b = a; b > 0 && got.h[b - 1][0] > got.h[b][0]; b--)
            for (int m = 0; m < 3; m++) { long long t = got.h[b][m]; got.h[b][m] = got.h[b - 1][m]; got.h[b - 1][m] = t; }
    *mine = got;
    return 0;
}

static void aug_without(AugHops *h, long long kd) {
    int k = 0;
    for (int j = 0; j < h->n; j++)
        if (h->h[j][0] != kd) { if (k != j) memcpy(h->h[k], h->h[j], sizeof h->h[j]); k++; }
    h->n = k;
}

/* ``hops`` + ((kd, 0, 0),), sorted as tuples are: 1 when past AUG_MAX_HOPS. */
static int aug_start(AugHops *h, long long kd) {
    if (h->n == AUG_MAX_HOPS) return 1;
    h->h[h->n][0] = kd; h->h[h->n][1] = 0; h->h[h->n][2] = 0;
    h->n++;
    for (int a = 1; a < h->n; a++)
        for (int b = a; b > 0; b--) {
            long long *x = h->h[b - 1], *y = h->h[b];
            int gt = x[0] != y[0] ? x[0] > y[0] : x[1] != y[1] ? x[1] > y[1] : x[2] > y[2];
            if (!gt) break;
            for (int m = 0; m < 3; m++) { long long t = x[m]; x[m] = y[m]; y[m] = t; }
        }
    return 0;
}

/* A hop-count tuple without kind ``kd`` (a new reference; ``hops`` itself when it has none). */
static PyObject *aug_without_obj(PyObject *hops, long long kd) {
    Py_ssize_t size = PyTuple_GET_SIZE(hops), keep = 0;
    for (Py_ssize_t j = 0; j < size; j++) keep += PyLong_AsLongLong(PyTuple_GET_ITEM(PyTuple_GET_ITEM(hops, j), 0)) != kd;
    if (PyErr_Occurred()) return NULL;
    if (keep == size) return Py_NewRef(hops);
    PyObject *out = PyTuple_New(keep);
    for (Py_ssize_t j = 0, k = 0; out && j < size; j++) {
        PyObject *e = PyTuple_GET_ITEM(hops, j);
        if (PyLong_AsLongLong(PyTuple_GET_ITEM(e, 0)) != kd) PyTuple_SET_ITEM(out, k++, Py_NewRef(e));
    }
    return out;
}

/* augment.py's ``clear_all``: every hop count of kind ``kd`` in ``procs`` and ``tags`` (lists)
 * forgotten, in place; -1 on an error. */
static int aug_clear_all(PyObject *procs, PyObject *tags, long long kd) {
    for (Py_ssize_t j = 0; j < PyList_GET_SIZE(procs); j++) {
        PyObject *o = PyList_GET_ITEM(procs, j), *h = PyTuple_GET_ITEM(o, 3);
        if (!PyTuple_GET_SIZE(h)) continue;
        PyObject *w = aug_without_obj(h, kd);
        PyObject *e = w ? PyTuple_Pack(4, PyTuple_GET_ITEM(o, 0), PyTuple_GET_ITEM(o, 1), PyTuple_GET_ITEM(o, 2), w) : NULL;
        Py_XDECREF(w);
        if (!e) return -1;
        PyList_SetItem(procs, j, e);
    }
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(tags); k++) {
        PyObject *link = PyList_GET_ITEM(tags, k);
        Py_ssize_t size = PyTuple_GET_SIZE(link), m;
        for (m = 0; m < size; m++)
            if (PyTuple_GET_SIZE(PyTuple_GET_ITEM(PyTuple_GET_ITEM(link, m), 1))) break;
        if (m == size) continue;
        PyObject *out = PyTuple_New(size);
        for (m = 0; out && m < size; m++) {
            PyObject *tag = PyTuple_GET_ITEM(link, m), *w = aug_without_obj(PyTuple_GET_ITEM(tag, 1), kd);
            PyObject *e = w ? PyTuple_Pack(2, PyTuple_GET_ITEM(tag, 0), w) : NULL;
            Py_XDECREF(w);
            if (!e) Py_CLEAR(out);
            else PyTuple_SET_ITEM(out, m, e);
        }
        if (!out) return -1;
        PyList_SetItem(tags, k, out);
    }
    return 0;
}

/* edges.plan: (i, ((process, source or NONE, added), ...), opens), ``entered`` the kinds the
 * step enters (``ne`` of them). */
static PyObject *aug_plan(PyObject *old, PyObject *now, int i, const long *entered, int ne) {
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(old); j++) {
        long o0 = aug_int(PyTuple_GET_ITEM(old, j), 0), o1 = aug_int(PyTuple_GET_ITEM(old, j), 1);
        if (o0 == AUG_NONE) continue;
        int count = 0;
        for (int e = 0; e < ne; e++) count += entered[e] == o1;
        long long v[3] = {j, j, count};
        if (j == i && aug_int(PyTuple_GET_ITEM(now, i), 0) == o0) v[2] = 0;
        else if (j == i) { v[1] = AUG_NONE; v[2] = count ? 0LL : AUG_NEG; }
        PyObject *e = aug_ints(3, v, NULL);
        if (!e || PyList_Append(out, e) < 0) { Py_XDECREF(e); Py_DECREF(out); return NULL; }
        Py_DECREF(e);
    }
    PyObject *mine = PyTuple_GET_ITEM(now, i);
    long m0 = aug_int(mine, 0), opens = (m0 != AUG_NONE && m0 != aug_int(PyTuple_GET_ITEM(old, i), 0)) ? aug_int(mine, 1) : AUG_NONE;
    PyObject *plan = PyList_AsTuple(out);
    Py_DECREF(out);
    PyObject *got = plan ? PyTuple_New(3) : NULL, *who = got ? PyLong_FromLong(i) : NULL;
    PyObject *o = who ? PyLong_FromLong(opens) : NULL;
    if (!o) { Py_XDECREF(got); Py_XDECREF(who); Py_XDECREF(plan); return NULL; }
    PyTuple_SET_ITEM(got, 0, who); /* (i, plan, opens): edges.plan's */
    PyTuple_SET_ITEM(got, 1, plan); PyTuple_SET_ITEM(got, 2, o);
    return got;
}

/* A figure reached, (kind, what, value, process), appended to ``reached``: -1 on an error. */
static int aug_reached(PyObject *reached, long kd, const char *what, long long value, int i) {
    PyObject *e = PyTuple_New(4), *k = e ? PyLong_FromLong(kd) : NULL;
    PyObject *w = k ? PyUnicode_InternFromString(what) : NULL, *x = w ? PyLong_FromLongLong(value) : NULL;
    PyObject *p = x ? PyLong_FromLong(i) : NULL;
    if (!p) { Py_XDECREF(e); Py_XDECREF(k); Py_XDECREF(w); Py_XDECREF(x); return -1; }
    PyTuple_SET_ITEM(e, 0, k); /* (kind, what, value, process): the Tracker's ``seen`` */
    PyTuple_SET_ITEM(e, 1, w);
    PyTuple_SET_ITEM(e, 2, x); PyTuple_SET_ITEM(e, 3, p);
    int r = PyList_Append(reached, e);
    Py_XDECREF(e);
    return r;
}

/* augment.py's ``augment``: a new reference to the remembered step (successor's aux id, moved,
 * figures reached, edge), Py_None when the Tracker must compute it, NULL on an error. */
static PyObject *augment(Core *c, long aux_id, long sig_id, PyObject *sends, uint64_t bits, int i) {
    PyObject *shown = PyList_GetItem(c->f_shown, sig_id), *aux = PyList_GetItem(c->f_auxes, aux_id);
    if (!shown || !aux) return NULL;
    if (!PyTuple_Check(shown) || PyTuple_GET_SIZE(shown) != 8) return Py_NewRef(Py_None); /* not edges.py's */
    PyObject *moves = PyTuple_GET_ITEM(shown, 6);
    Py_ssize_t nm = PyTuple_GET_SIZE(moves);
    long kds[64], signs[64], entered[64];
    int ne = 0;
    if (nm > 64) return Py_NewRef(Py_None);
    for (Py_ssize_t m = 0; m < nm; m++) {
        kds[m] = aug_int(PyTuple_GET_ITEM(moves, m), 0);
        signs[m] = aug_int(PyTuple_GET_ITEM(moves, m), 1);
        if (PyErr_Occurred()) return NULL;
        if (kds[m] < 0 || kds[m] > AUG_MAX_KIND) return Py_NewRef(Py_None);
        if (signs[m] > 0) entered[ne++] = kds[m];
    }
    long kind = aug_int(shown, 0), x = aug_int(shown, 1), noted = aug_int(shown, 2);
    long w0 = aug_int(shown, 3), w1 = aug_int(shown, 4);
    int declares = PyObject_IsTrue(PyTuple_GET_ITEM(shown, 5));
    if (!PyTuple_Check(aux) || PyTuple_GET_SIZE(aux) != 4) {
        PyErr_Format(PyExc_TypeError, "augment: aux %ld is not (tags, processes, live, measuring)", aux_id);
        return NULL;
    }
    PyObject *tags = PyTuple_GET_ITEM(aux, 0), *procs = PyTuple_GET_ITEM(aux, 1), *live = PyTuple_GET_ITEM(aux, 2);
    if (PyErr_Occurred()) return NULL;
    if (i < 0 || i >= PyTuple_GET_SIZE(procs) || (kind != 1 && (x < 0 || x >= PyTuple_GET_SIZE(tags) || !PyTuple_GET_SIZE(PyTuple_GET_ITEM(tags, x))))) {
        PyErr_Format(PyExc_IndexError, "augment: process %d or link %ld out of range, or nothing in flight on it", i, x);
        return NULL;
    }
    for (Py_ssize_t b = 0; b < PyTuple_GET_SIZE(sends); b++) {
        long k = aug_int(PyTuple_GET_ITEM(sends, b), 0);
        if (PyErr_Occurred()) return NULL;
        if (k < 0 || k >= c->L || k >= PyTuple_GET_SIZE(tags)) {
            PyErr_Format(PyExc_IndexError, "augment: a send on link %ld, out of range (%d links)", k, c->L);
            return NULL;
        }
    }
    long long measuring = PyLong_AsLongLong(PyTuple_GET_ITEM(aux, 3)), was = measuring;
    PyObject *p = PyTuple_GET_ITEM(procs, i);
    long q[3] = {aug_int(p, 0), aug_int(p, 1), aug_int(p, 2)}, cause, freed = AUG_NONE;
    if (declares < 0 || PyErr_Occurred()) return NULL;
    AugHops hp;
    int merged = 0;
    int r = aug_hops_in(PyTuple_GET_ITEM(p, 3), &hp);
    if (r) return r < 0 ? NULL : Py_NewRef(Py_None);
    PyObject *charged = PyList_New(0), *closed = PyList_New(0), *reached = PyList_New(0), *ntags = NULL, *nprocs = NULL;
    PyObject *nlive = NULL, *hops = NULL, *naux = NULL, *moved = NULL, *edge = NULL, *got = NULL;
    PyObject *procs_l = NULL, *tags_l = NULL, *live_l = NULL;
    if (!charged || !closed || !reached) goto done;
    if (kind == 1) { /* LOCAL */
        cause = q[2];
        ntags = Py_NewRef(tags);
    } else {
        PyObject *link = PyTuple_GET_ITEM(tags, x), *first = PyTuple_GET_ITEM(link, 0), *mh = PyTuple_GET_ITEM(first, 1);
        if (PyTuple_GET_SIZE(mh)) { /* its hop counts merged into the receiver's */
            AugHops carried;
            if ((r = aug_hops_in(mh, &carried)) || (r = aug_merge(&hp, &carried))) {
                got = r < 0 ? NULL : Py_NewRef(Py_None);
                goto done;
            }
            merged = 1;
        }
        cause = freed = aug_int(first, 0);
        ntags = PyTuple_New(PyTuple_GET_SIZE(tags));
        for (Py_ssize_t k = 0; ntags && k < PyTuple_GET_SIZE(tags); k++) {
            PyObject *e = k == x ? PyTuple_GetSlice(link, 1, PyTuple_GET_SIZE(link)) : Py_NewRef(PyTuple_GET_ITEM(tags, k));
            if (!e) Py_CLEAR(ntags);
            else PyTuple_SET_ITEM(ntags, k, e);
        }
        if (!ntags) goto done;
    }
    hops = merged ? aug_hops_out(&hp) : Py_NewRef(PyTuple_GET_ITEM(p, 3));
    if (!hops) goto done;
    Py_ssize_t ns = PyTuple_GET_SIZE(sends);
    if (noted == AUG_NONE && !nm && !ns && (w1 == w0 || w1 == AUG_NONE) && q[1] == AUG_NONE) {
        if (!merged) nprocs = Py_NewRef(procs);
        else {
            nprocs = PyTuple_New(PyTuple_GET_SIZE(procs));
            for (Py_ssize_t j = 0; nprocs && j < PyTuple_GET_SIZE(procs); j++) {
                long long v[3] = {q[0], q[1], q[2]};
                PyObject *e = j == i ? aug_ints(3, v, hops) : Py_NewRef(PyTuple_GET_ITEM(procs, j));
                if (!e) Py_CLEAR(nprocs);
                else PyTuple_SET_ITEM(nprocs, j, e);
            }
            if (!nprocs) goto done;
        }
        nlive = Py_NewRef(live);
        if (freed != AUG_NONE) {
            int r = aug_referenced(freed, nprocs, ntags);
            if (r < 0) goto done;
            if (!r && !(nlive = aug_close(nlive, freed, closed))) goto done;
        }
    } else {
        long old_own = q[2];
        procs_l = PySequence_List(procs);
        tags_l = PySequence_List(ntags);
        live_l = PySequence_List(live);
        if (!procs_l || !tags_l || !live_l) goto done;
        if (noted != AUG_NONE && (cause = aug_open(live_l, q, i, c->n, noted)) == -2) goto done;
        for (Py_ssize_t m = 0; m < nm; m++) {
            long kd = kds[m];
            long long bit = 1LL << kd;
            if (signs[m] > 0) { /* an entry */
                if (q[1] != kd && declares) { /* with no request open: a request served at once */
                    if ((cause = aug_open(live_l, q, i, c->n, kd)) == -2) goto done;
                    if (aug_reached(reached, kd, "bypass", 0, i) < 0) goto done;
                }
                q[0] = q[1] = AUG_NONE;
                if (measuring & bit) { /* the handover measured ends here */
                    long long longest = AUG_NONE, shortest = AUG_NONE;
                    for (int j = 0; j < hp.n; j++)
                        if (hp.h[j][0] == kd) { longest = hp.h[j][1]; shortest = hp.h[j][2]; break; }
                    if (aug_reached(reached, kd, "sync", longest, i) < 0 || aug_reached(reached, kd, "sync_short", shortest, i) < 0) goto done;
                    measuring &= ~bit;
                    aug_without(&hp, kd);
                    if (aug_clear_all(procs_l, tags_l, kd) < 0) goto done;
                }
            } else { /* an exit */
                if (measuring & bit) {
                    if (aug_clear_all(procs_l, tags_l, kd) < 0) goto done;
                    aug_without(&hp, kd);
                }
                int waits = q[1] == kd;
                for (Py_ssize_t j = 0; !waits && j < PyList_GET_SIZE(procs_l); j++)
                    waits = j != i && aug_int(PyList_GET_ITEM(procs_l, j), 1) == kd;
                if (waits) { /* someone waits: every later hop count starts here */
                    measuring |= bit;
                    if (aug_start(&hp, kd)) { got = Py_NewRef(Py_None); goto done; }
                } else {
                    measuring &= ~bit;
                }
            }
        }
        if (nm) Py_SETREF(hops, aug_hops_out(&hp));
        if (!hops || PyErr_Occurred()) goto done;
        if (q[1] != AUG_NONE && w0 == q[1] && w1 != q[1]) { /* given up */
            PyObject *e = PyList_GET_ITEM(live_l, q[0]);
            PyObject *ne = PyTuple_Pack(3, PyTuple_GET_ITEM(e, 0), PyTuple_GET_ITEM(e, 1), Py_False);
            if (!ne) goto done;
            PyList_SetItem(live_l, q[0], ne);
            q[0] = q[1] = AUG_NONE;
        }
        if (w1 != AUG_NONE && w1 != w0 && q[1] != w1 && (cause = aug_open(live_l, q, i, c->n, w1)) == -2) goto done;
        for (Py_ssize_t b = 0; b < ns; b++) {
            long k = aug_int(PyTuple_GET_ITEM(sends, b), 0);
            long charge = (bits >> b & 1) ? aug_int(PyTuple_GET_ITEM(procs, c->link_to[k]), 0) : cause;
#ifdef MUTEXLAB_CORE_BROKEN_CHARGE /* the tests' deliberate break: a message awaited charged to its cause */
            charge = cause;
#endif
            PyObject *ch = PyLong_FromLong(charge), *tag = ch ? PyTuple_Pack(2, ch, hops) : NULL, *one = NULL;
            if (charge != AUG_NONE && ch && PyList_Append(charged, ch) < 0) Py_CLEAR(tag);
            Py_XDECREF(ch);
            if (tag) one = PyTuple_Pack(1, tag);
            Py_XDECREF(tag);
            PyObject *grown = one ? PySequence_Concat(PyList_GET_ITEM(tags_l, k), one) : NULL;
            Py_XDECREF(one);
            if (!grown) goto done;
            PyList_SetItem(tags_l, k, grown);
        }
        long long v[3] = {q[0], q[1], q[2]};
        PyObject *mine = aug_ints(3, v, hops);
        if (!mine) goto done;
        PyList_SetItem(procs_l, i, mine);
        nprocs = PyList_AsTuple(procs_l);
        Py_SETREF(ntags, PyList_AsTuple(tags_l));
        nlive = PyList_AsTuple(live_l);
        if (!nprocs || !ntags || !nlive) goto done;
        if (freed != AUG_NONE) {
            int r = aug_referenced(freed, nprocs, ntags);
            if (r < 0) goto done;
            if (!r && !(nlive = aug_close(nlive, freed, closed))) goto done;
        }
        if (old_own != AUG_NONE && old_own != q[2] && old_own != freed) {
            int r = aug_referenced(old_own, nprocs, ntags);
            if (r < 0) goto done;
            if (!r && !(nlive = aug_close(nlive, old_own, closed))) goto done;
        }
    }
    PyObject *meas = measuring == was ? Py_NewRef(PyTuple_GET_ITEM(aux, 3)) : PyLong_FromLongLong(measuring);
    naux = meas ? PyTuple_Pack(4, ntags, nprocs, nlive, meas) : NULL;
    Py_XDECREF(meas);
    if (!naux) goto done;
    int same = PyList_GET_SIZE(closed) ? 0 : PyObject_RichCompareBool(nlive, live, Py_EQ);
    if (same < 0) goto done;
    moved = PyList_AsTuple(charged);
    if (moved && !same) { /* [charged, closed]: requests opened or closed */
        PyObject *cl = PyList_AsTuple(closed), *both = cl ? Py_BuildValue("[OO]", moved, cl) : NULL;
        Py_XDECREF(cl);
        Py_SETREF(moved, both);
    }
    if (!moved) goto done;
    int any = aug_int(PyTuple_GET_ITEM(nprocs, i), 0) != aug_int(p, 0);
    for (Py_ssize_t j = 0; !any && j < PyTuple_GET_SIZE(procs); j++) any = aug_int(PyTuple_GET_ITEM(procs, j), 0) != AUG_NONE;
    edge = any ? aug_plan(procs, nprocs, i, entered, ne) : Py_NewRef(Py_None);
    if (!edge || PyErr_Occurred()) goto done;
    PyObject *fresh = PyLong_FromSsize_t(PyList_GET_SIZE(c->f_auxes));
    Py_ssize_t size = PyDict_GET_SIZE(c->f_ids); /* grown: interned now (small ints are shared objects) */
    PyObject *id = fresh ? PyDict_SetDefault(c->f_ids, naux, fresh) : NULL; /* borrowed; one hash */
    if (id && PyDict_GET_SIZE(c->f_ids) != size && PyList_Append(c->f_auxes, naux) < 0) id = NULL;
    Py_XDECREF(fresh); /* when new, held by the dictionary */
    if (!id) goto done;
    PyObject *seen = PyList_AsTuple(reached);
    got = seen ? PyTuple_Pack(4, id, moved, seen, edge) : NULL;
    Py_XDECREF(seen);
done:
    Py_XDECREF(charged); Py_XDECREF(closed); Py_XDECREF(reached); Py_XDECREF(ntags); Py_XDECREF(nprocs);
    Py_XDECREF(nlive); Py_XDECREF(hops); Py_XDECREF(naux); Py_XDECREF(moved); Py_XDECREF(edge);
    Py_XDECREF(procs_l); Py_XDECREF(tags_l); Py_XDECREF(live_l);
    return got;
}

/* augmented(aux id, signature id, sends, awaits bits, process): the step ``augment`` computes
 * (remembered in the search's dictionary under (aux id, signature id, bits), as advance does),
 * or None when the Tracker must; for a step whose signature Python computed just now. */
static PyObject *Core_augmented(Core *c, PyObject *args) {
    long aux, sig;
    PyObject *sends;
    unsigned long long bits;
    int i;
    if (!PyArg_ParseTuple(args, "llO!Ki", &aux, &sig, &PyTuple_Type, &sends, &bits, &i)) return NULL;
    if (!c->f_shown || !c->f_edges) {
        PyErr_SetString(PyExc_RuntimeError, "augmented: figures() and tracking() not given");
        return NULL;
    }
    PyObject *got = augment(c, aux, sig, sends, bits, i);
    if (!got || got == Py_None) return got;
    PyObject *key = Py_BuildValue("(llK)", aux, sig, bits);
    if (!key || PyDict_SetItem(c->f_edges, key, got) < 0) Py_CLEAR(got);
    Py_XDECREF(key);
    return got;
}

#endif
