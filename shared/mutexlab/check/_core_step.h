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
    int n = c->n, W = c->W;
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
    int over, taken = take(c, w, label, &over);  /* an overfilled resource is not looked at */
    if (taken < 0) return NULL;
    if (!taken) Py_RETURN_NONE;
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
