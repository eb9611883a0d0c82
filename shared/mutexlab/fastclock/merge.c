/* Local-event clocks in C (mutexlab/fastclock/__init__.py): a receive's merge and a local event's
 * tick, the very steps of clock.LocalEventClock, without the interpreter.
 *
 * merge(mine, theirs, spare) -> bool: mine, theirs and spare are C-contiguous int32 buffers of one
 * length. When some entry of theirs exceeds mine's, spare receives the element-wise maximum and
 * the result is True; otherwise nothing is written and the result is False. mine and theirs are
 * only read.
 *
 * Family(zero, serial=0): the serials of one family of clocks (zero: its array of n zeros, every
 * clock's first counts, array("B") or array("i"); serial: the last one given out before the
 * first). Clock(family, own): one process's clock, with counts, token, tick() and merge(token) as
 * clock.LocalEventClock has them; clock(token) is clock.merge_unseen(token). A token is a Token
 * (below): serial, counts and sender in one object, read as the tuple (serial, counts, own) the
 * plain clock gives; merge() also takes such a tuple. Invariants: a token is never changed while
 * anything but its clock holds it (a change makes a new one, or, when the clock holds it `alone`,
 * is written into it); serials are given out one after another by the family, one per tick and
 * one per merge that brings news; last[s] is the serial of the last token merge() read from
 * sender s (merge_unseen reads and leaves it), in 32 bits (half the memory of the P×P table, whose
 * one random read per receive is the merge's costliest load at P = 400): a serial beyond them is
 * kept as 0, which no token's serial equals, so such a token is compared.
 *
 * Narrow counts (the one place they are decided): a token holds its entries in one byte each
 * (narrow: its counts read as array("B") does) or in 32 bits (wide: "i"). A family whose zero is
 * narrow starts every clock narrow; a tick past 255 makes that clock's token wide, and a merge
 * gives the wider of the two widths whenever it makes a new token, so a clock once wide stays
 * wide. The entries, the serials and so every token's counts read as the same numbers as with wide
 * counts alone (tests/test_narrow_counts.py compares both, and plain clocks, across 255). What it
 * buys: a receive at bees P = 400 compares 2 × 400 bytes instead of 2 × 1,600, and the tokens that
 * messages in flight keep alive take a quarter of the memory.
 *
 * The compact token (docs/benchmarks.md#compact-token): a receive reads the sender's token as one
 * run of lines (header, serial, sender, counts), where a tuple token was four cold objects (the
 * tuple, its serial int, the array and the array's buffer), and a change makes one object where
 * it made four. A receive without a copy (tests/test_fastclock_reuse.py holds it to a plain
 * clock): whether the clock holds its token `alone` is asked only on a change; when it does, the
 * change is written into the token itself under the new serial (take): nothing is allocated.
 * Nothing another holds is ever written: `alone` is that nothing does (a view of a token's counts
 * holds a reference to it, so a token with a view out is never alone). */
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

/* -- Token ----------------------------------------------------------------------------------- */
/* A clock's token as one object (the one compact-token place): its serial, its sender and its n
 * counts in one allocation, the counts inline after the header, narrow (a byte) or wide (32 bits).
 * A receive reads the token's header and its counts as one run of lines, where a tuple token was a
 * tuple, a serial int, an array and the array's separately allocated buffer (four cold objects,
 * four frees). It reads as the tuple it replaces: token[0] the serial, token[1] the counts (a
 * read-only memoryview of the token itself: "B" or "i"), token[2] the sender, len 3, unpacking;
 * and by name (serial, counts, sender). Not tracked by the cyclic collector: it holds no object. */
typedef struct {
    PyObject_VAR_HEAD /* ob_size: the counts' bytes */
    long long serial;
    Py_ssize_t sender;
    Py_ssize_t n;        /* entries */
    Py_ssize_t itemsize; /* 1 (narrow) or 4 (wide) */
    int64_t counts[];    /* the entries, n × itemsize bytes (int64_t: aligned for int32 reads) */
} Token;

static PyTypeObject TokenType;

#define TOKEN_COUNTS(t) ((void *)(t)->counts)

/* A new token of n entries, each itemsize bytes, its counts not yet written. */
static Token *token_new(Py_ssize_t n, Py_ssize_t itemsize, long long serial, Py_ssize_t sender) {
    Token *t = PyObject_NewVar(Token, &TokenType, n * itemsize);
    if (t == NULL) return NULL;
    t->serial = serial;
    t->sender = sender;
    t->n = n;
    t->itemsize = itemsize;
    return t;
}

static void Token_dealloc(Token *self) { PyObject_Free(self); }

static Py_ssize_t Token_length(Token *self) { return 3; }

static PyObject *Token_item(Token *self, Py_ssize_t i) {
    switch (i) {
    case 0: return PyLong_FromLongLong(self->serial);
    case 1: return PyMemoryView_FromObject((PyObject *)self);
    case 2: return PyLong_FromSsize_t(self->sender);
    default: PyErr_SetString(PyExc_IndexError, "a token is (serial, counts, sender)"); return NULL;
    }
}

static int Token_getbuffer(Token *self, Py_buffer *view, int flags) {
    if (flags & PyBUF_WRITABLE) { /* a token's counts are never written through a view */
        PyErr_SetString(PyExc_BufferError, "a token's counts are read-only");
        view->obj = NULL;
        return -1;
    }
    view->obj = Py_NewRef(self);
    view->buf = TOKEN_COUNTS(self);
    view->len = self->n * self->itemsize;
    view->readonly = 1;
    view->itemsize = self->itemsize;
    view->format = (flags & PyBUF_FORMAT) ? (self->itemsize == 4 ? "i" : "B") : NULL;
    view->ndim = 1;
    view->shape = (flags & PyBUF_ND) ? &self->n : NULL;
    view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? &self->itemsize : NULL;
    view->suboffsets = NULL;
    view->internal = NULL;
    return 0;
}

static PyObject *Token_get_serial(Token *self, void *c) { return PyLong_FromLongLong(self->serial); }
static PyObject *Token_get_sender(Token *self, void *c) { return PyLong_FromSsize_t(self->sender); }
static PyObject *Token_get_counts(Token *self, void *c) { return PyMemoryView_FromObject((PyObject *)self); }

static inline int32_t token_entry(const Token *t, Py_ssize_t i) { return entry_at(TOKEN_COUNTS(t), t->itemsize == 4, i); }

/* [serial, [counts...], sender]: what a tuple token gives to json through its array's tolist. */
static PyObject *Token_tolist(Token *self, PyObject *unused) {
    PyObject *counts = PyList_New(self->n);
    if (counts == NULL) return NULL;
    for (Py_ssize_t i = 0; i < self->n; i++) {
        PyObject *v = PyLong_FromLong(token_entry(self, i));
        if (v == NULL) {
            Py_DECREF(counts);
            return NULL;
        }
        PyList_SET_ITEM(counts, i, v);
    }
    return Py_BuildValue("[LNn]", self->serial, counts, self->sender);
}

static PyObject *Token_repr(Token *self) {
    PyObject *list = Token_tolist(self, NULL);
    if (list == NULL) return NULL;
    PyObject *r = PyUnicode_FromFormat("Token%R", list);
    Py_DECREF(list);
    return r;
}

static PySequenceMethods Token_as_sequence = {.sq_length = (lenfunc)Token_length, .sq_item = (ssizeargfunc)Token_item};
static PyBufferProcs Token_as_buffer = {.bf_getbuffer = (getbufferproc)Token_getbuffer};

static PyGetSetDef Token_getset[] = {
    {"serial", (getter)Token_get_serial, NULL, "the token's serial (0: a clock's first)", NULL},
    {"counts", (getter)Token_get_counts, NULL, "its counts, a read-only memoryview (\"B\" or \"i\")", NULL},
    {"sender", (getter)Token_get_sender, NULL, "its clock's own index", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef Token_methods[] = {
    {"tolist", (PyCFunction)Token_tolist, METH_NOARGS, "[serial, [counts], sender]"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject TokenType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "_mutexlab_merge.Token",
    .tp_basicsize = offsetof(Token, counts),
    .tp_itemsize = 1,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)Token_dealloc,
    .tp_repr = (reprfunc)Token_repr,
    .tp_as_sequence = &Token_as_sequence,
    .tp_as_buffer = &Token_as_buffer,
    .tp_getset = Token_getset,
    .tp_methods = Token_methods,
};

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
    vectorcallfunc call; /* clock(token): merge_unseen, without a bound method (Clock_call) */
    Family *family;
    Py_ssize_t own;
    Token *token; /* the clock's counts are its token's */
    uint32_t *last;
} Clock;

static PyObject *Clock_call(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames);

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
    Token *token = last == NULL ? NULL : token_new(f->n, view.itemsize, 0, own);
    if (token != NULL) memcpy(TOKEN_COUNTS(token), view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    if (token == NULL) {
        PyMem_Free(last);
        if (!PyErr_Occurred()) PyErr_NoMemory();
        return -1;
    }
    Py_INCREF(family);
    Py_XSETREF(self->family, f);
    self->own = own;
    Py_XSETREF(self->token, token);
    PyMem_Free(self->last);
    self->last = last;
    self->call = Clock_call;
    return 0;
}

static void Clock_dealloc(Clock *self) {
    Py_XDECREF(self->family);
    Py_XDECREF(self->token);
    PyMem_Free(self->last);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Whether nothing but the clock holds its token: no message in flight carries it, no kept event
 * reads it, no view of its counts is out (a view holds a reference). Then a change is written
 * into the token itself under the next serial: nobody can see it change, and nothing is made. */
static inline int alone(const Clock *self) { return Py_REFCNT(self->token) == 1; }

/* token (new, or the clock's own changed in place) becomes the clock's under the family's next
 * serial; a new reference to it. */
static PyObject *take(Clock *self, Token *token) {
    token->serial = ++self->family->serial;
    if (token != self->token) Py_SETREF(self->token, token);
    return Py_NewRef(self->token);
}

/* A new token with the clock's counts, itemsize bytes an entry (widened when 4 and the clock's
 * are narrow), its serial set by take. */
static Token *copy_counts(Clock *self, Py_ssize_t itemsize) {
    const Token *mine = self->token;
    Py_ssize_t n = mine->n;
    Token *t = token_new(n, itemsize, 0, self->own);
    if (t == NULL) return NULL;
    if (itemsize == mine->itemsize)
        memcpy(TOKEN_COUNTS(t), TOKEN_COUNTS(mine), (size_t)(n * itemsize));
    else /* widen: narrow entries into 32 bits */
        for (Py_ssize_t i = 0; i < n; i++) ((int32_t *)TOKEN_COUNTS(t))[i] = ((const uint8_t *)TOKEN_COUNTS(mine))[i];
    return t;
}

static PyObject *Clock_tick(Clock *self, PyObject *unused) {
    if (self->token == NULL) {
        PyErr_SetString(PyExc_ValueError, "Clock not initialised");
        return NULL;
    }
    Token *mine = self->token;
    int narrow = mine->itemsize == 1;
    if (!narrow && ((int32_t *)TOKEN_COUNTS(mine))[self->own] == INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "a local-event count beyond int32");
        return NULL;
    }
    int widens = narrow && ((uint8_t *)TOKEN_COUNTS(mine))[self->own] == NARROW_MAX; /* one more needs 32 bits */
    Token *t = alone(self) && !widens ? mine : copy_counts(self, widens ? 4 : mine->itemsize);
    if (t == NULL) return NULL;
    if (t->itemsize == 1)
        ((uint8_t *)TOKEN_COUNTS(t))[self->own] += 1;
    else
        ((int32_t *)TOKEN_COUNTS(t))[self->own] += 1;
    return take(self, t);
}

/* A token's parts, from a Token or a (serial, counts, sender) tuple (a test's, or a caller's own). */
typedef struct {
    long long serial;
    Py_ssize_t sender;
    const void *buf;
    int wide;
    Py_buffer view; /* held for a tuple's counts */
    int viewed;
} Parts;

static int token_parts(PyObject *token, Py_ssize_t n, Parts *p) {
    p->viewed = 0;
    if (Py_IS_TYPE(token, &TokenType)) {
        const Token *t = (const Token *)token;
        if (t->n != n) {
            PyErr_SetString(PyExc_ValueError, "merge: counts of n entries, array(\"B\") or int32, expected");
            return -1;
        }
        p->serial = t->serial;
        p->sender = t->sender;
        p->buf = TOKEN_COUNTS(t);
        p->wide = t->itemsize == 4;
        return 0;
    }
    if (!PyTuple_CheckExact(token) || PyTuple_GET_SIZE(token) != 3) {
        PyErr_SetString(PyExc_TypeError, "merge: a token (serial, counts, sender) expected");
        return -1;
    }
    p->serial = PyLong_AsLongLong(PyTuple_GET_ITEM(token, 0));
    if (p->serial == -1 && PyErr_Occurred()) return -1;
    if (p->serial <= 0) return 0; /* nothing more is read (0: the clock's own token back) */
    p->sender = PyLong_AsSsize_t(PyTuple_GET_ITEM(token, 2));
    if (p->sender == -1 && PyErr_Occurred()) return -1;
    if (counts_buffer(PyTuple_GET_ITEM(token, 1), &p->view, 0, n) < 0) return -1;
    p->viewed = 1;
    p->buf = p->view.buf;
    p->wide = p->view.itemsize == 4;
    return 0;
}

/* A receive's merge; `seen`: whether last[] is read and written (Clock.merge) or not
 * (Clock.merge_unseen: the caller knows the token is not one this clock already took). */
static PyObject *merge_token(Clock *self, PyObject *token, int seen) {
    if (self->token == NULL) {
        PyErr_SetString(PyExc_ValueError, "Clock not initialised");
        return NULL;
    }
    Token *mine = self->token;
    Py_ssize_t n = mine->n;
    Parts p;
    if (token_parts(token, n, &p) < 0) return NULL;
    PyObject *result = NULL;
    if (p.serial == 0) {
        result = Py_NewRef(mine);
        goto done;
    }
    if (p.serial < 0) { /* no family gives one out; cut to 32 bits it could pass for one read */
        PyErr_SetString(PyExc_ValueError, "merge: a token's serial below 0 (serials are 0 or above)");
        goto done;
    }
    if (p.sender < 0 || p.sender >= n) {
        PyErr_SetString(PyExc_IndexError, "merge: a sender outside the family");
        goto done;
    }
    if (seen && p.serial <= UINT32_MAX && self->last[p.sender] == (uint32_t)p.serial) {
        result = Py_NewRef(mine);
        goto done;
    }
    int mine_wide = mine->itemsize == 4, theirs_wide = p.wide;
    void *counts = TOKEN_COUNTS(mine);
    Py_ssize_t first = mine_wide != theirs_wide ? first_news_mixed(counts, mine_wide, p.buf, theirs_wide, n)
                       : mine_wide              ? first_news(counts, p.buf, n)
                                                : first_news_narrow(counts, p.buf, n);
    if (first < n) {
        int keeps_width = mine_wide || !theirs_wide; /* the maximum fits mine's width */
        /* News: written into the clock's own token when nothing else holds it (`alone`: half the
         * receives with news at bees P = 200), else into a new token as wide as the maximum. */
        Token *t = alone(self) && keeps_width ? mine : copy_counts(self, keeps_width ? mine->itemsize : 4);
        if (t == NULL) goto done;
        if (t->itemsize == 4)
            raise_wide(TOKEN_COUNTS(t), p.buf, theirs_wide, first, n);
        else
            raise_to_narrow(TOKEN_COUNTS(t), p.buf, first, n);
        result = take(self, t);
    } else
        result = Py_NewRef(mine);
    /* the serial is remembered only once the token was read: a refused one is read again */
    if (seen) self->last[p.sender] = kept(p.serial);
done:
    if (p.viewed) PyBuffer_Release(&p.view);
    return result;
}

static PyObject *Clock_merge(Clock *self, PyObject *token) { return merge_token(self, token, 1); }

/* merge without last[]: for a caller that has already ruled out a token this clock took (the
 * simulator's fast loop: a token is sent again on a link only after it, and links are FIFO, so the
 * token that last[] would match is skipped there before the call). last[] is left as it was: every
 * serial in it is still one this clock took, so a later merge() that matches it skips soundly. At
 * bees P = 400 the read of last[sender] (a random read into a P x P table) was the costliest load. */
static PyObject *Clock_merge_unseen(Clock *self, PyObject *token) { return merge_token(self, token, 0); }

/* clock(token) is clock.merge_unseen(token), called on the clock itself (vectorcall): the
 * simulator's fast loop binds the clock, not a bound method, so a receive touches one object the
 * merge reads anyway instead of a method object besides (one cold line a receive at P = 200). */
static PyObject *Clock_call(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    if (PyVectorcall_NARGS(nargsf) != 1 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0)) {
        PyErr_SetString(PyExc_TypeError, "clock(token) takes one token");
        return NULL;
    }
    if (((Clock *)self)->call == NULL) {
        PyErr_SetString(PyExc_ValueError, "Clock not initialised");
        return NULL;
    }
    return merge_token((Clock *)self, args[0], 0);
}

static PyObject *Clock_get_counts(Clock *self, void *c) {
    if (self->token == NULL) Py_RETURN_NONE;
    return PyMemoryView_FromObject((PyObject *)self->token);
}

static PyMethodDef Clock_methods[] = {
    {"tick", (PyCFunction)Clock_tick, METH_NOARGS, "a local event: the own entry + 1; the new token"},
    {"merge", (PyCFunction)Clock_merge, METH_O, "a receive: the maximum with the sender's token; the token"},
    {"merge_unseen", (PyCFunction)Clock_merge_unseen, METH_O, "merge, for a token known not to be one last taken from its sender"},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef Clock_members[] = {
    {"family", T_OBJECT, offsetof(Clock, family), READONLY, "the clock's family"},
    {"own", T_PYSSIZET, offsetof(Clock, own), READONLY, "the clock's own index"},
    {"token", T_OBJECT, offsetof(Clock, token), READONLY, "its Token: (serial, counts, own)"},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef Clock_getset[] = {
    {"counts", (getter)Clock_get_counts, NULL, "its counts: a read-only view of its token's", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject ClockType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "_mutexlab_merge.Clock",
    .tp_basicsize = sizeof(Clock),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(Clock, call),
    .tp_call = PyVectorcall_Call,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Clock_init,
    .tp_dealloc = (destructor)Clock_dealloc,
    .tp_methods = Clock_methods,
    .tp_members = Clock_members,
    .tp_getset = Clock_getset,
};

static PyMethodDef methods[] = {
    {"merge", (PyCFunction)(void (*)(void))merge, METH_FASTCALL, "merge(mine, theirs, spare) -> bool"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_mutexlab_merge", NULL, -1, methods};

PyMODINIT_FUNC PyInit__mutexlab_merge(void) {
    if (PyType_Ready(&TokenType) < 0 || PyType_Ready(&FamilyType) < 0 || PyType_Ready(&ClockType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    if (PyModule_AddObjectRef(m, "Family", (PyObject *)&FamilyType) < 0 ||
        PyModule_AddObjectRef(m, "Clock", (PyObject *)&ClockType) < 0 ||
        PyModule_AddObjectRef(m, "Token", (PyObject *)&TokenType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
