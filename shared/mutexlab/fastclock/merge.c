/* A receive's merge of two local-event clocks in one pass (mutexlab/fastclock/__init__.py).
 *
 * merge(mine, theirs, spare) -> bool: mine, theirs and spare are C-contiguous int32 buffers of one
 * length. When some entry of theirs exceeds mine's, spare receives the element-wise maximum and
 * the result is True; otherwise nothing is written and the result is False. mine and theirs are
 * only read. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

static PyObject *merge(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Py_buffer a, b, c;
    PyObject *result = NULL;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "merge(mine, theirs, spare) takes 3 arguments");
        return NULL;
    }
    if (PyObject_GetBuffer(args[0], &a, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return NULL;
    if (PyObject_GetBuffer(args[1], &b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) goto release_a;
    if (PyObject_GetBuffer(args[2], &c, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0) goto release_b;
    if (a.len != b.len || a.len != c.len || a.itemsize != 4 || b.itemsize != 4 || c.itemsize != 4) {
        PyErr_SetString(PyExc_ValueError, "merge: three int32 buffers of one length expected");
        goto release_c;
    }
    {
        const int32_t *mine = (const int32_t *)a.buf, *theirs = (const int32_t *)b.buf;
        int32_t *out = (int32_t *)c.buf;
        Py_ssize_t n = a.len / (Py_ssize_t)sizeof(int32_t), i = 0;
        while (i < n && theirs[i] <= mine[i]) i++;
        if (i == n) {
            result = Py_False;
        } else {
            memcpy(out, mine, (size_t)i * sizeof(int32_t));
            for (; i < n; i++) out[i] = theirs[i] > mine[i] ? theirs[i] : mine[i];
            result = Py_True;
        }
        Py_INCREF(result);
    }
release_c:
    PyBuffer_Release(&c);
release_b:
    PyBuffer_Release(&b);
release_a:
    PyBuffer_Release(&a);
    return result;
}

static PyMethodDef methods[] = {
    {"merge", (PyCFunction)(void (*)(void))merge, METH_FASTCALL, "merge(mine, theirs, spare) -> bool"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_mutexlab_merge", NULL, -1, methods};

PyMODINIT_FUNC PyInit__mutexlab_merge(void) { return PyModule_Create(&module); }
