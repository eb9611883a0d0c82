/* The augmented steps of ``check --metrics`` that enter and exit nothing, computed in C when
 * ``advance`` (_core_figures.h) finds one not remembered yet: what charges.py's ``Tracker.step``
 * and edges.py's ``Edges.step`` make of it (the augmented successor interned, moved, the bypass
 * plan), remembered in the search's own dictionary as ``Edges.step`` remembers it, without
 * calling back into Python. An entry or an exit, and a delivery of a message carrying hop
 * counts, are left to the Tracker (None). check/augment.py is the pure-Python twin, line for
 * line; tests/test_check_augment.py holds both to the Tracker's steps. Included by _core.c. */
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
    PyObject *e = Py_BuildValue("(llO)", kd, 0L, Py_True);
    if (!e) return -2;
    PyList_SetItem(live, key, e);
    q[0] = key; q[1] = kd; q[2] = key;
    return key;
}

/* edges.plan for a step entering nothing: (i, ((process, source or NONE, added), ...), opens). */
static PyObject *aug_plan(PyObject *old, PyObject *now, int i) {
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(old); j++) {
        long o0 = aug_int(PyTuple_GET_ITEM(old, j), 0);
        if (o0 == AUG_NONE) continue;
        PyObject *e;
        if (j != i) e = Py_BuildValue("(nnL)", j, j, 0LL);
        else if (aug_int(PyTuple_GET_ITEM(now, i), 0) == o0) e = Py_BuildValue("(niL)", j, i, 0LL);
        else e = Py_BuildValue("(niL)", j, AUG_NONE, AUG_NEG);
        if (!e || PyList_Append(out, e) < 0) { Py_XDECREF(e); Py_DECREF(out); return NULL; }
        Py_DECREF(e);
    }
    PyObject *mine = PyTuple_GET_ITEM(now, i);
    long m0 = aug_int(mine, 0), opens = (m0 != AUG_NONE && m0 != aug_int(PyTuple_GET_ITEM(old, i), 0)) ? aug_int(mine, 1) : AUG_NONE;
    PyObject *plan = PyList_AsTuple(out);
    Py_DECREF(out);
    return plan ? Py_BuildValue("(iNl)", i, plan, opens) : NULL;
}

/* augment.py's ``augment``: a new reference to the remembered step (successor's aux id, moved,
 * (), edge), Py_None when the Tracker must compute it, NULL on an error. */
static PyObject *augment(Core *c, long aux_id, long sig_id, PyObject *sends, uint64_t bits, int i) {
    PyObject *shown = PyList_GetItem(c->f_shown, sig_id), *aux = PyList_GetItem(c->f_auxes, aux_id);
    if (!shown || !aux) return NULL;
    if (!PyTuple_Check(shown) || PyTuple_GET_SIZE(shown) != 8) return Py_NewRef(Py_None); /* not edges.py's */
    if (PyTuple_GET_SIZE(PyTuple_GET_ITEM(shown, 6))) return Py_NewRef(Py_None); /* an entry or exit */
    long kind = aug_int(shown, 0), x = aug_int(shown, 1), noted = aug_int(shown, 2);
    long w0 = aug_int(shown, 3), w1 = aug_int(shown, 4);
    PyObject *tags = PyTuple_GET_ITEM(aux, 0), *procs = PyTuple_GET_ITEM(aux, 1), *live = PyTuple_GET_ITEM(aux, 2);
    PyObject *p = PyTuple_GET_ITEM(procs, i);
    long q[3] = {aug_int(p, 0), aug_int(p, 1), aug_int(p, 2)}, cause, freed = AUG_NONE;
    if (PyErr_Occurred()) return NULL;
    PyObject *charged = PyList_New(0), *closed = PyList_New(0), *ntags = NULL, *nprocs = NULL, *nlive = NULL;
    PyObject *naux = NULL, *moved = NULL, *edge = NULL, *got = NULL;
    if (!charged || !closed) goto done;
    if (kind == 1) { /* LOCAL */
        cause = q[2];
        ntags = Py_NewRef(tags);
    } else {
        PyObject *link = PyTuple_GET_ITEM(tags, x), *first = PyTuple_GET_ITEM(link, 0);
        if (PyTuple_GET_SIZE(PyTuple_GET_ITEM(first, 1))) { got = Py_NewRef(Py_None); goto done; } /* hops merged */
        cause = freed = aug_int(first, 0);
        ntags = PyTuple_New(PyTuple_GET_SIZE(tags));
        for (Py_ssize_t k = 0; ntags && k < PyTuple_GET_SIZE(tags); k++) {
            PyObject *e = k == x ? PyTuple_GetSlice(link, 1, PyTuple_GET_SIZE(link)) : Py_NewRef(PyTuple_GET_ITEM(tags, k));
            if (!e) Py_CLEAR(ntags);
            else PyTuple_SET_ITEM(ntags, k, e);
        }
        if (!ntags) goto done;
    }
    Py_ssize_t ns = PyTuple_GET_SIZE(sends);
    if (noted == AUG_NONE && !ns && (w1 == w0 || w1 == AUG_NONE) && q[1] == AUG_NONE) {
        nprocs = Py_NewRef(procs);
        nlive = Py_NewRef(live);
        if (freed != AUG_NONE) {
            int r = aug_referenced(freed, nprocs, ntags);
            if (r < 0) goto done;
            if (!r && !(nlive = aug_close(nlive, freed, closed))) goto done;
        }
    } else {
        PyObject *live_l = PySequence_List(live), *hops = PyTuple_GET_ITEM(p, 3);
        long old_own = q[2];
        if (!live_l) goto done;
        if (noted != AUG_NONE && (cause = aug_open(live_l, q, i, c->n, noted)) == -2) { Py_DECREF(live_l); goto done; }
        if (q[1] != AUG_NONE && w0 == q[1] && w1 != q[1]) { /* given up */
            PyObject *e = PyList_GET_ITEM(live_l, q[0]);
            PyObject *ne = PyTuple_Pack(3, PyTuple_GET_ITEM(e, 0), PyTuple_GET_ITEM(e, 1), Py_False);
            if (!ne) { Py_DECREF(live_l); goto done; }
            PyList_SetItem(live_l, q[0], ne);
            q[0] = q[1] = AUG_NONE;
        }
        if (w1 != AUG_NONE && w1 != w0 && q[1] != w1 && (cause = aug_open(live_l, q, i, c->n, w1)) == -2) {
            Py_DECREF(live_l);
            goto done;
        }
        if (ns) {
            PyObject *tags_l = PySequence_List(ntags);
            if (!tags_l) { Py_DECREF(live_l); goto done; }
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
                if (!grown) { Py_DECREF(tags_l); Py_DECREF(live_l); goto done; }
                PyList_SetItem(tags_l, k, grown);
            }
            Py_SETREF(ntags, PyList_AsTuple(tags_l));
            Py_DECREF(tags_l);
            if (!ntags) { Py_DECREF(live_l); goto done; }
        }
        nprocs = PyTuple_New(PyTuple_GET_SIZE(procs));
        for (Py_ssize_t j = 0; nprocs && j < PyTuple_GET_SIZE(procs); j++) {
            PyObject *e = j == i ? Py_BuildValue("(lllO)", q[0], q[1], q[2], hops) : Py_NewRef(PyTuple_GET_ITEM(procs, j));
            if (!e) Py_CLEAR(nprocs);
            else PyTuple_SET_ITEM(nprocs, j, e);
        }
        nlive = nprocs ? PyList_AsTuple(live_l) : NULL;
        Py_DECREF(live_l);
        if (!nlive) goto done;
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
    naux = PyTuple_Pack(4, ntags, nprocs, nlive, PyTuple_GET_ITEM(aux, 3));
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
    edge = any ? aug_plan(procs, nprocs, i) : Py_NewRef(Py_None);
    if (!edge || PyErr_Occurred()) goto done;
    PyObject *id = PyDict_GetItemWithError(c->f_ids, naux); /* borrowed */
    if (!id) {
        if (PyErr_Occurred()) goto done;
        PyObject *fresh = PyLong_FromSsize_t(PyList_GET_SIZE(c->f_auxes));
        if (!fresh || PyDict_SetItem(c->f_ids, naux, fresh) < 0 || PyList_Append(c->f_auxes, naux) < 0) {
            Py_XDECREF(fresh);
            goto done;
        }
        id = fresh;
        Py_DECREF(fresh); /* held by the dictionary */
    }
    PyObject *empty = PyTuple_New(0);
    got = empty ? PyTuple_Pack(4, id, moved, empty, edge) : NULL;
    Py_XDECREF(empty);
done:
    Py_XDECREF(charged); Py_XDECREF(closed); Py_XDECREF(ntags); Py_XDECREF(nprocs); Py_XDECREF(nlive);
    Py_XDECREF(naux); Py_XDECREF(moved); Py_XDECREF(edge);
    return got;
}

#endif
