/* One step taken alone, for the figures' search of ``check --metrics`` (check/metrics.py,
 * check/core.py's ``successor``): the model's successor of a world by a label on the core's
 * remembered tables (a transition, a link's or a pending set's edit, a holding change), then
 * normalised and sampled as the model's normalisation would be (_core_reduce.h). Included by
 * _core.c; PyCore.successor is its twin. */
#ifndef MUTEXLAB_CORE_STEP_H
#define MUTEXLAB_CORE_STEP_H

#define STEP_MAX_W 4096

/* A world given from Python into ``w`` (W ints): 0, or -1 with an error set. */
static int world_in(Core *c, PyObject *world, int32_t *w) {
    if (!PyTuple_Check(world) || c->W > STEP_MAX_W || PyTuple_GET_SIZE(world) != c->W) {
        PyErr_SetString(PyExc_ValueError, "not a world of this model");
        return -1;
    }
    for (int k = 0; k < c->W; k++) w[k] = (int32_t)PyLong_AsLong(PyTuple_GET_ITEM(world, k));
    return PyErr_Occurred() ? -1 : 0;
}

/* successor(world, label): the world reached, or None when the input is refused (an overfilled
 * resource is not looked at: the plain check before the figures found none). The caller passes
 * only a label the model enabled in ``world`` (model.steps()): its ids are not checked here. */
static PyObject *Core_successor(Core *c, PyObject *args) {
    PyObject *world;
    int32_t label[3], w[STEP_MAX_W];
    if (!PyArg_ParseTuple(args, "O!(iii)", &PyTuple_Type, &world, &label[0], &label[1], &label[2])) return NULL;
    if (world_in(c, world, w) < 0) return NULL;
    if (label[1] < 0 || label[1] >= (label[0] ? c->n : c->L) || label[0] < 0 || label[0] > 1) {
        PyErr_SetString(PyExc_ValueError, "not a label of this model (a delivery or a local decision)");
        return NULL;
    }
    int over, taken = take(c, w, label, &over);  /* an overfilled resource is not looked at */
    if (taken < 0) return NULL;
    if (taken != 1) Py_RETURN_NONE;  /* a finding's refusal or a dead end alike */
#ifndef MUTEXLAB_CORE_BROKEN_STEP /* the tests' deliberate break: the normalisation left out */
    if (c->norm && normal(c, w) < 0) return NULL;
#endif
    return world_tuple(w, c->W);
}

/* steps(world): the labels of every step possible in ``world``, [(kind, link or process, message
 * or action), ...] in model.steps()'s order (list_labels; the figures' search enters each new
 * world with them). The core's label arena is used above its top and left as it was. */
static PyObject *Core_steps(Core *c, PyObject *world) {
    int32_t w[STEP_MAX_W];
    if (world_in(c, world, w) < 0) return NULL;
    size_t from = c->labels.size;
    int32_t nlab = list_labels(c, w);
    if (nlab < 0) { c->labels.size = from; return NULL; }
#ifdef MUTEXLAB_CORE_BROKEN_STEPS /* the tests' deliberate break: a world's last step left out */
    if (nlab > 1) nlab--;
#endif
    PyObject *out = PyList_New(nlab);
    for (int32_t k = 0; out && k < nlab; k++) {
        const int32_t *at = &AT(c->labels, int32_t, from + 3 * (size_t)k);
        PyObject *l = PyTuple_New(3);
        for (int j = 0; l && j < 3; j++) {
            PyObject *x = PyLong_FromLong(at[j]);
            if (!x) Py_CLEAR(l);
            else PyTuple_SET_ITEM(l, j, x);
        }
        if (!l) { Py_CLEAR(out); break; }
        PyList_SET_ITEM(out, k, l);
    }
    c->labels.size = from;
    return out;
}

/* sampling(calls, due): the sampler's calls and next call due, as another normaliser of the
 * same sampler left them (the figures' witness walks step the model's own). */
static PyObject *Core_sampling(Core *c, PyObject *args) {
    long long calls, due;
    if (!PyArg_ParseTuple(args, "LL", &calls, &due)) return NULL;
    c->calls = calls;
    c->due = due;
    Py_RETURN_NONE;
}

#endif
