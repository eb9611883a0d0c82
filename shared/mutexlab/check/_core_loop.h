/* The figures' search loop of ``check --metrics`` (check/metrics.py's ``while frames`` loop) in C:
 * depth-first over the augmented worlds (model's world, aux id), each step taken by
 * ``advance_parts`` (_core_figures.h), and each world's close folded bottom-up here: the bypass
 * ahead (``combine``'s plan), the fewest and most messages per count of entries ahead (``fold``),
 * the charges ahead of the live requests (``settle``, ``passed``), the closed figures interned.
 * Python is called only for what is rare or needs the model: a step not remembered yet, figures
 * a step reaches, requests a step opens, a bypass that may beat the best, a world with no step,
 * and the limits every 4,096 worlds (check/metrics_loop.py gives these hooks). metrics.py's
 * loop is its pure-Python twin: the same figures, runs, worlds and transitions
 * (tests/test_check_core_loop.py). Included by _core.c. */
#ifndef MUTEXLAB_CORE_LOOP_H
#define MUTEXLAB_CORE_LOOP_H

#define LOOP_NEG (-((int64_t)1 << 40)) /* edges.py's NEG: no bypass figure ahead */
#define LOOP_CHECK_EVERY 4096          /* metrics.py's CHECK_EVERY */

/* A small map key -> [fewest, most] (the frames' dictionaries in metrics.py), linear: few keys. */
typedef struct { int64_t k, lo, hi; } Tri;
typedef struct { Tri *at; int size, cap; } Tris;

struct LFrame {
    PyObject *world, *labels, *label, *edge, *key, *moved; /* owned; label None at the root */
    long aux;
    Py_ssize_t pos;
    int64_t sent, entries;
    int64_t *best; /* n: the most entries by others ahead, per process */
    Tris runs, charges;
};

static int tris_widen(Tris *t, int64_t k, int64_t lo, int64_t hi) {
    for (int j = 0; j < t->size; j++) {
        if (t->at[j].k == k) {
#ifndef MUTEXLAB_CORE_BROKEN_WIDEN /* the tests' deliberate break: the fewest never lowered */
            if (lo < t->at[j].lo) t->at[j].lo = lo;
#endif
            if (hi > t->at[j].hi) t->at[j].hi = hi;
            return 0;
        }
    }
    if (t->size == t->cap) {
        int cap = t->cap ? 2 * t->cap : 8;
        Tri *at = PyMem_RawRealloc(t->at, cap * sizeof(Tri));
        if (!at) { PyErr_NoMemory(); return -1; }
        t->at = at; t->cap = cap;
    }
    t->at[t->size++] = (Tri){k, lo, hi};
    return 0;
}

/* ((k, lo, hi), ...) in key order: metrics.py's ``flat`` (keys are distinct). */
static PyObject *tris_flat(Tris *t) {
    for (int a = 1; a < t->size; a++) {
        Tri x = t->at[a];
        int b = a - 1;
        for (; b >= 0 && t->at[b].k > x.k; b--) t->at[b + 1] = t->at[b];
        t->at[b + 1] = x;
    }
    PyObject *out = PyTuple_New(t->size);
    for (int j = 0; out && j < t->size; j++) {
        long long v[3] = {t->at[j].k, t->at[j].lo, t->at[j].hi};
        PyObject *e = aug_ints(3, v, NULL);
        if (!e) Py_CLEAR(out);
        else PyTuple_SET_ITEM(out, j, e);
    }
    return out;
}

/* ``hook(*objs, *ints)``: the objects borrowed, each int given as a Python int after them, in
 * ``order`` (a string of 'o' and 'i', at most 6): a vectorcall, no format parsed per call. */
static PyObject *loop_call(PyObject *hook, const char *order, PyObject *const *objs, const long long *ints) {
    PyObject *args[6] = {NULL}, *made[6];
    int n = 0, nm = 0, o = 0, k = 0;
    for (; order[n]; n++) {
        if (order[n] == 'o') {
            args[n] = objs[o++];
        } else {
            PyObject *v = PyLong_FromLongLong(ints[k++]);
            if (!v) { while (nm) Py_DECREF(made[--nm]); return NULL; }
            args[n] = made[nm++] = v;
        }
    }
    PyObject *r = PyObject_Vectorcall(hook, args, n, NULL);
    while (nm) Py_DECREF(made[--nm]);
    return r;
}

/* A tuple of int triples ``ahead`` read: 0, or -1 with an error set. */
static int triple(PyObject *ahead, Py_ssize_t j, int64_t *k, int64_t *lo, int64_t *hi) {
    PyObject *e = PyTuple_GET_ITEM(ahead, j);
    if (!PyTuple_Check(e) || PyTuple_GET_SIZE(e) < 3) {
        PyErr_SetString(PyExc_TypeError, "loop: figures ahead are (key, fewest, most) triples");
        return -1;
    }
    *k = PyLong_AsLongLong(PyTuple_GET_ITEM(e, 0));
    *lo = PyLong_AsLongLong(PyTuple_GET_ITEM(e, 1));
    *hi = PyLong_AsLongLong(PyTuple_GET_ITEM(e, 2));
    return PyErr_Occurred() ? -1 : 0;
}

static int64_t count_in(PyObject *charged, int64_t k) { /* charged.count(k) over ints (a tuple) */
    int64_t n = 0;
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(charged); j++)
        n += PyLong_AsLongLong(PyTuple_GET_ITEM(charged, j)) == k;
    return n;
}

/* ahead.fold: a step sending ``sent`` and making ``entries`` entries into a world with ``ahead``. */
static int loop_fold(struct LFrame *f, int64_t sent, int64_t entries, PyObject *ahead) {
    int64_t e, lo, hi;
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(ahead); j++) {
        if (triple(ahead, j, &e, &lo, &hi) < 0) return -1;
#ifdef MUTEXLAB_CORE_BROKEN_FOLD /* the tests' deliberate break: the step's messages not counted */
        sent = 0;
#endif
        if (tris_widen(&f->runs, e + entries, lo + sent, hi + sent) < 0) return -1;
    }
    return 0;
}

/* metrics.py's ``passed``: a step charging ``charged`` that leaves the same requests live. The
 * charges are widened at once, not at the close: min and max in any order give the same. */
static int loop_passed(struct LFrame *f, PyObject *charged, PyObject *ahead) {
    int64_t k, lo, hi;
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(ahead); j++) {
        if (triple(ahead, j, &k, &lo, &hi) < 0) return -1;
        int64_t c = PyTuple_GET_SIZE(charged) ? count_in(charged, k) : 0;
        if (tris_widen(&f->charges, k, lo + c, hi + c) < 0) return -1;
    }
    return PyErr_Occurred() ? -1 : 0;
}

/* ahead.settle: into ``f``'s charges; the requests the step opens appended to ``opened`` as
 * (key, fewest, most, charged by the step). */
static int loop_settle(Core *c, struct LFrame *f, PyObject *moved, PyObject *ahead, PyObject *opened) {
    PyObject *a = aux_at(c, f->aux);
    if (!a) return -1;
    PyObject *live = PyTuple_GET_ITEM(a, 2), *charged = PyList_GET_ITEM(moved, 0), *closed = PyList_GET_ITEM(moved, 1);
    if (!PyTuple_Check(live) || !PyTuple_Check(charged) || !PyTuple_Check(closed)) {
        PyErr_SetString(PyExc_TypeError, "loop: live requests, charged and closed keys are tuples");
        return -1;
    }
    Py_ssize_t nlive = PyTuple_GET_SIZE(live);
    int64_t k, lo, hi;
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(ahead); j++) {
        if (triple(ahead, j, &k, &lo, &hi) < 0) return -1;
        int64_t n = PyTuple_GET_SIZE(charged) ? count_in(charged, k) : 0;
        lo += n; hi += n;
        int yes = (k >= 0 && k < nlive) ? PyObject_IsTrue(PyTuple_GET_ITEM(live, k)) : 0;
        if (yes < 0) return -1;
        if (yes) {
            if (tris_widen(&f->charges, k, lo, hi) < 0) return -1;
        } else {
            long long v[4] = {k, lo, hi, n};
            PyObject *e = aug_ints(4, v, NULL);
            if (!e || PyList_Append(opened, e) < 0) { Py_XDECREF(e); return -1; }
            Py_DECREF(e);
        }
    }
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(closed); j++) {
        PyObject *e = PyTuple_GET_ITEM(closed, j); /* (key, counts) */
        PyObject *ek = item(e, 0, "loop: a closed request (key, counts)");
        PyObject *ec = ek ? item(e, 1, "loop: a closed request (key, counts)") : NULL;
        if (!ec) return -1;
        k = PyLong_AsLongLong(ek);
        if (PyErr_Occurred()) return -1;
        int yes = (k >= 0 && k < nlive) ? PyObject_IsTrue(PyTuple_GET_ITEM(live, k)) : 0;
        if (yes < 0) return -1;
        if (!yes) {
            PyErr_SetString(PyExc_AssertionError, "a request opened and closed in one step");
            return -1;
        }
        int counts = PyObject_IsTrue(ec);
        if (counts < 0) return -1;
        if (counts) {
            int64_t n = count_in(charged, k);
            if (tris_widen(&f->charges, k, n, n) < 0) return -1;
        }
    }
    return PyErr_Occurred() ? -1 : 0;
}

/* metrics.py's ``combine``: the bypass ahead through the plan ``edge``; a request opened here
 * whose figure may beat the best known (``bbest``, never above Python's) handed to ``hook``. */
static int loop_combine(Core *c, struct LFrame *f, PyObject *label, PyObject *edge, PyObject *world, long aux,
                        PyObject *ahead, int64_t **bbest, Py_ssize_t *nb, PyObject *hook) {
    if (!PyTuple_Check(edge) || PyTuple_GET_SIZE(edge) != 3 || !PyTuple_Check(PyTuple_GET_ITEM(edge, 1))) {
        PyErr_SetString(PyExc_TypeError, "loop: a bypass plan is (process, ((process, source, added), ...), opens)");
        return -1;
    }
    long i = PyLong_AsLong(PyTuple_GET_ITEM(edge, 0));
    PyObject *plan = PyTuple_GET_ITEM(edge, 1);
    long opens = PyLong_AsLong(PyTuple_GET_ITEM(edge, 2));
    if (PyErr_Occurred()) return -1;
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(plan); j++) {
        PyObject *p = PyTuple_GET_ITEM(plan, j); /* (process, source process or NONE, added) */
        if (!PyTuple_Check(p) || PyTuple_GET_SIZE(p) != 3) {
            PyErr_SetString(PyExc_TypeError, "loop: a bypass plan's entry is (process, source or NONE, added)");
            return -1;
        }
        long who = PyLong_AsLong(PyTuple_GET_ITEM(p, 0)), src = PyLong_AsLong(PyTuple_GET_ITEM(p, 1));
        int64_t add = PyLong_AsLongLong(PyTuple_GET_ITEM(p, 2));
        if (PyErr_Occurred()) return -1;
        if (who < 0 || who >= c->n) {
            PyErr_Format(PyExc_IndexError, "loop: a bypass plan's process %ld out of range (%d processes)", who, c->n);
            return -1;
        }
        int64_t got = add;
        if (src >= 0) {
            PyObject *from = item(ahead, src, "loop: the bypass figures ahead, at a plan's source process");
            if (!from) return -1;
            got += PyLong_AsLongLong(from);
        }
        if (got > f->best[who]) f->best[who] = got;
    }
    if (opens == -1) return PyErr_Occurred() ? -1 : 0;
    PyObject *at = item(ahead, i, "loop: the bypass figures ahead, at the plan's stepping process");
    if (!at) return -1;
    int64_t mine = PyLong_AsLongLong(at);
    if (PyErr_Occurred()) return -1;
    if (mine < 0 || opens < 0) return 0;
    if (opens >= *nb) {
        Py_ssize_t nn = 2 * opens + 8;
        int64_t *b = PyMem_RawRealloc(*bbest, nn * sizeof(int64_t));
        if (!b) { PyErr_NoMemory(); return -1; }
        for (Py_ssize_t j = *nb; j < nn; j++) b[j] = -1;
        *bbest = b; *nb = nn;
    }
    if (mine <= (*bbest)[opens]) return 0;
    (*bbest)[opens] = mine;
    PyObject *objs[2] = {label, world};
    long long ints[4] = {opens, mine, aux, i};
    PyObject *r = loop_call(hook, "iiooii", objs, ints);
    if (!r) return -1;
    Py_DECREF(r);
    return 0;
}

static void lframe_clear(struct LFrame *f) {
    Py_CLEAR(f->world); Py_CLEAR(f->labels); Py_CLEAR(f->label);
    Py_CLEAR(f->edge); Py_CLEAR(f->key); Py_CLEAR(f->moved);
}

/* A frame pushed on c->lf (its buffers kept from an earlier use of the slot): -1 on no memory. */
static struct LFrame *lframe_push(Core *c) {
    if (c->lf_n == c->lf_cap) {
        int cap = c->lf_cap ? 2 * c->lf_cap : 64;
        struct LFrame *lf = PyMem_RawRealloc(c->lf, cap * sizeof(struct LFrame));
        if (!lf) { PyErr_NoMemory(); return NULL; }
        memset(lf + c->lf_cap, 0, (cap - c->lf_cap) * sizeof(struct LFrame));
        c->lf = lf; c->lf_cap = cap;
    }
    struct LFrame *f = &c->lf[c->lf_n];
    if (!f->best && !(f->best = PyMem_RawMalloc((c->n + 1) * sizeof(int64_t)))) { PyErr_NoMemory(); return NULL; }
    for (int j = 0; j < c->n; j++) f->best[j] = LOOP_NEG;
    f->runs.size = f->charges.size = 0;
    f->pos = 0; f->sent = f->entries = 0;
    c->lf_n++;
    return f;
}

static void lframes_free(Core *c) {
    for (int j = 0; j < c->lf_cap; j++) {
        lframe_clear(&c->lf[j]);
        PyMem_RawFree(c->lf[j].best); PyMem_RawFree(c->lf[j].runs.at); PyMem_RawFree(c->lf[j].charges.at);
    }
    PyMem_RawFree(c->lf);
    c->lf = NULL; c->lf_n = c->lf_cap = 0;
}

/* trail(): the labels that led from the root to the world searched now (metrics.py's
 * ``[fr[3] for fr in frames[1:]]``), read by the hooks for the runs reaching a figure. */
static PyObject *Core_trail(Core *c, PyObject *unused) {
    PyObject *out = PyList_New(c->lf_n > 0 ? c->lf_n - 1 : 0);
    for (int j = 1; out && j < c->lf_n; j++) PyList_SET_ITEM(out, j - 1, Py_NewRef(c->lf[j].label));
    return out;
}

/* (sig, got) read: counts and the remembered step's parts (borrowed). */
static int step_parts(PyObject *sig, PyObject *got, int64_t *sent, int64_t *entries, long *naux, PyObject **moved,
                      PyObject **reached, PyObject **edge) {
    if (!PyTuple_Check(sig) || PyTuple_GET_SIZE(sig) != 4 || !PyTuple_Check(got) || PyTuple_GET_SIZE(got) != 4) {
        PyErr_SetString(PyExc_TypeError, "loop: a signature and a remembered step are 4-tuples");
        return -1;
    }
    PyObject *counts = PyTuple_GET_ITEM(sig, 3);
    if (!PyTuple_Check(counts) || PyTuple_GET_SIZE(counts) != 2) {
        PyErr_SetString(PyExc_TypeError, "loop: a signature's counts are (messages sent, entries)");
        return -1;
    }
    *sent = PyLong_AsLongLong(PyTuple_GET_ITEM(counts, 0));
    *entries = PyLong_AsLongLong(PyTuple_GET_ITEM(counts, 1));
    *naux = PyLong_AsLong(PyTuple_GET_ITEM(got, 0));
    *moved = PyTuple_GET_ITEM(got, 1);
    *reached = PyTuple_GET_ITEM(got, 2);
    *edge = PyTuple_GET_ITEM(got, 3);
    if (!PyTuple_Check(*moved) && !(PyList_Check(*moved) && PyList_GET_SIZE(*moved) == 2)) {
        PyErr_SetString(PyExc_TypeError, "loop: moved is a tuple or [charged, closed]");
        return -1;
    }
    return PyErr_Occurred() ? -1 : 0;
}

/* The closed world's figures ahead (settled, opened, bypass): into the frame ``p`` before the
 * step ``label`` with (moved, edge) to (world, aux) whose closed figures are ``kn``. */
static int loop_into(Core *c, struct LFrame *p, PyObject *label, int64_t sent, int64_t entries, PyObject *moved,
                     PyObject *edge, PyObject *world, long aux, PyObject *kn, int64_t **bbest, Py_ssize_t *nb,
                     PyObject *hooks) {
    if (!PyTuple_Check(kn) || PyTuple_GET_SIZE(kn) != 3 || !PyTuple_Check(PyTuple_GET_ITEM(kn, 0)) ||
        !PyTuple_Check(PyTuple_GET_ITEM(kn, 1)) || !PyTuple_Check(PyTuple_GET_ITEM(kn, 2))) {
        PyErr_SetString(PyExc_TypeError, "loop: a closed world's figures are a triple of tuples");
        return -1;
    }
    if (loop_fold(p, sent, entries, PyTuple_GET_ITEM(kn, 1)) < 0) return -1;
    PyObject *charges = PyTuple_GET_ITEM(kn, 2);
    if (PyTuple_Check(moved)) {
        if (PyTuple_GET_SIZE(charges) && loop_passed(p, moved, charges) < 0) return -1;
    } else {
        PyObject *opened = PyList_New(0);
        if (!opened || loop_settle(c, p, moved, charges, opened) < 0) { Py_XDECREF(opened); return -1; }
        if (PyList_GET_SIZE(opened)) {
            PyObject *objs[3] = {label, world, opened};
            long long ints[1] = {aux};
            PyObject *r = loop_call(PyTuple_GET_ITEM(hooks, 2), "ooio", objs, ints);
            if (!r) { Py_DECREF(opened); return -1; }
            Py_DECREF(r);
        }
        Py_DECREF(opened);
    }
    if (edge != Py_None &&
        loop_combine(c, p, label, edge, world, aux, PyTuple_GET_ITEM(kn, 0), bbest, nb, PyTuple_GET_ITEM(hooks, 3)) < 0)
        return -1;
    return 0;
}

/* climb(root world, root aux id, root key, root labels, interned, states, max states or -1,
 * hooks): the search from the root; (states, transitions, the root's closed figures or None,
 * stopped or None). hooks = (miss, reached, opened, bypass, tick, final): see metrics_loop.py. */
static PyObject *Core_climb(Core *c, PyObject *args) {
    PyObject *root, *rkey, *rlabels, *interned, *hooks, *stopped = NULL, *rclosed = NULL;
    long raux;
    long long states, max_states, transitions = 0;
    if (!PyArg_ParseTuple(args, "O!lOO!O!LLO!", &PyTuple_Type, &root, &raux, &rkey, &PyList_Type, &rlabels,
                          &PyDict_Type, &interned, &states, &max_states, &PyTuple_Type, &hooks))
        return NULL;
    if (!c->f_sigs || PyTuple_GET_SIZE(hooks) != 6) {
        PyErr_SetString(PyExc_RuntimeError, "climb: figures() not given, or not six hooks");
        return NULL;
    }
    if (c->lf_n) {
        PyErr_SetString(PyExc_RuntimeError, "climb: already climbing");
        return NULL;
    }
    int64_t *bbest = NULL;
    Py_ssize_t nb = 0;
    struct LFrame *f = lframe_push(c);
    if (!f) return NULL;
    f->world = Py_NewRef(root); f->aux = raux; f->labels = Py_NewRef(rlabels); f->label = Py_NewRef(Py_None);
    f->edge = Py_NewRef(Py_None); f->key = Py_NewRef(rkey); f->moved = PyTuple_New(0);
    if (!f->moved) goto fail;
    while (c->lf_n) {
        f = &c->lf[c->lf_n - 1];
        if (f->pos >= PyList_GET_SIZE(f->labels)) { /* closed: its figures ahead, then its parent's */
            PyObject *best = PyTuple_New(c->n), *closed = NULL;
            for (int j = 0; best && j < c->n; j++) {
                PyObject *x = PyLong_FromLongLong(f->best[j]);
                if (!x) Py_CLEAR(best);
                else PyTuple_SET_ITEM(best, j, x);
            }
            PyObject *runs = tris_flat(&f->runs), *charges = f->charges.size ? tris_flat(&f->charges) : PyTuple_New(0);
            if (best && runs && charges) closed = PyTuple_Pack(3, best, runs, charges);
            Py_XDECREF(best); Py_XDECREF(runs); Py_XDECREF(charges);
            if (!closed) goto fail;
            PyObject *kept = PyDict_SetDefault(interned, closed, closed); /* borrowed */
            if (!kept) { Py_DECREF(closed); goto fail; }
            Py_INCREF(kept);
            Py_DECREF(closed);
            closed = kept;
            if (PyDict_SetItem(c->f_known, f->key, closed) < 0) { Py_DECREF(closed); goto fail; }
            c->lf_n--; /* popped: the trail is the parent's now */
            if (c->lf_n) {
                struct LFrame *p = &c->lf[c->lf_n - 1];
                if (loop_into(c, p, f->label, f->sent, f->entries, f->moved, f->edge, f->world, f->aux, closed, &bbest,
                              &nb, hooks) < 0) {
                    Py_DECREF(closed);
                    c->lf_n++;
                    goto fail;
                }
                Py_DECREF(closed);
            } else {
                rclosed = closed;
            }
            lframe_clear(f);
            continue;
        }
        PyObject *label = PyList_GET_ITEM(f->labels, f->pos), *parts[5];
        f->pos++;
        transitions++;
        int who = 0, got = advance_parts(c, f->world, label, f->aux, parts, &who);
        if (got < 0) goto fail;
        if (!got) continue; /* a rejected input is the plain check's finding, not a run */
        if (parts[2] == Py_None) { /* not remembered yet: computed in Python as metrics.py does */
            PyObject *objs[4] = {f->world, label, parts[0], parts[1]};
            long long ints[2] = {f->aux, who};
            PyObject *r = loop_call(PyTuple_GET_ITEM(hooks, 0), "ooioio", objs, ints);
            Py_DECREF(parts[1]); Py_DECREF(parts[2]); Py_DECREF(parts[3]); Py_DECREF(parts[4]);
            if (!r) { Py_DECREF(parts[0]); goto fail; }
            if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 3) {
                Py_DECREF(r); Py_DECREF(parts[0]);
                PyErr_SetString(PyExc_TypeError, "climb: miss gives (signature, step, key)");
                goto fail;
            }
            parts[1] = Py_NewRef(PyTuple_GET_ITEM(r, 0));
            parts[2] = Py_NewRef(PyTuple_GET_ITEM(r, 1));
            parts[3] = Py_NewRef(PyTuple_GET_ITEM(r, 2));
            Py_DECREF(r);
            PyObject *kn = PyDict_GetItemWithError(c->f_known, parts[3]);
            if (!kn && PyErr_Occurred()) { parts[4] = NULL; goto fail_parts; }
            parts[4] = Py_NewRef(kn ? kn : c->f_known);
        }
        int64_t sent, entries;
        long naux;
        PyObject *moved, *reached, *edge, *kn = parts[4];
        if (step_parts(parts[1], parts[2], &sent, &entries, &naux, &moved, &reached, &edge) < 0) goto fail_parts;
        if (PyTuple_Check(reached) && PyTuple_GET_SIZE(reached)) {
            PyObject *r = PyObject_CallFunctionObjArgs(PyTuple_GET_ITEM(hooks, 1), label, reached, NULL);
            if (!r) goto fail_parts;
            Py_DECREF(r);
        }
        if (kn != c->f_known) { /* known: closed, or on the stack (a cycle) */
            if (kn == Py_None) {
                PyErr_SetString(PyExc_ValueError, "--metrics: a run can return to a world it passed (a cycle): runs must end");
                goto fail_parts;
            }
            if (loop_into(c, f, label, sent, entries, moved, edge, parts[0], naux, kn, &bbest, &nb, hooks) < 0)
                goto fail_parts;
            for (int k = 0; k < 5; k++) Py_DECREF(parts[k]);
            continue;
        }
        if (PyDict_SetItem(c->f_known, parts[3], Py_None) < 0) goto fail_parts;
        states++;
        if ((max_states >= 0 && states >= max_states) || states % LOOP_CHECK_EVERY == 0) {
            PyObject *r = PyObject_CallFunction(PyTuple_GET_ITEM(hooks, 4), "LL", states, transitions);
            if (!r) goto fail_parts;
            if (r != Py_None) {
                stopped = r;
                for (int k = 0; k < 5; k++) Py_DECREF(parts[k]);
                break;
            }
            Py_DECREF(r);
        }
        PyObject *labels = Core_steps(c, parts[0]);
        if (!labels) goto fail_parts;
        struct LFrame *g = lframe_push(c);
        if (!g) { Py_DECREF(labels); goto fail_parts; }
        f = NULL; /* the frames may have moved */
        g->world = Py_NewRef(parts[0]); g->aux = naux; g->labels = labels; g->label = Py_NewRef(label);
        g->edge = Py_NewRef(edge); g->key = Py_NewRef(parts[3]); g->moved = Py_NewRef(moved);
        g->sent = sent; g->entries = entries;
        for (int k = 0; k < 5; k++) Py_DECREF(parts[k]);
        if (!PyList_GET_SIZE(labels)) { /* nothing can move: a complete run ends here if all finished */
            long long ints[1] = {g->aux};
            PyObject *r = loop_call(PyTuple_GET_ITEM(hooks, 5), "oi", &g->world, ints);
            if (!r) goto fail;
            if (r != Py_None && !PyTuple_Check(r)) { /* never read as "no live request" */
                PyErr_Format(PyExc_TypeError, "climb: the final hook returned %.80R (%.80s), not a tuple of the "
                             "live requests' keys or None", r, Py_TYPE(r)->tp_name);
                Py_DECREF(r);
                goto fail;
            }
            if (r != Py_None) { /* the live requests' keys: their charges final */
                if (tris_widen(&g->runs, 0, 0, 0) < 0) { Py_DECREF(r); goto fail; }
                for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(r); j++) {
                    int64_t k = PyLong_AsLongLong(PyTuple_GET_ITEM(r, j));
                    if ((k == -1 && PyErr_Occurred()) || tris_widen(&g->charges, k, 0, 0) < 0) { Py_DECREF(r); goto fail; }
                }
            }
            Py_DECREF(r);
        }
        continue;
    fail_parts:
        for (int k = 0; k < 5; k++) Py_XDECREF(parts[k]);
        goto fail;
    }
    PyMem_RawFree(bbest);
    for (int j = 0; j < c->lf_n; j++) lframe_clear(&c->lf[j]); /* left by a stop */
    c->lf_n = 0;
    return Py_BuildValue("(LLNN)", states, transitions, rclosed ? rclosed : Py_NewRef(Py_None),
                         stopped ? stopped : Py_NewRef(Py_None));
fail:
    PyMem_RawFree(bbest);
    Py_XDECREF(rclosed);
    for (int j = 0; j < c->lf_n; j++) lframe_clear(&c->lf[j]);
    c->lf_n = 0;
    return NULL;
}

#endif
