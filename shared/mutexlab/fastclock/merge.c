/* Local-event clocks in C (mutexlab/fastclock/__init__.py): a receive's merge and a local event's
 * tick, the very steps of clock.LocalEventClock, without the interpreter.
 *
 * merge(mine, theirs, spare) -> bool: mine, theirs and spare are C-contiguous int32 buffers of one
 * length. When some entry of theirs exceeds mine's, spare receives the element-wise maximum and
 * the result is True; otherwise nothing is written and the result is False. mine and theirs are
 * only read.
 *
 * Family(zero, serial=0): the serials of one family of clocks (zero: its array of n zeros, every
 * clock's first counts, array("B") or array("i"); serial: the last one given out before the first). Clock(family, own): one process's clock, with counts, token (serial, counts, own),
 * tick() and merge(token) as clock.LocalEventClock has them. Invariants: a counts array is never
 * written once it is a clock's (a change makes a new one, by the array's own __copy__); serials
 * are given out one after another by the family, one per tick and one per merge that brings news;
 * last[s] is the serial of the last token merge() read from sender s (merge_unseen reads and leaves it), in 32 bits (half the memory of
 * the P×P table, whose one random read per receive is the merge's costliest load at P = 400): a
 * serial beyond them is kept as 0, which no token's serial equals, so such a token is compared.
 *
 * Narrow counts (the one place they are decided): a counts array holds its entries in one byte
 * each (array("B"): narrow) or in 32 bits (array("i"): wide). A family whose zero is narrow starts
 * every clock narrow; a tick past 255 makes that clock's array wide (widen), and a merge gives the
 * wider of the two widths whenever it makes a new array, so a clock once wide stays wide. The
 * entries, the serials and so every token's counts read as the same numbers as with wide arrays
 * alone (tests/test_fastclock.py compares both, and numpy's clocks, across 255). What it buys: a
 * receive at bees P = 400 compares 2 × 400 bytes instead of 2 × 1,600, and the arrays that messages
 * in flight keep alive take a quarter of the memory (the audit's cost grew with P through them).
 *
 * A receive without a copy (tests/test_fastclock_reuse.py holds it to a plain clock): a clock reads
 * its own counts through a view it holds (Clock.view), not through a buffer call on the array each
 * receive; whether the clock is `alone` is asked only on news; and when it is, the news is written
 * into its array and its token tuple takes the new serial itself (take): a receive with news then
 * allocates the serial alone. Nothing another holds is ever written: `alone` is that nothing does. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <structmember.h>

#define NARROW_MAX 255 /* the largest count a narrow array holds */

/* Sixteen bytes as one value (gcc's and clang's vector extension): a comparison of two is one
 * instruction on x86-64's SSE2 and arm64's NEON, with no intrinsics tied to either. A block is
 * four of them, 16 wide entries, or two, 32 narrow ones. */
typedef int32_t quad __attribute__((vector_size(16)));
typedef uint8_t bytes16 __attribute__((vector_size(16)));
typedef int8_t mask16 __attribute__((vector_size(16))); /* what comparing two bytes16 gives */

/* The first i with theirs[i] > mine[i], or n (name, entry type, vector type, its comparison's
 * type, entries per vector, vectors per block). Each block is compared with the results or-ed (no
 * branch inside a block: gcc 12 at -O3 had left the plain loop one entry at a time); the block
 * with news is then searched entry by entry. The entries after the last whole block are compared
 * as the block that ends at n (it overlaps the one before: n = 400 narrow is 12 blocks and 16
 * entries), entry by entry only when it has news or n is below a block. */
#define FIRST_NEWS(name, T, V, M, LANES, VECTORS)                                                              \
    static inline int name##_block(const T *mine, const T *theirs) {                                           \
        M news = {0};                                                                                          \
        for (int j = 0; j < (VECTORS) * (LANES); j += (LANES)) {                                               \
            V t, m;                                                                                            \
            memcpy(&t, theirs + j, sizeof t); /* unaligned loads: the arrays are Python's */                   \
            memcpy(&m, mine + j, sizeof m);                                                                    \
            news |= t > m;                                                                                     \
        }                                                                                                      \
        uint64_t any[2];                                                                                       \
        memcpy(any, &news, sizeof any);                                                                        \
        return (any[0] | any[1]) != 0;                                                                         \
    }                                                                                                          \
    static Py_ssize_t name(const T *mine, const T *theirs, Py_ssize_t n) {                                     \
        const Py_ssize_t block = (VECTORS) * (LANES);                                                          \
        Py_ssize_t i = 0;                                                                                      \
        for (; i + block <= n; i += block)                                                                     \
            if (name##_block(mine + i, theirs + i)) break;                                                     \
        if (i < n && n >= block && i + block > n && !name##_block(mine + n - block, theirs + n - block))       \
            return n; /* the tail, as the block ending at n: no news */                                        \
        while (i < n && theirs[i] <= mine[i]) i++;                                                             \
        return i;                                                                                              \
    }

/* counts = max(counts, theirs) in place from `from` on, as a mask (theirs > counts) picks: no
 * branch per entry, which the compiler makes vector compares and selects. */
#define RAISE_TO(name, T)                                                                                      \
    static void name(T *restrict counts, const T *restrict theirs, Py_ssize_t from, Py_ssize_t n) {            \
        for (Py_ssize_t i = from; i < n; i++) {                                                                \
            T t = theirs[i], c = counts[i], greater = (T)(-(T)(t > c));                                        \
            counts[i] = (t & greater) | (c & ~greater);                                                        \
        }                                                                                                      \
    }

FIRST_NEWS(first_news, int32_t, quad, quad, 4, 4)
FIRST_NEWS(first_news_narrow, uint8_t, bytes16, mask16, 16, 2)
RAISE_TO(raise_to, int32_t)
RAISE_TO(raise_to_narrow, uint8_t)

/* Entry i of a counts buffer, narrow or wide. */
static inline int32_t entry_at(const void *buf, int wide, Py_ssize_t i) {
    return wide ? ((const int32_t *)buf)[i] : (int32_t)((const uint8_t *)buf)[i];
}

/* first_news for two arrays of different widths (after a clock widened: rare), entry by entry. */
static Py_ssize_t first_news_mixed(const void *mine, int mine_wide, const void *theirs, int theirs_wide, Py_ssize_t n) {
    Py_ssize_t i = 0;
    for (; i < n && entry_at(theirs, theirs_wide, i) <= entry_at(mine, mine_wide, i); i++) {
    }
    return i;
}

/* theirs' entries raised into a wide counts array, theirs narrow or wide (as raise_to). */
static void raise_wide(int32_t *counts, const void *theirs, int theirs_wide, Py_ssize_t from, Py_ssize_t n) {
    if (theirs_wide) {
        raise_to(counts, (const int32_t *)theirs, from, n);
        return;
    }
    for (Py_ssize_t i = from; i < n; i++) {
        int32_t t = ((const uint8_t *)theirs)[i];
        if (t > counts[i]) counts[i] = t;
    }
}

static int int32_buffer(PyObject *obj, Py_buffer *view, int flags, Py_ssize_t n) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | flags) < 0) return -1;
    if (view->itemsize != 4 || (n >= 0 && view->len != n * 4)) {
        PyErr_SetString(PyExc_ValueError, "merge: int32 buffers of one length expected");
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* A clock's counts: n entries, narrow (array "B") or wide (32 bits, as int32_buffer). */
static int counts_buffer(PyObject *obj, Py_buffer *view, int flags, Py_ssize_t n) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | flags) < 0) return -1;
    int narrow = view->itemsize == 1 && view->format != NULL && strcmp(view->format, "B") == 0;
    if (!(narrow || view->itemsize == 4) || (n >= 0 && view->len != n * view->itemsize)) {
        PyErr_SetString(PyExc_ValueError, "merge: counts of n entries, array(\"B\") or int32, expected");
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static PyObject *merge(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Py_buffer a, b, c;
    PyObject *result = NULL;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "merge(mine, theirs, spare) takes 3 arguments");
        return NULL;
    }
    if (int32_buffer(args[0], &a, 0, -1) < 0) return NULL;
    Py_ssize_t n = a.len / 4;
    if (int32_buffer(args[1], &b, 0, n) < 0) goto release_a;
    if (PyObject_GetBuffer(args[2], &c, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0) goto release_b;
    if (c.itemsize != 4 || c.len != a.len) {
        PyErr_SetString(PyExc_ValueError, "merge: three int32 buffers of one length expected");
        goto release_c;
    }
    {
        const int32_t *mine = (const int32_t *)a.buf, *theirs = (const int32_t *)b.buf;
        Py_ssize_t i = first_news(mine, theirs, n);
        if (i < n) {
            memcpy(c.buf, mine, (size_t)n * sizeof(int32_t));
            raise_to((int32_t *)c.buf, theirs, i, n);
        }
        result = i < n ? Py_True : Py_False;
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

static PyObject *str_copy; /* "__copy__": how a counts array is copied, as the plain clock does */

/* -- Family ---------------------------------------------------------------------------------- */
typedef struct {
    PyObject_HEAD
    long long serial; /* the last serial given out */
    Py_ssize_t n;
    PyObject *zero;
} Family;

static int Family_init(Family *self, PyObject *args, PyObject *kwds) {
    PyObject *zero;
    Py_buffer view;
    long long serial = 0; /* where the serials start (a test's: beyond 32 bits) */
    if (!PyArg_ParseTuple(args, "O|L:Family", &zero, &serial)) return -1;
    if (self->zero != NULL) { /* its clocks' last[] are sized by n: n is fixed once */
        PyErr_SetString(PyExc_TypeError, "Family: initialised once");
        return -1;
    }
    if (serial < 0) {
        PyErr_SetString(PyExc_ValueError, "Family: serials start at 0 or above");
        return -1;
    }
    if (counts_buffer(zero, &view, 0, -1) < 0) return -1;
    self->n = view.len / view.itemsize;
    PyBuffer_Release(&view);
    Py_INCREF(zero);
    Py_XSETREF(self->zero, zero);
    self->serial = serial;
    return 0;
}

static void Family_dealloc(Family *self) {
    Py_XDECREF(self->zero);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Family_next_serial(Family *self, PyObject *unused) { return PyLong_FromLongLong(++self->serial); }

static PyMethodDef Family_methods[] = {
    {"next_serial", (PyCFunction)Family_next_serial, METH_NOARGS, "the next serial of the family"},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef Family_members[] = {
    {"zero", T_OBJECT, offsetof(Family, zero), READONLY, "the family's array of zeros"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject FamilyType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "_mutexlab_merge.Family",
    .tp_basicsize = sizeof(Family),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Family_init,
    .tp_dealloc = (destructor)Family_dealloc,
    .tp_methods = Family_methods,
    .tp_members = Family_members,
};

/* A serial as last[] keeps it: itself when it fits in 32 bits, else 0, which no serial read
 * against last[] equals (serial 0, the family's zero, is taken before; a larger one never skips). */
static inline uint32_t kept(long long serial) { return serial > 0 && serial <= UINT32_MAX ? (uint32_t)serial : 0; }

/* -- Clock ----------------------------------------------------------------------------------- */
typedef struct {
    PyObject_HEAD
    Family *family;
    Py_ssize_t own;
    PyObject *own_index; /* own, as the int a token carries */
    PyObject *counts;
    PyObject *token;
    uint32_t *last;
    /* Held view (the one fast-path place): counts' buffer, held for as long as counts is the
     * clock's, so a receive reads its entries through `mine` without asking the array for them
     * (no buffer call, no load of the array's header: a cold line per receive at P = 400). The
     * view holds a reference to counts (so "the clock and its token alone" is 3, see `alone`) and
     * an export, which keeps the array from being resized under `mine`. */
    Py_buffer view;
    int viewed;
} Clock;



static int Clock_init(Clock *self, PyObject *args, PyObject *kwds) {
    PyObject *family;
    Py_ssize_t own;
    if (!PyArg_ParseTuple(args, "O!n:Clock", &FamilyType, &family, &own)) return -1;
    if (self->family != NULL) { /* its tokens name its family and index: both fixed once */
        PyErr_SetString(PyExc_TypeError, "Clock: initialised once");
        return -1;
    }
    Family *f = (Family *)family;
    if (f->zero == NULL || own < 0 || own >= f->n) {
        PyErr_SetString(PyExc_IndexError, "Clock: own index outside the family");
        return -1;
    }
    Py_buffer view;
    if (counts_buffer(f->zero, &view, 0, f->n) < 0) return -1;
    uint32_t *last = PyMem_Calloc((size_t)f->n, sizeof(uint32_t));
    PyObject *index = PyLong_FromSsize_t(own);
    PyObject *zero_serial = PyLong_FromLong(0);
    PyObject *token = index && zero_serial ? PyTuple_Pack(3, zero_serial, f->zero, index) : NULL;
    Py_XDECREF(zero_serial);
    if (last == NULL || token == NULL) {
        PyBuffer_Release(&view);
        PyMem_Free(last);
        Py_XDECREF(index);
        Py_XDECREF(token);
        if (!PyErr_Occurred()) PyErr_NoMemory();
        return -1;
    }
    Py_INCREF(family);
    Py_XSETREF(self->family, f);
    self->own = own;
    Py_XSETREF(self->own_index, index);
    Py_INCREF(f->zero);
    Py_XSETREF(self->counts, f->zero);
    Py_XSETREF(self->token, token);
    PyMem_Free(self->last);
    self->last = last;
    self->view = view;
    self->viewed = 1;
    return 0;
}

static void Clock_dealloc(Clock *self) {
    if (self->viewed) PyBuffer_Release(&self->view);
    Py_XDECREF(self->family);
    Py_XDECREF(self->own_index);
    Py_XDECREF(self->counts);
    Py_XDECREF(self->token);
    PyMem_Free(self->last);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* counts becomes the clock's, under the family's next serial; a new reference to its token.
 * `same`: counts is already the clock's, its news written in place, and the token is held by the
 * clock alone (merge_token's `alone`): the token itself takes the new serial (nobody else can see
 * the tuple change), and the receive makes no tuple and frees none. */
static PyObject *take(Clock *self, PyObject *counts, int same) {
    PyObject *serial = PyLong_FromLongLong(self->family->serial + 1);
    PyObject *token = serial == NULL || same ? NULL : PyTuple_New(3);
    Py_buffer view;
    if (serial == NULL || (!same && (token == NULL || counts_buffer(counts, &view, 0, self->family->n) < 0))) {
        Py_XDECREF(serial);
        Py_XDECREF(token);
        Py_DECREF(counts);
        return NULL;
    }
    self->family->serial++;
    if (same) {
        PyObject *old = PyTuple_GET_ITEM(self->token, 0);
        PyTuple_SET_ITEM(self->token, 0, serial);
        Py_DECREF(old);
        Py_DECREF(counts);
        return Py_NewRef(self->token);
    }
    Py_INCREF(counts);
    Py_INCREF(self->own_index);
    PyTuple_SET_ITEM(token, 0, serial);
    PyTuple_SET_ITEM(token, 1, counts);
    PyTuple_SET_ITEM(token, 2, self->own_index);
    if (self->viewed) PyBuffer_Release(&self->view);
    self->view = view; /* the new counts' view is held from now on */
    self->viewed = 1;
    Py_SETREF(self->counts, counts);
    Py_SETREF(self->token, token);
    Py_INCREF(token);
    return token;
}

/* A narrow counts array as a new wide one, entry for entry (a tick past NARROW_MAX, or a merge of
 * a narrow clock with a wide token that brings news). */
static PyObject *widen(PyObject *narrow) {
    PyObject *wide = PyObject_CallFunction((PyObject *)Py_TYPE(narrow), "sO", "i", narrow);
    if (wide != NULL && PyObject_CheckBuffer(wide)) {
        Py_buffer view;
        if (PyObject_GetBuffer(wide, &view, PyBUF_FORMAT) < 0) {
            Py_DECREF(wide);
            return NULL;
        }
        Py_ssize_t itemsize = view.itemsize;
        PyBuffer_Release(&view);
        if (itemsize == 4) return wide;
    }
    Py_XDECREF(wide);
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "widen: no 32-bit array of the counts' type");
    return NULL;
}

static PyObject *Clock_tick(Clock *self, PyObject *unused) {
    if (self->counts == NULL) {
        PyErr_SetString(PyExc_ValueError, "Clock not initialised");
        return NULL;
    }
    PyObject *counts = PyObject_CallMethodNoArgs(self->counts, str_copy);
    Py_buffer view;
    if (counts == NULL) return NULL;
    if (counts_buffer(counts, &view, PyBUF_WRITABLE, self->family->n) < 0) {
        Py_DECREF(counts);
        return NULL;
    }
    if (view.itemsize == 1 && ((uint8_t *)view.buf)[self->own] == NARROW_MAX) { /* one more needs 32 bits */
        PyBuffer_Release(&view);
        Py_SETREF(counts, widen(counts));
        if (counts == NULL) return NULL;
        if (counts_buffer(counts, &view, PyBUF_WRITABLE, self->family->n) < 0) {
            Py_DECREF(counts);
            return NULL;
        }
    }
    if (view.itemsize == 1) { /* narrow, below NARROW_MAX */
        ((uint8_t *)view.buf)[self->own] += 1;
        PyBuffer_Release(&view);
        return take(self, counts, 0);
    }
    int32_t *entry = (int32_t *)view.buf + self->own;
    int overflow = *entry == INT32_MAX;
    if (!overflow) *entry += 1;
    PyBuffer_Release(&view);
    if (overflow) {
        Py_DECREF(counts);
        PyErr_SetString(PyExc_OverflowError, "a local-event count beyond int32");
        return NULL;
    }
    return take(self, counts, 0);
}

/* A receive's merge; `seen`: whether last[] is read and written (Clock.merge) or not
 * (Clock.merge_unseen: the caller knows the token is not one this clock already took). */
static PyObject *merge_token(Clock *self, PyObject *token, int seen) {
    if (self->counts == NULL) {
        PyErr_SetString(PyExc_ValueError, "Clock not initialised");
        return NULL;
    }
    if (!PyTuple_CheckExact(token) || PyTuple_GET_SIZE(token) != 3) {
        PyErr_SetString(PyExc_TypeError, "merge: a token (serial, counts, sender) expected");
        return NULL;
    }
    long long serial = PyLong_AsLongLong(PyTuple_GET_ITEM(token, 0));
    if (serial == -1 && PyErr_Occurred()) return NULL;
    if (serial == 0) return Py_NewRef(self->token);
    if (serial < 0) { /* no family gives one out; cut to 32 bits it could pass for one read */
        PyErr_SetString(PyExc_ValueError, "merge: a token's serial below 0 (serials are 0 or above)");
        return NULL;
    }
    Py_ssize_t sender = PyLong_AsSsize_t(PyTuple_GET_ITEM(token, 2));
    if (sender == -1 && PyErr_Occurred()) return NULL;
    Py_ssize_t n = self->family->n;
    if (sender < 0 || sender >= n) {
        PyErr_SetString(PyExc_IndexError, "merge: a sender outside the family");
        return NULL;
    }
    if (seen && serial <= UINT32_MAX && self->last[sender] == (uint32_t)serial) return Py_NewRef(self->token);
    Py_buffer b, c;
    const Py_buffer *a = &self->view; /* mine: the clock's counts through its held view */
    if (counts_buffer(PyTuple_GET_ITEM(token, 1), &b, 0, n) < 0) return NULL;
    int mine_wide = a->itemsize == 4, theirs_wide = b.itemsize == 4;
    Py_ssize_t first = mine_wide != theirs_wide ? first_news_mixed(a->buf, mine_wide, b.buf, theirs_wide, n)
                       : mine_wide              ? first_news(a->buf, b.buf, n)
                                                : first_news_narrow(a->buf, b.buf, n);
    int keeps_width = mine_wide || !theirs_wide; /* the maximum fits mine's width */
    PyObject *counts = NULL;
    int alone = 0;
    if (first < n) {
        /* Whether nothing but this clock sees its counts: the array is held by the clock, its
         * token and its held view alone, and the token by the clock alone (no message in flight
         * carries it, no kept event reads it). Then news is written into the array itself, and
         * the token takes the new serial (take): no copy, no allocation but the serial's, and the
         * array stays in the cache (half the receives with news at bees P = 200). Asked on news
         * only: a receive without news reads neither the array's header nor the token. */
        alone = Py_REFCNT(self->counts) == 3 && Py_REFCNT(self->token) == 1 &&
                PyTuple_GET_ITEM(self->token, 1) == self->counts && !a->readonly && keeps_width;
        if (alone) {
            if (mine_wide) /* in place: see `alone` */
                raise_wide(a->buf, b.buf, theirs_wide, first, n);
            else
                raise_to_narrow(a->buf, b.buf, first, n);
            counts = Py_NewRef(self->counts);
        } else {
            counts = keeps_width ? PyObject_CallMethodNoArgs(self->counts, str_copy) : widen(self->counts);
            if (counts != NULL && counts_buffer(counts, &c, PyBUF_WRITABLE, n) < 0) Py_CLEAR(counts);
            if (counts != NULL) { /* c: a copy of mine, as wide as the maximum needs */
                if (c.itemsize == 4)
                    raise_wide(c.buf, b.buf, theirs_wide, first, n);
                else
                    raise_to_narrow(c.buf, b.buf, first, n);
                PyBuffer_Release(&c);
            }
        }
    }
    PyBuffer_Release(&b);
    /* the serial is remembered only once the token was read: a refused one is read again */
    if (first == n) {
        if (seen) self->last[sender] = kept(serial);
        return Py_NewRef(self->token);
    }
    if (counts == NULL) return NULL;
    PyObject *merged = take(self, counts, alone);
    if (merged != NULL && seen) self->last[sender] = kept(serial);
    return merged;
}

static PyObject *Clock_merge(Clock *self, PyObject *token) { return merge_token(self, token, 1); }

/* merge without last[]: for a caller that has already ruled out a token this clock took (the
 * simulator's fast loop: a token is sent again on a link only after it, and links are FIFO, so the
 * token that last[] would match is skipped there before the call). last[] is left as it was: every
 * serial in it is still one this clock took, so a later merge() that matches it skips soundly. At
 * bees P = 400 the read of last[sender] (a random read into a P x P table) was the costliest load. */
static PyObject *Clock_merge_unseen(Clock *self, PyObject *token) { return merge_token(self, token, 0); }

static PyMethodDef Clock_methods[] = {
    {"tick", (PyCFunction)Clock_tick, METH_NOARGS, "a local event: the own entry + 1; the new token"},
    {"merge", (PyCFunction)Clock_merge, METH_O, "a receive: the maximum with the sender's token; the token"},
    {"merge_unseen", (PyCFunction)Clock_merge_unseen, METH_O, "merge, for a token known not to be one last taken from its sender"},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef Clock_members[] = {
    {"family", T_OBJECT, offsetof(Clock, family), READONLY, "the clock's family"},
    {"own", T_PYSSIZET, offsetof(Clock, own), READONLY, "the clock's own index"},
    {"counts", T_OBJECT, offsetof(Clock, counts), READONLY, "its counts, an array never written while another holds it"},
    {"token", T_OBJECT, offsetof(Clock, token), READONLY, "(serial, counts, own)"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject ClockType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "_mutexlab_merge.Clock",
    .tp_basicsize = sizeof(Clock),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Clock_init,
    .tp_dealloc = (destructor)Clock_dealloc,
    .tp_methods = Clock_methods,
    .tp_members = Clock_members,
};

static PyMethodDef methods[] = {
    {"merge", (PyCFunction)(void (*)(void))merge, METH_FASTCALL, "merge(mine, theirs, spare) -> bool"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_mutexlab_merge", NULL, -1, methods};

PyMODINIT_FUNC PyInit__mutexlab_merge(void) {
    str_copy = PyUnicode_InternFromString("__copy__");
    if (str_copy == NULL || PyType_Ready(&FamilyType) < 0 || PyType_Ready(&ClockType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    if (PyModule_AddObjectRef(m, "Family", (PyObject *)&FamilyType) < 0 ||
        PyModule_AddObjectRef(m, "Clock", (PyObject *)&ClockType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
