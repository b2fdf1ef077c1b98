/* The native parser's AST decoder: the pickle grammar/native writes, read straight into objects.
 *
 * What it does: tlop_decode(data, classes, source, offset) reads, from byte `offset` of `data`
 * (bytes, or any object with a buffer: the library's answer where it lies), the subset of pickle protocol 4 that grammar/native/pickle.go writes
 * (PROTO, MARK, STOP, NONE, TRUE, FALSE, BININT, BININT1, BININT2, BINFLOAT, SHORT_BINUNICODE,
 * BINUNICODE, EMPTY_TUPLE, TUPLE, EMPTY_DICT, SETITEMS, MEMOIZE, BINGET, LONG_BINGET,
 * STACK_GLOBAL, NEWOBJ, BUILD, BINPERSID, POP, and REDUCE of the global D.span with four ints,
 * which is a Span of `source`) and returns the object it describes — the same
 * object, field for field and in the same field order, as Python's C unpickler with
 * tlop.frontend.native's restricted Unpickler, which stays the reference reader.  It is faster
 * because an instance's fields are set on the instance itself (object.__setattr__, as a frozen
 * dataclass's own __init__ does) instead of through its __dict__, and because it has no
 * file-like object, no extension registry and no find_class in Python to go through.
 *
 * What it does not do: trust its input.  Every read is bounds-checked, every pop checks the
 * stack and the marks, a memo index outside the memo, an opcode outside the subset, a class
 * not in `classes` (a dict (tag, name) -> type: the AST classes, and Span as D.span), NEWOBJ with
 * arguments or on anything but the AST classes, BUILD with anything but a dict or on a span, or a persistent
 * id other than "source", or a field name starting with '_' is a ValueError (a field that
 * cannot be set, such as a property, raises AttributeError) — the caller then reads the answer
 * with the reference unpickler, which decides.  It never runs Python code of the input (no __reduce__, no
 * __setstate__, no find_class).
 *
 * Built by tlop.frontend.native.build() with the C compiler against the running Python's
 * headers, into grammar/native/_build (a file name that hashes this source and the Python
 * version), and loaded with ctypes.PyDLL (the GIL is held throughout).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#include <structmember.h> /* T_OBJECT_EX, READONLY */

typedef struct {
    PyObject **items;
    Py_ssize_t len, cap;
} objvec;

static int vec_grow_push(objvec *v, PyObject *o);

static inline int vec_push(objvec *v, PyObject *o) /* steals o */
{
    if (o != NULL && v->len < v->cap) {
        v->items[v->len++] = o;
        return 0;
    }
    return vec_grow_push(v, o);
}

static int vec_grow_push(objvec *v, PyObject *o)
{
    if (o == NULL)
        return -1;
    if (v->len == v->cap) {
        Py_ssize_t cap = v->cap ? v->cap * 2 : 256;
        PyObject **items = PyMem_Realloc(v->items, (size_t)cap * sizeof(PyObject *));
        if (items == NULL) {
            Py_DECREF(o);
            PyErr_NoMemory();
            return -1;
        }
        v->items = items;
        v->cap = cap;
    }
    v->items[v->len++] = o;
    return 0;
}

static void vec_clear(objvec *v)
{
    for (Py_ssize_t i = 0; i < v->len; i++)
        Py_DECREF(v->items[i]);
    PyMem_Free(v->items);
    v->items = NULL;
    v->len = v->cap = 0;
}

typedef struct {
    Py_ssize_t *items;
    Py_ssize_t len, cap;
} markvec;

static int mark_push(markvec *m, Py_ssize_t at)
{
    if (m->len == m->cap) {
        Py_ssize_t cap = m->cap ? m->cap * 2 : 64;
        Py_ssize_t *items = PyMem_Realloc(m->items, (size_t)cap * sizeof(Py_ssize_t));
        if (items == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        m->items = items;
        m->cap = cap;
    }
    m->items[m->len++] = at;
    return 0;
}

/* a field name: a non-empty str not starting with '_' (so never __class__ or __dict__, whose
 * setting through the instance would differ from the reference's store into __dict__) */
static int field_name(PyObject *k)
{
    return PyUnicode_CheckExact(k) && PyUnicode_GET_LENGTH(k) > 0 && PyUnicode_READ_CHAR(k, 0) != '_';
}

/* an int object of value v (a new reference): the last one made again when it has the same
 * value — a span's first and last line are mostly one line, and a declaration's spans too, so
 * line numbers above 255 (not cached by CPython) are mostly one object, not one per use */
static PyObject *cached_int(PyObject **last, long v)
{
    if (*last != NULL && PyLong_AsLong(*last) == v) {
        Py_INCREF(*last);
        return *last;
    }
    PyObject *o = PyLong_FromLong(v);
    if (o != NULL) {
        Py_XDECREF(*last);
        Py_INCREF(o);
        *last = o;
    }
    return o;
}

/* Where a field of a class is stored: a slot (a member descriptor holding an object) at an
 * offset, found once per (class, field name) in a decoding; -1: anything else, which
 * PyObject_GenericSetAttr sets.  Direct-mapped on the two addresses; an entry holds references
 * to both (a name that died could otherwise be mistaken for a new one at the same address). */
#define STORES 256
typedef struct {
    PyTypeObject *type;
    PyObject *name;
    Py_ssize_t offset;
} store;

/* inst.name = v as PyObject_GenericSetAttr sets it (the class's descriptor, past a frozen
 * dataclass's __setattr__); `name` an interned str */
static int set_field(store *stores, PyObject *inst, PyObject *name, PyObject *v)
{
    PyTypeObject *type = Py_TYPE(inst);
    size_t h = (((size_t)type >> 4) * 0x9E3779B97F4A7C15ULL) ^ ((size_t)name >> 4);
    store *s = &stores[(h ^ (h >> 17)) & (STORES - 1)];
    if (s->type != type || s->name != name) {
        Py_ssize_t offset = -1;
        PyObject *descr = _PyType_Lookup(type, name); /* borrowed */
        if (descr != NULL && Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
            PyMemberDef *m = ((PyMemberDescrObject *)descr)->d_member;
            if (m->type == T_OBJECT_EX && !(m->flags & READONLY))
                offset = m->offset;
        }
        Py_INCREF(type);
        Py_INCREF(name);
        Py_XDECREF(s->type);
        Py_XDECREF(s->name);
        s->type = type;
        s->name = name;
        s->offset = offset;
    }
    if (s->offset < 0)
        return PyObject_GenericSetAttr(inst, name, v);
    PyObject **slot = (PyObject **)((char *)inst + s->offset); /* what the member's __set__ does */
    PyObject *old = *slot;
    Py_INCREF(v);
    *slot = v;
    Py_XDECREF(old);
    return 0;
}

/* a Span of `source` with line, col, end_line, end_col (ints) from `nums`: what REDUCE of
 * D.span gives (a new reference) */
static PyObject *make_span(PyObject *span_type, PyObject *source, PyObject *const *nums, PyObject **span_names,
                           PyObject *empty, store *stores)
{
    PyTypeObject *type = (PyTypeObject *)span_type;
    PyObject *inst = type->tp_new(type, empty, NULL);
    if (inst == NULL)
        return NULL;
    if (set_field(stores, inst, span_names[0], source) < 0) {
        Py_DECREF(inst);
        return NULL;
    }
    for (int i = 0; i < 4; i++)
        if (set_field(stores, inst, span_names[i + 1], nums[i]) < 0) {
            Py_DECREF(inst);
            return NULL;
        }
    return inst;
}

static void stores_clear(store *stores)
{
    for (int i = 0; i < STORES; i++) {
        Py_XDECREF(stores[i].type);
        Py_XDECREF(stores[i].name);
    }
}

static PyObject *bad(const char *what, Py_ssize_t at)
{
    PyErr_Format(PyExc_ValueError, "native AST decoder: %s at byte %zd", what, at);
    return NULL;
}

/* the decoder proper; on error returns NULL with an exception set (stack and memo are freed by
 * the caller) */
static PyObject *run(const unsigned char *buf, Py_ssize_t n, Py_ssize_t pos, PyObject *classes,
                     PyObject *allowed, PyObject *source, PyObject *direct_state, PyObject *span_type,
                     PyObject **span_names, PyObject *empty, PyObject **last_int, objvec *stack, objvec *memo,
                     markvec *marks, store *stores)
{
    /* direct_state: a plain object() of this call standing where a state dict would be when the
     * fields go straight to the instance (see '}'); it never leaves the stack (MEMOIZE, TUPLE,
     * SETITEMS into a dict and STOP refuse it) */
#define NEED(k)                                                                                    \
    do {                                                                                           \
        if ((k) > n - pos)                                                                         \
            return bad("truncated answer", pos);                                                   \
    } while (0)
#define PUSH(o)                                                                                    \
    do {                                                                                           \
        if (vec_push(stack, (o)) < 0)                                                              \
            return NULL;                                                                           \
    } while (0)
#define FLOOR (marks->len ? marks->items[marks->len - 1] : 0)
    unsigned char op = 0, prev;
    while (pos < n) {
        Py_ssize_t at = pos;
        prev = op;
        op = buf[pos++];
        switch (op) {
        case 0x80: /* PROTO */
            NEED(1);
            if (buf[pos] > 5)
                return bad("unsupported protocol", at);
            pos += 1;
            break;
        case '(': /* MARK */
            if (mark_push(marks, stack->len) < 0)
                return NULL;
            break;
        case '.': /* STOP */
            if (stack->len != 1 || marks->len != 0 || stack->items[0] == direct_state)
                return bad("STOP with a stack of other than one object", at);
            stack->len = 0;
            return stack->items[0];
        case 'N':
            Py_INCREF(Py_None);
            PUSH(Py_None);
            break;
        case 0x88:
            Py_INCREF(Py_True);
            PUSH(Py_True);
            break;
        case 0x89:
            Py_INCREF(Py_False);
            PUSH(Py_False);
            break;
        case 'J': { /* BININT: 4 bytes, signed, little-endian */
            NEED(4);
            uint32_t u = (uint32_t)buf[pos] | (uint32_t)buf[pos + 1] << 8 | (uint32_t)buf[pos + 2] << 16 |
                         (uint32_t)buf[pos + 3] << 24;
            pos += 4;
            PUSH(cached_int(last_int, (long)(int32_t)u));
            break;
        }
        case 'K': /* BININT1 */
            NEED(1);
            PUSH(PyLong_FromLong(buf[pos]));
            pos += 1;
            break;
        case 'M': /* BININT2 */
            NEED(2);
            PUSH(cached_int(last_int, (long)buf[pos] | (long)buf[pos + 1] << 8));
            pos += 2;
            break;
        case 'G': /* BINFLOAT: 8 bytes, big-endian IEEE double */
            NEED(8);
            {
                double d = PyFloat_Unpack8((const char *)buf + pos, 0);
                if (d == -1.0 && PyErr_Occurred())
                    return NULL;
                pos += 8;
                PUSH(PyFloat_FromDouble(d));
            }
            break;
        case 0x8c: /* SHORT_BINUNICODE */
        case 'X': { /* BINUNICODE */
            Py_ssize_t len;
            if (op == 0x8c) {
                NEED(1);
                len = buf[pos];
                pos += 1;
            } else {
                NEED(4);
                len = (Py_ssize_t)((uint32_t)buf[pos] | (uint32_t)buf[pos + 1] << 8 |
                                   (uint32_t)buf[pos + 2] << 16 | (uint32_t)buf[pos + 3] << 24);
                pos += 4;
            }
            NEED(len);
            PyObject *str = PyUnicode_DecodeUTF8((const char *)buf + pos, len, "surrogatepass");
            if (str != NULL && op == 0x8c)
                PyUnicode_InternInPlace(&str); /* names and field names: BUILD's keys are interned */
            PUSH(str);
            pos += len;
            break;
        }
        case ')':
            PUSH(PyTuple_New(0));
            break;
        case 't': { /* TUPLE: the items since the last mark */
            if (marks->len == 0)
                return bad("TUPLE without a mark", at);
            Py_ssize_t from = marks->items[--marks->len];
            if (from > stack->len)
                return bad("mark above the stack", at);
            for (Py_ssize_t i = from; i < stack->len; i++)
                if (stack->items[i] == direct_state)
                    return bad("a placeholder in a tuple", at);
            /* D.span MARK l c el ec TUPLE REDUCE: the span made from the stack, no tuple */
            if (pos < n && buf[pos] == 'R' && stack->len - from == 4 && from - 1 >= FLOOR &&
                span_type != NULL && stack->items[from - 1] == span_type &&
                PyLong_CheckExact(stack->items[from]) && PyLong_CheckExact(stack->items[from + 1]) &&
                PyLong_CheckExact(stack->items[from + 2]) && PyLong_CheckExact(stack->items[from + 3])) {
                PyObject *inst = make_span(span_type, source, &stack->items[from], span_names, empty, stores);
                if (inst == NULL)
                    return NULL;
                for (Py_ssize_t i = from - 1; i < stack->len; i++)
                    Py_DECREF(stack->items[i]);
                stack->len = from - 1;
                PUSH(inst);
                pos++; /* the REDUCE */
                break;
            }
            PyObject *t = PyTuple_New(stack->len - from);
            if (t == NULL)
                return NULL;
            for (Py_ssize_t i = from; i < stack->len; i++)
                PyTuple_SET_ITEM(t, i - from, stack->items[i]); /* the stack's references move */
            stack->len = from;
            PUSH(t);
            break;
        }
        case '}':
            /* NEWOBJ's instance, then '}' '(' key value ... 'u' 'b': the fields go straight to
             * the instance (see 'u'); a placeholder stands where the state dict would be */
            if (prev == 0x81 && pos < n && buf[pos] == '(') {
                Py_INCREF(direct_state);
                PUSH(direct_state);
            } else {
                PUSH(PyDict_New());
            }
            break;
        case 'u': { /* SETITEMS: key/value pairs since the last mark into the dict below it */
            if (marks->len == 0)
                return bad("SETITEMS without a mark", at);
            Py_ssize_t from = marks->items[--marks->len];
            if (from < 1 || from > stack->len || (stack->len - from) % 2 != 0)
                return bad("SETITEMS with an odd number of items or no dict", at);
            PyObject *d = stack->items[from - 1];
            if (d == direct_state) {
                /* the fields of the instance below, in order, then BUILD must follow */
                if (from < 2 || pos >= n || buf[pos] != 'b')
                    return bad("fields not followed by BUILD", at);
                PyObject *inst = stack->items[from - 2];
                int ok = PySet_Contains(allowed, (PyObject *)Py_TYPE(inst));
                if (ok < 0)
                    return NULL;
                if (!ok)
                    return bad("BUILD of something that is not an AST instance", at);
                for (Py_ssize_t i = from; i < stack->len; i += 2) {
                    PyObject *k = stack->items[i];
                    if (!field_name(k) || stack->items[i + 1] == direct_state)
                        return bad("not a field name", at);
                    PyUnicode_InternInPlace(&stack->items[i]);
                    if (set_field(stores, inst, stack->items[i], stack->items[i + 1]) < 0)
                        return NULL;
                }
                for (Py_ssize_t i = from; i < stack->len; i++)
                    Py_DECREF(stack->items[i]);
                stack->len = from;
                break;
            }
            if (!PyDict_CheckExact(d))
                return bad("SETITEMS on something that is not a dict", at);
            for (Py_ssize_t i = from; i < stack->len; i += 2)
                if (stack->items[i] == direct_state || stack->items[i + 1] == direct_state)
                    return bad("a placeholder in a dict", at);
            for (Py_ssize_t i = from; i < stack->len; i += 2)
                if (PyDict_SetItem(d, stack->items[i], stack->items[i + 1]) < 0)
                    return NULL;
            for (Py_ssize_t i = from; i < stack->len; i++)
                Py_DECREF(stack->items[i]);
            stack->len = from;
            break;
        }
        case 0x94: /* MEMOIZE */
            if (stack->len <= FLOOR || stack->items[stack->len - 1] == direct_state)
                return bad("MEMOIZE on an empty stack or a placeholder", at);
            Py_INCREF(stack->items[stack->len - 1]);
            if (vec_push(memo, stack->items[stack->len - 1]) < 0)
                return NULL;
            break;
        case 'h': /* BINGET */
        case 'j': { /* LONG_BINGET */
            Py_ssize_t i;
            if (op == 'h') {
                NEED(1);
                i = buf[pos];
                pos += 1;
            } else {
                NEED(4);
                i = (Py_ssize_t)((uint32_t)buf[pos] | (uint32_t)buf[pos + 1] << 8 | (uint32_t)buf[pos + 2] << 16 |
                                 (uint32_t)buf[pos + 3] << 24);
                pos += 4;
            }
            if (i >= memo->len)
                return bad("memo index out of range", at);
            Py_INCREF(memo->items[i]);
            PUSH(memo->items[i]);
            break;
        }
        case 0x93: { /* STACK_GLOBAL: (tag, name) looked up in `classes` only */
            if (stack->len - FLOOR < 2)
                return bad("STACK_GLOBAL needs two strings", at);
            PyObject *name = stack->items[stack->len - 1], *tag = stack->items[stack->len - 2];
            if (!PyUnicode_CheckExact(tag) || !PyUnicode_CheckExact(name))
                return bad("STACK_GLOBAL needs two strings", at);
            PyObject *key = PyTuple_Pack(2, tag, name);
            if (key == NULL)
                return NULL;
            PyObject *cls = PyDict_GetItemWithError(classes, key); /* borrowed */
            Py_DECREF(key);
            if (cls == NULL) {
                if (!PyErr_Occurred())
                    PyErr_Format(PyExc_ValueError, "native AST decoder: unexpected class %U.%U", tag, name);
                return NULL;
            }
            Py_DECREF(name);
            Py_DECREF(tag);
            stack->len -= 2;
            Py_INCREF(cls);
            PUSH(cls);
            break;
        }
        case 0x81: { /* NEWOBJ: cls.__new__(cls) of an allowed class, no arguments */
            if (stack->len - FLOOR < 2)
                return bad("NEWOBJ needs a class and arguments", at);
            PyObject *args = stack->items[stack->len - 1], *cls = stack->items[stack->len - 2];
            if (!PyTuple_CheckExact(args) || PyTuple_GET_SIZE(args) != 0)
                return bad("NEWOBJ with arguments", at);
            int ok = PySet_Contains(allowed, cls);
            if (ok < 0)
                return NULL;
            if (!ok || !PyType_Check(cls))
                return bad("NEWOBJ of something that is not an AST class", at);
            PyTypeObject *type = (PyTypeObject *)cls;
            PyObject *inst = type->tp_new(type, args, NULL);
            if (inst == NULL)
                return NULL;
            Py_DECREF(args);
            Py_DECREF(cls);
            stack->len -= 2;
            PUSH(inst);
            break;
        }
        case 'b': { /* BUILD: the dict's items become the instance's attributes, in order */
            if (stack->len - FLOOR < 2)
                return bad("BUILD needs an instance and a state", at);
            PyObject *state = stack->items[stack->len - 1], *inst = stack->items[stack->len - 2];
            if (state == direct_state) { /* the fields are already set */
                Py_DECREF(state);
                stack->len -= 1;
                break;
            }
            if (!PyDict_CheckExact(state))
                return bad("BUILD with a state that is not a dict", at);
            int ok = PySet_Contains(allowed, (PyObject *)Py_TYPE(inst));
            if (ok < 0)
                return NULL;
            if (!ok)
                return bad("BUILD of something that is not an AST instance", at);
            Py_ssize_t i = 0;
            PyObject *k, *v;
            while (PyDict_Next(state, &i, &k, &v)) {
                if (!field_name(k))
                    return bad("not a field name", at);
                Py_INCREF(k);
                PyUnicode_InternInPlace(&k);
                int r = PyObject_GenericSetAttr(inst, k, v);
                Py_DECREF(k);
                if (r < 0)
                    return NULL;
            }
            Py_DECREF(state);
            stack->len -= 1;
            break;
        }
        case 'Q': { /* BINPERSID: only "source" */
            if (stack->len <= FLOOR)
                return bad("BINPERSID on an empty stack", at);
            PyObject *pid = stack->items[stack->len - 1];
            if (!PyUnicode_CheckExact(pid) || PyUnicode_CompareWithASCIIString(pid, "source") != 0)
                return bad("unexpected persistent id", at);
            Py_DECREF(pid);
            Py_INCREF(source);
            stack->items[stack->len - 1] = source;
            break;
        }
        case '0': /* POP */
            if (stack->len <= FLOOR)
                return bad("POP on an empty stack", at);
            Py_DECREF(stack->items[--stack->len]);
            break;
        case 'R': { /* REDUCE: only D.span(line, col, end_line, end_col), a Span of `source` */
            if (stack->len - FLOOR < 2)
                return bad("REDUCE needs a callable and arguments", at);
            PyObject *args = stack->items[stack->len - 1], *fn = stack->items[stack->len - 2];
            if (span_type == NULL || fn != span_type || !PyTuple_CheckExact(args) || PyTuple_GET_SIZE(args) != 4)
                return bad("REDUCE of something other than D.span with four numbers", at);
            for (int i = 0; i < 4; i++)
                if (!PyLong_CheckExact(PyTuple_GET_ITEM(args, i)))
                    return bad("REDUCE of something other than D.span with four numbers", at);
            PyObject *inst = make_span(span_type, source, &PyTuple_GET_ITEM(args, 0), span_names, empty, stores);
            if (inst == NULL)
                return NULL;
            Py_DECREF(args);
            Py_DECREF(fn);
            stack->len -= 2;
            PUSH(inst);
            break;
        }
        default:
            return bad("unexpected opcode", at);
        }
    }
    return bad("no STOP", pos);
#undef NEED
#undef PUSH
#undef FLOOR
}

/* The object the answer `data` holds from byte `offset` on (a new reference), or NULL with an
 * exception set.  `classes`: dict (tag, name) -> type; `source`: the persistent id "source". */
PyObject *tlop_decode(PyObject *data, PyObject *classes, PyObject *source, Py_ssize_t offset)
{
    if (!PyDict_Check(classes))
        return bad("bad arguments", 0);
    Py_buffer view; /* bytes, or the library's answer in place (a ctypes array): no copy */
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    Py_ssize_t n = view.len;
    if (offset < 0 || offset > n) {
        PyBuffer_Release(&view);
        return bad("offset outside the answer", offset);
    }
    PyObject *values = PyDict_Values(classes);
    PyObject *allowed = values ? PySet_New(values) : NULL;
    Py_XDECREF(values);
    if (allowed == NULL) {
        PyBuffer_Release(&view);
        return NULL;
    }
    objvec stack = {0}, memo = {0};
    markvec marks = {0};
    PyObject *direct_state = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
    if (direct_state == NULL) {
        Py_DECREF(allowed);
        PyBuffer_Release(&view);
        return NULL;
    }
    /* D.span: the class classes names for it (Span), its fields in the dataclass's order */
    PyObject *span_key = Py_BuildValue("(ss)", "D", "span");
    PyObject *span_type = span_key ? PyDict_GetItemWithError(classes, span_key) : NULL; /* borrowed */
    Py_XDECREF(span_key);
    if (span_type != NULL && !PyType_Check(span_type))
        span_type = NULL;
    /* a span is only ever D.span(l, c, el, ec): never NEWOBJ, never BUILD (the reference reader,
     * which cannot set the fields of a Span, a class with slots, through BUILD, refuses both) */
    int discarded = span_type == NULL || PySet_Discard(allowed, span_type) >= 0;
    static const char *field_names[5] = {"source", "line", "col", "end_line", "end_col"};
    PyObject *span_names[5] = {NULL};
    PyObject *empty = PyTuple_New(0);
    int ok = discarded && empty != NULL && !PyErr_Occurred();
    for (int i = 0; ok && i < 5; i++)
        ok = (span_names[i] = PyUnicode_InternFromString(field_names[i])) != NULL;
    PyObject *out = NULL;
    if (ok) {
        PyObject *last_int = NULL; /* see cached_int */
        store *stores = PyMem_Calloc(STORES, sizeof(store));
        if (stores == NULL)
            PyErr_NoMemory();
        else
            out = run((const unsigned char *)view.buf, n, offset, classes, allowed, source, direct_state, span_type,
                      span_names, empty, &last_int, &stack, &memo, &marks, stores);
        if (stores != NULL)
            stores_clear(stores);
        PyMem_Free(stores);
        Py_XDECREF(last_int);
    }
    for (int i = 0; i < 5; i++)
        Py_XDECREF(span_names[i]);
    Py_XDECREF(empty);
    Py_DECREF(direct_state);
    vec_clear(&stack);
    vec_clear(&memo);
    PyMem_Free(marks.items);
    Py_DECREF(allowed);
    PyBuffer_Release(&view);
    return out;
}
