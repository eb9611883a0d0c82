/* One step taken alone, for the figures' search of ``check --metrics`` (check/metrics.py,
 * check/core.py's ``successor``): the model's successor of a world by a label on the core's
 * remembered tables (a transition, a link's or a pending set's edit, a holding change), then
 * normalised and sampled as the model's normalisation would be (_core_reduce.h). Included by
 * _core.c; PyCore.successor is its twin. */
#ifndef MUTEXLAB_CORE_STEP_H
#define MUTEXLAB_CORE_STEP_H

#define STEP_MAX_W 4096

/* successor(world, label): the world reached, or None when the input is refused (an overfilled
 * resource is not looked at: the plain check before the figures found none). The caller passes
 * only a label the model enabled in ``world`` (model.steps()): its ids are not checked here. */
static PyObject *Core_successor(Core *c, PyObject *args) {
    PyObject *world;
    int32_t label[3], w[STEP_MAX_W];
    if (!PyArg_ParseTuple(args, "O!(iii)", &PyTuple_Type, &world, &label[0], &label[1], &label[2])) return NULL;
    int n = c->n, W = c->W, P0 = c->P0, H = c->H;
    if (W > STEP_MAX_W || PyTuple_GET_SIZE(world) != W) {
        PyErr_SetString(PyExc_ValueError, "not a world of this model");
        return NULL;
    }
    if (label[1] < 0 || label[1] >= (label[0] ? n : c->L) || label[0] < 0 || label[0] > 1) {
        PyErr_SetString(PyExc_ValueError, "not a label of this model (a delivery or a local decision)");
        return NULL;
    }
    for (int k = 0; k < W; k++) w[k] = (int32_t)PyLong_AsLong(PyTuple_GET_ITEM(world, k));
    if (PyErr_Occurred()) return NULL;
    int i, code;
    if (label[0]) {  /* a local decision */
        i = label[1];
        int64_t q = edit(c, &c->drop, "drop", w[P0 + i], label[2]);
        if (q == EMPTY) return NULL;
        w[P0 + i] = (int32_t)q;
        code = 2 * label[2] + 1;
    } else {  /* the oldest message of a link */
        int32_t *info = seqinfo(c, w[n + label[1]]);
        if (!info) return NULL;
        w[n + label[1]] = info[0];
        i = c->link_to[label[1]];
        code = 2 * label[2];
    }
    int32_t *t = transition(c, w[i], code);
    if (!t) return NULL;
    if (t[0] < 0) Py_RETURN_NONE;
    w[i] = t[0];
    const int32_t *p = &AT(c->pool, int32_t, t[2]);
    for (int k = 0; k < t[3]; k++, p += 2) {
        int64_t q = edit(c, &c->push, "push", w[n + p[0]], p[1]);
        if (q == EMPTY) return NULL;
        w[n + p[0]] = (int32_t)q;
    }
    for (int k = 0; k < t[4]; k++, p++) {
        int64_t q = edit(c, &c->add, "add", w[P0 + i], *p);
        if (q == EMPTY) return NULL;
        w[P0 + i] = (int32_t)q;
    }
    if (t[1] >= 0) {
        int64_t h = edit(c, &c->hold, "hold", w[H], t[1]);
        if (h == EMPTY) return NULL;
        w[H] = (int32_t)(h >> 1);
    }
    c->transitions++;
#ifndef MUTEXLAB_CORE_BROKEN_STEP /* the tests' deliberate break: the normalisation left out */
    if (c->norm && normal(c, w) < 0) return NULL;
#endif
    return world_tuple(w, W);
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
