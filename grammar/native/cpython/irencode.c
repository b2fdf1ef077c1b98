/* The checked-IR cache's writer: a pickle of the lowered program, written without pickle's
 * reduce protocol for the IR's own classes.
 *
 * What it does: tlop_encode(obj, classes, reduce) returns a bytes object holding a pickle
 * (protocol 4, unframed) of obj that pickle.loads reads back to an equal object graph: the same
 * classes, the same field dicts in the same order, the same sharing (every object written once,
 * then referred to through the memo, as pickle does).  Written directly: None, bool, int,
 * float, str, tuple, list, dict (exact types), and instances of the types in `classes` (a dict
 * type -> (module, qualname): plain dataclasses whose pickle is NEWOBJ of the class and BUILD of
 * the instance's __dict__, which tlop.frontend.checked_cache checks before it names them; or
 * type -> (module, qualname, slot names): classes with plain slots and no __dict__, whose pickle
 * is NEWOBJ and BUILD of (None, {slot: value}), restored by setattr; or the same with True after
 * the slot names: a value class (spans), written each time it is met, never through the memo).
 * Anything else goes through `reduce(obj)`, a Python function returning obj.__reduce_ex__(4);
 * its callable and arguments are written as pickle writes them (NEWOBJ for copyreg.__newobj__,
 * REDUCE otherwise; BUILD of a state).  About seven times faster than pickle.dumps on the IR,
 * which spends most of its time in the reduce protocol of each node.
 *
 * What it does not do: every object pickle can.  A reduce value with list or dict items, a
 * state pickle would give to a __setstate__ it does not see, recursion through a tuple, a
 * callable without a module and qualname, or nesting deeper than MAX_DEPTH raises ValueError;
 * the caller then uses pickle.dumps, the reference writer.  Its output is only ever read by
 * pickle.loads, after the cache's HMAC check.
 *
 * Built with the AST decoder (astdecode.c) by tlop.frontend.native.build_decoder().
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#define MAX_DEPTH 8000 /* about three C frames a level: well inside a thread's stack */

typedef struct {
    void *key;          /* the object's address; NULL: a free entry */
    Py_ssize_t index;   /* its memo index */
} memo_entry;

#define HOT 512

typedef struct {
    PyObject *out;     /* the bytes object written into, resized as it grows and at the end */
    char *b;           /* its buffer */
    Py_ssize_t len, cap;
    memo_entry *memo;  /* the memo: open addressing on the object's address */
    Py_ssize_t mask, used;
    memo_entry hot[HOT]; /* objects met again and again (field names, classes, the source):
                          * direct-mapped on the address, in front of the memo */
    PyObject *keep;    /* list: objects memoised that the caller does not hold (reduce results) */
    PyObject *classes; /* dict: type -> a class entry (see class_entry) */
    PyObject *reduce;  /* callable: obj -> obj.__reduce_ex__(4) */
    PyObject *newobj;  /* copyreg.__newobj__ */
    Py_ssize_t next;   /* the next memo index */
    int depth;
} enc;

static int grow(enc *e, Py_ssize_t k)
{
    if (e->len + k <= e->cap)
        return 0;
    Py_ssize_t cap = e->cap ? e->cap : 1 << 16;
    while (cap < e->len + k)
        cap *= 2;
    if (e->out == NULL)
        e->out = PyBytes_FromStringAndSize(NULL, cap);
    else if (_PyBytes_Resize(&e->out, cap) < 0) /* realloc: large buffers move without a copy */
        e->out = NULL;
    if (e->out == NULL)
        return -1;
    e->b = PyBytes_AS_STRING(e->out);
    e->cap = cap;
    return 0;
}

static inline int put(enc *e, const void *p, Py_ssize_t k)
{
    if (e->len + k > e->cap && grow(e, k) < 0)
        return -1;
    char *to = e->b + e->len;
    if (k <= 16) /* opcodes and their arguments: no call to memcpy for a few bytes */
        for (Py_ssize_t i = 0; i < k; i++)
            to[i] = ((const char *)p)[i];
    else
        memcpy(to, p, (size_t)k);
    e->len += k;
    return 0;
}

static inline int op(enc *e, unsigned char c)
{
    if (e->len + 1 > e->cap && grow(e, 1) < 0)
        return -1;
    e->b[e->len++] = (char)c;
    return 0;
}

static int u32(enc *e, unsigned char c, uint32_t v)
{
    unsigned char b[5] = {c, v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, (v >> 24) & 0xff};
    return put(e, b, 5);
}

static size_t addr_hash(const void *p) { return ((size_t)p >> 4) * 0x9E3779B97F4A7C15ULL; }

static Py_ssize_t slot(const memo_entry *memo, Py_ssize_t mask, const void *p)
{
    Py_ssize_t i = (Py_ssize_t)(addr_hash(p) & (size_t)mask);
    while (memo[i].key != NULL && memo[i].key != p)
        i = (i + 1) & mask;
    return i;
}

static int memo_grow(enc *e)
{
    Py_ssize_t n = (e->mask + 1) * 2;
    memo_entry *memo = PyMem_Calloc((size_t)n, sizeof(memo_entry));
    if (memo == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i <= e->mask; i++)
        if (e->memo[i].key != NULL)
            memo[slot(memo, n - 1, e->memo[i].key)] = e->memo[i];
    PyMem_Free(e->memo);
    e->memo = memo;
    e->mask = n - 1;
    return 0;
}

/* MEMOIZE the object just written; -1 on error.  An object only its container refers to
 * (reference count 1) cannot be met again, so it is not memoised (its memo index would never
 * be read): pickle.loads numbers the memo by MEMOIZE opcodes, so skipping one is consistent. */
static int memoize(enc *e, PyObject *o)
{
    if (Py_REFCNT(o) == 1)
        return 0;
    if (2 * (e->used + 1) > e->mask + 1 && memo_grow(e) < 0)
        return -1;
    Py_ssize_t i = slot(e->memo, e->mask, o);
    if (e->memo[i].key == NULL) {
        e->memo[i].key = o;
        e->used++;
    }
    e->memo[i].index = e->next++;
    return op(e, 0x94);
}

/* 1 and a BINGET written when `o` is in the memo, 0 when not, -1 on error */
static int memo_get(enc *e, PyObject *o)
{
    /* one reference: reached once (every way the writer reaches an object holds a reference
     * while it is written, and memoize() skips such objects), so not in the memo — no probe
     * of a memo of millions of entries, most of them not in the processor's caches */
    if (Py_REFCNT(o) == 1)
        return 0;
    memo_entry *h = &e->hot[(addr_hash(o) >> (sizeof(size_t) * 8 - 16)) & (HOT - 1)]; /* high bits */
    Py_ssize_t i;
    if (h->key == o) {
        i = h->index;
    } else {
        Py_ssize_t at = slot(e->memo, e->mask, o);
        if (e->memo[at].key == NULL)
            return 0;
        *h = e->memo[at]; /* memo entries never change: a copy stays right */
        i = h->index;
    }
    if (i < 256) {
        unsigned char b[2] = {'h', (unsigned char)i};
        return put(e, b, 2) < 0 ? -1 : 1;
    }
    return u32(e, 'j', (uint32_t)i) < 0 ? -1 : 1;
}

static int refuse(const char *what)
{
    PyErr_Format(PyExc_ValueError, "IR encoder: %s", what);
    return -1;
}

static int save(enc *e, PyObject *o);

#define BAD_ENTRY "a class entry that is not (module, qualname[, slot names[, True]])"

/* a `classes` value: (module, qualname), or (module, qualname, tuple of slot names (str)), or
 * (module, qualname, tuple of slot names, True) for a value class (see save_instance) */
static int class_entry(PyObject *v)
{
    if (!PyTuple_CheckExact(v) || PyTuple_GET_SIZE(v) < 2 || PyTuple_GET_SIZE(v) > 4)
        return 0;
    if (PyTuple_GET_SIZE(v) == 2)
        return 1;
    if (PyTuple_GET_SIZE(v) == 4 && PyTuple_GET_ITEM(v, 3) != Py_True)
        return 0;
    PyObject *slots = PyTuple_GET_ITEM(v, 2);
    if (!PyTuple_CheckExact(slots))
        return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(slots); i++)
        if (!PyUnicode_CheckExact(PyTuple_GET_ITEM(slots, i)))
            return 0;
    return 1;
}

static int save_str(enc *e, PyObject *s)
{
    int m = memo_get(e, s);
    if (m != 0)
        return m < 0 ? -1 : 0;
    Py_ssize_t n;
    const char *u = PyUnicode_AsUTF8AndSize(s, &n);
    if (u == NULL) { /* lone surrogates: as pickle, with surrogatepass */
        PyErr_Clear();
        PyObject *b = PyUnicode_AsEncodedString(s, "utf-8", "surrogatepass");
        if (b == NULL)
            return -1;
        int r = u32(e, 'X', (uint32_t)PyBytes_GET_SIZE(b)) < 0 || put(e, PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b)) < 0;
        Py_DECREF(b);
        if (r)
            return -1;
        return memoize(e, s);
    }
    if (n > 0xffffffffLL)
        return refuse("a string longer than 4 GiB");
    if (n < 256) {
        unsigned char b[2] = {0x8c, (unsigned char)n};
        if (put(e, b, 2) < 0)
            return -1;
    } else if (u32(e, 'X', (uint32_t)n) < 0) {
        return -1;
    }
    if (put(e, u, n) < 0)
        return -1;
    return memoize(e, s);
}

static int save_int(enc *e, PyObject *o)
{
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (!overflow && v >= 0 && v < 256) {
        unsigned char b[2] = {'K', (unsigned char)v};
        return put(e, b, 2);
    }
    if (!overflow && v >= 0 && v < 65536) {
        unsigned char b[3] = {'M', (unsigned char)(v & 0xff), (unsigned char)(v >> 8)};
        return put(e, b, 3);
    }
    if (!overflow && v >= INT32_MIN && v <= INT32_MAX)
        return u32(e, 'J', (uint32_t)(int32_t)v);
    /* LONG in its text form: 'L' digits '\n' (pickle.loads reads it at every protocol) */
    PyObject *s = PyObject_Str(o);
    if (s == NULL)
        return -1;
    Py_ssize_t n;
    const char *u = PyUnicode_AsUTF8AndSize(s, &n);
    int r = u == NULL || op(e, 'L') < 0 || put(e, u, n) < 0 || op(e, '\n') < 0;
    Py_DECREF(s);
    return r ? -1 : 0;
}

static int save_float(enc *e, PyObject *o)
{
    unsigned char b[9];
    b[0] = 'G';
    if (PyFloat_Pack8(PyFloat_AS_DOUBLE(o), (char *)b + 1, 0) < 0)
        return -1;
    return put(e, b, 9);
}

static int save_items(enc *e, PyObject *seq) /* the items of a tuple or list */
{
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < n; i++)
        if (save(e, items[i]) < 0)
            return -1;
    return 0;
}

static int save_tuple(enc *e, PyObject *t)
{
    if (PyTuple_GET_SIZE(t) == 0)
        return op(e, ')');
    int m = memo_get(e, t);
    if (m != 0)
        return m < 0 ? -1 : 0;
    Py_ssize_t n = PyTuple_GET_SIZE(t);
    if ((n > 3 && op(e, '(') < 0) || save_items(e, t) < 0)
        return -1;
    /* a tuple memoised while its items were written refers to itself: pickle pops it and
     * reads the memo; this writer does not */
    m = memo_get(e, t);
    if (m != 0)
        return m < 0 ? -1 : refuse("a tuple that contains itself");
    if (op(e, n == 1 ? 0x85 : n == 2 ? 0x86 : n == 3 ? 0x87 : 't') < 0) /* TUPLE1..3, TUPLE */
        return -1;
    return memoize(e, t);
}

static int save_dict_items(enc *e, PyObject *d)
{
    if (PyDict_GET_SIZE(d) == 0)
        return 0;
    if (op(e, '(') < 0)
        return -1;
    Py_ssize_t i = 0, n = 0;
    PyObject *k, *v;
    while (PyDict_Next(d, &i, &k, &v)) {
        if (save(e, k) < 0 || save(e, v) < 0)
            return -1;
        if (++n == 1000) { /* as pickle: batches of 1,000 */
            if (op(e, 'u') < 0 || op(e, '(') < 0)
                return -1;
            n = 0;
        }
    }
    return op(e, 'u');
}

static int save_global(enc *e, PyObject *module, PyObject *qualname)
{
    if (!PyUnicode_Check(module) || !PyUnicode_Check(qualname))
        return refuse("a global without a module and qualname");
    if (save_str(e, module) < 0 || save_str(e, qualname) < 0)
        return -1;
    return op(e, 0x93);
}

/* a class or function: memoised STACK_GLOBAL of its module and qualname */
static int save_callable(enc *e, PyObject *c, PyObject *names)
{
    int m = memo_get(e, c);
    if (m != 0)
        return m < 0 ? -1 : 0;
    PyObject *module, *qualname;
    if (names != NULL) {
        module = PyTuple_GET_ITEM(names, 0);
        qualname = PyTuple_GET_ITEM(names, 1);
        Py_INCREF(module);
        Py_INCREF(qualname);
    } else {
        module = PyObject_GetAttrString(c, "__module__");
        qualname = module ? PyObject_GetAttrString(c, "__qualname__") : NULL;
        if (qualname == NULL) {
            Py_XDECREF(module);
            PyErr_Clear();
            return refuse("a callable without a module and qualname");
        }
    }
    int r = save_global(e, module, qualname);
    Py_DECREF(module);
    Py_DECREF(qualname);
    if (r < 0)
        return -1;
    if (PyList_Append(e->keep, c) < 0)
        return -1;
    return memoize(e, c);
}

/* an instance of one of `classes`: NEWOBJ of the class, then BUILD of its __dict__, or for a
 * class with slots and no __dict__ (an entry (module, qualname, slot names)), BUILD of
 * (None, {slot: value}) for the slots that are set, which pickle.loads restores with setattr */
static int save_instance(enc *e, PyObject *o, PyObject *names)
{
    /* a value class's instance (a Span: nothing depends on which of two equal spans a node
     * holds) is neither looked up in the memo nor memoised: written again each time it is met
     * (in the IR of a file of 10^5 declarations a million spans, hardly any met twice, would
     * otherwise take most of a memo of hundreds of MB) */
    int value = PyTuple_GET_SIZE(names) == 4;
    if (!value) {
        int m = memo_get(e, o);
        if (m != 0)
            return m < 0 ? -1 : 0;
    }
    if (save_callable(e, (PyObject *)Py_TYPE(o), names) < 0 || op(e, ')') < 0 || op(e, 0x81) < 0 ||
        (!value && memoize(e, o) < 0))
        return -1;
    if (PyTuple_GET_SIZE(names) >= 3) {
        PyObject *slots = PyTuple_GET_ITEM(names, 2);
        if (op(e, 'N') < 0 || op(e, '}') < 0 || op(e, '(') < 0)
            return -1;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(slots); i++) {
            PyObject *name = PyTuple_GET_ITEM(slots, i);
            PyObject *v = PyObject_GetAttr(o, name);
            if (v == NULL) {
                if (!PyErr_ExceptionMatches(PyExc_AttributeError))
                    return -1;
                PyErr_Clear(); /* an unset slot: not in the state, as pickle */
                continue;
            }
            int r = save_str(e, name) < 0 || save(e, v) < 0;
            Py_DECREF(v);
            if (r)
                return -1;
        }
        return op(e, 'u') < 0 || op(e, 0x86) < 0 || op(e, 'b') < 0 ? -1 : 0;
    }
    PyObject *d = PyObject_GenericGetDict(o, NULL);
    if (d == NULL)
        return -1;
    int r = 0;
    if (PyDict_GET_SIZE(d) > 0)
        r = op(e, '}') < 0 || save_dict_items(e, d) < 0 || op(e, 'b') < 0 ? -1 : 0;
    Py_DECREF(d);
    return r;
}

/* anything else: obj.__reduce_ex__(4) through the Python `reduce` function */
static int save_reduced(enc *e, PyObject *o)
{
    PyObject *rv = PyObject_CallOneArg(e->reduce, o);
    if (rv == NULL)
        return -1;
    /* `reduce` learns the plain classes it meets: written as the next instances will be */
    PyObject *names = PyDict_GetItemWithError(e->classes, (PyObject *)Py_TYPE(o)); /* borrowed */
    if (names != NULL || PyErr_Occurred()) {
        Py_DECREF(rv);
        if (names == NULL)
            return -1;
        return class_entry(names) ? save_instance(e, o, names) : refuse(BAD_ENTRY);
    }
    int r = -1;
    if (!PyTuple_Check(rv) || PyTuple_GET_SIZE(rv) < 2 || PyTuple_GET_SIZE(rv) > 5) {
        refuse("a reduce value that is not a tuple of 2 to 5 items");
        goto done;
    }
    PyObject *fn = PyTuple_GET_ITEM(rv, 0), *args = PyTuple_GET_ITEM(rv, 1);
    PyObject *state = PyTuple_GET_SIZE(rv) > 2 ? PyTuple_GET_ITEM(rv, 2) : Py_None;
    for (Py_ssize_t i = 3; i < PyTuple_GET_SIZE(rv); i++)
        if (PyTuple_GET_ITEM(rv, i) != Py_None) {
            refuse("a reduce value with list or dict items");
            goto done;
        }
    if (!PyTuple_Check(args)) {
        refuse("reduce arguments that are not a tuple");
        goto done;
    }
    if (state != Py_None && !PyDict_Check(state)) {
        refuse("a state that is not a dict");
        goto done;
    }
    if (state != Py_None) {
        PyObject *setstate = PyObject_GetAttrString((PyObject *)Py_TYPE(o), "__setstate__");
        if (setstate != NULL) { /* pickle would call it: not this writer's business */
            Py_DECREF(setstate);
            refuse("a class with __setstate__");
            goto done;
        }
        PyErr_Clear();
    }
    if (fn == e->newobj) {
        if (PyTuple_GET_SIZE(args) < 1 || !PyType_Check(PyTuple_GET_ITEM(args, 0))) {
            refuse("copyreg.__newobj__ without a class");
            goto done;
        }
        PyObject *rest = PyTuple_GetSlice(args, 1, PyTuple_GET_SIZE(args));
        if (rest == NULL)
            goto done;
        int bad = save_callable(e, PyTuple_GET_ITEM(args, 0), NULL) < 0 || save(e, rest) < 0 || op(e, 0x81) < 0;
        if (!bad && PyTuple_GET_SIZE(rest) > 0 && PyList_Append(e->keep, rest) < 0)
            bad = 1;
        Py_DECREF(rest);
        if (bad)
            goto done;
    } else {
        if (save_callable(e, fn, NULL) < 0 || save(e, args) < 0 || op(e, 'R') < 0)
            goto done;
        if (PyTuple_GET_SIZE(args) > 0 && PyList_Append(e->keep, args) < 0)
            goto done;
    }
    /* the object itself: written twice if its arguments referred to it (pickle's check) */
    if (memo_get(e, o) != 0) {
        if (!PyErr_Occurred())
            refuse("an object reachable from its own reduce arguments");
        goto done;
    }
    if (memoize(e, o) < 0)
        goto done;
    if (state != Py_None) {
        if (op(e, '}') < 0 || save_dict_items(e, state) < 0 || op(e, 'b') < 0)
            goto done;
        if (PyList_Append(e->keep, state) < 0)
            goto done;
    }
    r = 0;
done:
    Py_DECREF(rv);
    return r;
}

static int save(enc *e, PyObject *o)
{
    if (o == Py_None)
        return op(e, 'N');
    if (o == Py_True)
        return op(e, 0x88);
    if (o == Py_False)
        return op(e, 0x89);
    PyTypeObject *t = Py_TYPE(o);
    if (t == &PyUnicode_Type)
        return save_str(e, o);
    if (t == &PyFloat_Type)
        return save_float(e, o);
    if (t == &PyLong_Type)
        return save_int(e, o);
    if (++e->depth > MAX_DEPTH) {
        e->depth--;
        return refuse("nested too deeply");
    }
    int r;
    if (t == &PyTuple_Type) {
        r = save_tuple(e, o);
    } else {
        PyObject *names = NULL;
        if (t != &PyDict_Type && t != &PyList_Type) {
            names = PyDict_GetItemWithError(e->classes, (PyObject *)t); /* borrowed */
            if (names == NULL && PyErr_Occurred()) {
                e->depth--;
                return -1;
            }
        }
        if (names != NULL) /* looks in the memo itself (a value class does not) */
            r = class_entry(names) ? save_instance(e, o, names)
                                   : refuse(BAD_ENTRY);
        else if ((r = memo_get(e, o)) == 0) {
            if (t == &PyDict_Type) {
                r = op(e, '}') < 0 || memoize(e, o) < 0 || save_dict_items(e, o) < 0 ? -1 : 0;
            } else if (t == &PyList_Type) {
                r = op(e, ']') < 0 || memoize(e, o) < 0 ? -1 : 0;
                if (r == 0 && PyList_GET_SIZE(o) > 0)
                    r = op(e, '(') < 0 || save_items(e, o) < 0 || op(e, 'e') < 0 ? -1 : 0;
            } else {
                r = save_reduced(e, o);
            }
        } else if (r > 0) {
            r = 0;
        }
    }
    e->depth--;
    return r;
}

/* A pickle of `obj` (a new bytes object), or NULL with an exception set.  `classes`: dict
 * type -> (module, qualname) of the classes written directly; `reduce`: obj -> its
 * __reduce_ex__(4); `newobj`: copyreg.__newobj__. */
PyObject *tlop_encode(PyObject *obj, PyObject *classes, PyObject *reduce, PyObject *newobj)
{
    if (!PyDict_Check(classes)) {
        PyErr_SetString(PyExc_TypeError, "IR encoder: classes must be a dict");
        return NULL;
    }
    Py_ssize_t i = 0;
    PyObject *k, *v;
    while (PyDict_Next(classes, &i, &k, &v))
        if (!PyType_Check(k) || !class_entry(v)) {
            PyErr_SetString(PyExc_TypeError, "IR encoder: " BAD_ENTRY);
            return NULL;
        }
    enc e = {0};
    e.classes = classes;
    e.reduce = reduce;
    e.newobj = newobj;
    e.mask = 1023;
    e.memo = PyMem_Calloc(1024, sizeof(memo_entry));
    e.keep = PyList_New(0);
    PyObject *out = NULL;
    if (e.memo == NULL)
        PyErr_NoMemory();
    else if (e.keep != NULL) {
        unsigned char head[2] = {0x80, 4};
        if (put(&e, head, 2) == 0 && save(&e, obj) == 0 && op(&e, '.') == 0 && _PyBytes_Resize(&e.out, e.len) == 0) {
            out = e.out;
            e.out = NULL;
        }
    }
    Py_XDECREF(e.out);
    PyMem_Free(e.memo);
    Py_XDECREF(e.keep);
    return out;
}
