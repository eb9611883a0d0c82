/* The remembered steps of the figures' search (check/metrics.py, check/edges.py) looked up in C:
 * ``advance`` takes a step on the core's tables (``take``, the normalisation) and then asks,
 * without running any Python, the search's own dictionaries what edges.py would: the step's
 * signature, which receivers await its messages, the remembered augmented step, and whether
 * the augmented world it leads to is known. The dictionaries stay the search's (Python fills
 * them on a miss): C only reads them, so a hit is what the Python lookups would have found.
 * Included by _core.c; PyCore.advance is its twin. */
#ifndef MUTEXLAB_CORE_FIGURES_H
#define MUTEXLAB_CORE_FIGURES_H

/* figures(sigs, awaits, remembered, known, auxes, keyof): the search's dictionaries (edges.py's
 * _sigs, _awaits, _edges; metrics.py's known), interned augmented parts and key of an augmented
 * world (metrics.py's keyof: builtin hash is taken in C, anything else called), read by advance. */
static PyObject *Core_figures(Core *c, PyObject *args) {
    PyObject *sigs, *awaits, *remembered, *known, *auxes, *keyof;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O", &PyDict_Type, &sigs, &PyDict_Type, &awaits, &PyDict_Type,
                          &remembered, &PyDict_Type, &known, &PyList_Type, &auxes, &keyof))
        return NULL;
    PyObject *hash = PyDict_GetItemString(PyEval_GetBuiltins(), "hash");  /* borrowed */
    Py_XSETREF(c->f_keyof, keyof == hash ? NULL : Py_NewRef(keyof));
    Py_XSETREF(c->f_sigs, Py_NewRef(sigs));
    Py_XSETREF(c->f_awaits, Py_NewRef(awaits));
    Py_XSETREF(c->f_edges, Py_NewRef(remembered));
    Py_XSETREF(c->f_known, Py_NewRef(known));
    Py_XSETREF(c->f_auxes, Py_NewRef(auxes));
    Py_RETURN_NONE;
}

/* Item ``j`` of ``t``, a tuple handed in from Python as ``what`` (borrowed): NULL with a
 * TypeError when ``t`` is not a tuple, or an IndexError naming ``j`` when it is out of range,
 * never a read past the tuple's end. */
static PyObject *item(PyObject *t, Py_ssize_t j, const char *what) {
    if (!PyTuple_Check(t)) {
        PyErr_Format(PyExc_TypeError, "%s: a tuple expected, not %.80s", what, Py_TYPE(t)->tp_name);
        return NULL;
    }
    if (j < 0 || j >= PyTuple_GET_SIZE(t)) {
        PyErr_Format(PyExc_IndexError, "%s: index %zd out of range (%zd items)", what, j, PyTuple_GET_SIZE(t));
        return NULL;
    }
    return PyTuple_GET_ITEM(t, j);
}

/* The interned aux of id ``aux`` (borrowed), a tuple: NULL with an IndexError naming the id. */
static PyObject *aux_at(Core *c, long aux) {
    if (aux < 0 || aux >= PyList_GET_SIZE(c->f_auxes)) {
        PyErr_Format(PyExc_IndexError, "figures: aux id %ld out of range (%zd interned)", aux,
                     PyList_GET_SIZE(c->f_auxes));
        return NULL;
    }
    PyObject *a = PyList_GET_ITEM(c->f_auxes, aux);
    if (!PyTuple_Check(a) || PyTuple_GET_SIZE(a) < 3) {
        PyErr_Format(PyExc_TypeError, "figures: aux %ld is not a (key, processes, live) tuple", aux);
        return NULL;
    }
    return a;
}

/* A dictionary's value for the tuple of ``k`` items (borrowed), NULL when missing or on an
 * error (PyErr_Occurred tells). */
static PyObject *lookup(PyObject *dict, PyObject *key) {
    if (!key) return NULL;
    PyObject *got = PyDict_GetItemWithError(dict, key);
    Py_DECREF(key);
    return got;
}

/* advance(world, label, aux id): None when the input is refused, else (successor, stepping
 * process, signature, remembered step, key, known's value). From the signature on, a miss
 * leaves None in its place and in those after it (the caller computes them as edges.py does);
 * a key not known gives the ``known`` dictionary itself (metrics.py's ``known.get(key, known)``). */
/* advance's work, for it and for the figures' loop (_core_loop.h): -1 on an error, 0 when the
 * input is refused, else 1 with ``out`` = (successor, signature, remembered step, key, known's
 * value) as new references (None for each missed) and ``*who`` the stepping process. */
static int advance_parts(Core *c, PyObject *world, PyObject *label, long aux, PyObject **out, int *who) {
    PyObject *nxt = NULL, *sig, *edge = NULL, *key = NULL, *kn;
    int32_t lab[3], w[STEP_MAX_W];
    if (!c->f_sigs) {
        PyErr_SetString(PyExc_RuntimeError, "advance: figures() not given");
        return -1;
    }
    if (PyTuple_GET_SIZE(label) != 3) {
        PyErr_SetString(PyExc_ValueError, "not a label of this model (a delivery or a local decision)");
        return -1;
    }
    for (int k = 0; k < 3; k++) lab[k] = (int32_t)PyLong_AsLong(PyTuple_GET_ITEM(label, k));
    if (PyErr_Occurred() || world_in(c, world, w) < 0) return -1;
    if (lab[1] < 0 || lab[1] >= (lab[0] ? c->n : c->L) || lab[0] < 0 || lab[0] > 1) {
        PyErr_SetString(PyExc_ValueError, "not a label of this model (a delivery or a local decision)");
        return -1;
    }
    int over, taken = take(c, w, lab, &over);
    if (taken < 0) return -1;
    if (taken != 1) return 0;  /* a finding's refusal or a dead end alike */
    if (c->norm && normal(c, w) < 0) return -1;
    int i = lab[0] ? lab[1] : c->link_to[lab[1]];
    *who = i;
    nxt = world_tuple(w, c->W);
    if (!nxt) return -1;
    sig = lookup(c->f_sigs, PyTuple_Pack(2, label, PyTuple_GET_ITEM(world, i)));
    if (!sig) goto miss;
    if (!PyTuple_Check(sig) || PyTuple_GET_SIZE(sig) != 4) {
        PyErr_SetString(PyExc_TypeError, "advance: a signature is (id, sends, entered, counts)");
        goto fail0;
    }
    sig = Py_NewRef(sig);  /* (signature id, sends, entered, counts) */
    PyObject *sends = item(sig, 1, "advance: a signature's sends"), *procs = NULL;
    if (!sends || !PyTuple_Check(sends)) {
        if (!sends) goto fail;
        PyErr_SetString(PyExc_TypeError, "advance: a signature's sends are a tuple");
        goto fail;
    }
    uint64_t bits = 0;
    Py_ssize_t ns = PyTuple_GET_SIZE(sends);
    if (ns > 62) goto missed;  /* more bits than a word: the caller computes them */
    for (Py_ssize_t b = 0; b < ns; b++) {
        PyObject *send = PyTuple_GET_ITEM(sends, b);  /* (link, message id) */
        PyObject *link = item(send, 0, "advance: a send (link, message id)");
        PyObject *mid = link ? item(send, 1, "advance: a send (link, message id)") : NULL;
        if (!mid) goto fail;
        long k = PyLong_AsLong(link);
        if (k == -1 && PyErr_Occurred()) goto fail;
        if (k < 0 || k >= c->L) goto missed;
        int q = c->link_to[k];
        if (!procs) {
            PyObject *a = aux_at(c, aux);
            if (!a) goto fail;
            procs = PyTuple_GET_ITEM(a, 1);  /* per process (open, kind, own, hops) */
        }
        PyObject *proc = item(procs, q, "advance: an aux's processes");
        PyObject *opened = proc ? item(proc, 0, "advance: an aux's process (open, kind, own, hops)") : NULL;
        if (!opened) goto fail;
        long open = PyLong_AsLong(opened);
        if (open == -1 && PyErr_Occurred()) goto fail;
        if (open == -1) continue;  /* charges.NONE: no request open, nothing awaited */
        PyObject *i_obj = PyLong_FromLong(i);
        if (!i_obj) goto fail;
        PyObject *got = lookup(c->f_awaits, PyTuple_Pack(3, PyTuple_GET_ITEM(nxt, q), mid, i_obj));
        Py_DECREF(i_obj);
        if (!got) goto missed;
        int yes = PyObject_IsTrue(got);
        if (yes < 0) goto fail;
        if (yes) bits |= (uint64_t)1 << b;
    }
    PyObject *aux_obj = PyLong_FromLong(aux), *bits_obj = PyLong_FromUnsignedLongLong(bits);
    if (!aux_obj || !bits_obj) { Py_XDECREF(aux_obj); Py_XDECREF(bits_obj); goto fail; }
    PyObject *akey = PyTuple_Pack(3, aux_obj, PyTuple_GET_ITEM(sig, 0), bits_obj);
    Py_DECREF(aux_obj); Py_DECREF(bits_obj);
    if (!akey) goto fail;
    edge = PyDict_GetItemWithError(c->f_edges, akey);
    if (edge) {
        edge = Py_NewRef(edge);  /* kept: keyof below may run Python code */
    } else if (!PyErr_Occurred() && c->f_shown) {  /* not remembered: computed here if it can be */
        long sid = PyLong_AsLong(PyTuple_GET_ITEM(sig, 0));
        edge = PyErr_Occurred() ? NULL : augment(c, aux, sid, sends, bits, i);
        if (edge == Py_None) Py_CLEAR(edge);  /* the Tracker's: the caller asks it */
        else if (edge && PyDict_SetItem(c->f_edges, akey, edge) < 0) Py_CLEAR(edge);
    }
    Py_DECREF(akey);
    if (!edge) goto missed;
    if (!PyTuple_Check(edge) || PyTuple_GET_SIZE(edge) != 4) {  /* edge is owned here: fail releases it */
        PyErr_SetString(PyExc_TypeError, "advance: a remembered step is (aux id, moved, reached, edge)");
        goto fail;
    }
    /* (successor's aux id, moved, figures reached, bypass plan): the key of (nxt, its aux id) */
    key = PyTuple_Pack(2, nxt, PyTuple_GET_ITEM(edge, 0));
    if (!key) goto fail;
    if (c->f_keyof) {
        Py_SETREF(key, PyObject_CallOneArg(c->f_keyof, key));
    } else {  /* metrics.py's fingerprint: hash() of the pair */
#ifdef MUTEXLAB_CORE_BROKEN_KEY /* the tests' deliberate break: the model's world alone, no history */
        Py_SETREF(key, Py_NewRef(nxt));
#endif
        Py_hash_t h = PyObject_Hash(key);
        Py_SETREF(key, h == -1 ? NULL : PyLong_FromSsize_t(h));
    }
    if (!key) goto fail;
    kn = PyDict_GetItemWithError(c->f_known, key);
    if (!kn) {
        if (PyErr_Occurred()) goto fail;
        kn = c->f_known;
    }
    out[0] = nxt; out[1] = sig; out[2] = edge; out[3] = key; out[4] = Py_NewRef(kn);
    return 1;
missed:
    if (PyErr_Occurred()) goto fail;
    out[0] = nxt; out[1] = sig; out[2] = Py_NewRef(Py_None); out[3] = Py_NewRef(Py_None); out[4] = Py_NewRef(Py_None);
    Py_XDECREF(edge);
    Py_XDECREF(key);
    return 1;
miss:
    if (PyErr_Occurred()) goto fail0;
    out[0] = nxt;
    for (int k = 1; k < 5; k++) out[k] = Py_NewRef(Py_None);
    return 1;
fail:
    Py_XDECREF(edge);
    Py_DECREF(sig);
fail0:
    Py_XDECREF(key);
    Py_DECREF(nxt);
    return -1;
}

static PyObject *Core_advance(Core *c, PyObject *args) {
    PyObject *world, *label, *out[5];
    long aux;
    int i = 0;
    if (!PyArg_ParseTuple(args, "O!O!l", &PyTuple_Type, &world, &PyTuple_Type, &label, &aux)) return NULL;
    int got = advance_parts(c, world, label, aux, out, &i);
    if (got < 0) return NULL;
    if (!got) Py_RETURN_NONE;
    return Py_BuildValue("(NiNNNN)", out[0], i, out[1], out[2], out[3], out[4]);
}

#endif
