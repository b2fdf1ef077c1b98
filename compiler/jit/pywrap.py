"""The scalar fast path: a CPython call wrapper written in LLVM IR, next to the cost function.

Why: a cost function takes ~10 ns; calling it through ctypes with keyword arguments costs
~2 µs and through cffi ~1 µs of argument handling in Python.  Instead the wrapper is itself
native code with the CPython calling convention (``METH_VARARGS | METH_KEYWORDS``), compiled
in the same module as the cost function (so the cost is inlined into it) and installed as the
``__call__`` of the evaluator's class.  It needs no C compiler at install time and is cached
with the rest of the object file (it references the C API by symbol, never by address).

What it does, per call: reads each keyword argument from the dict (interned parameter names,
so the lookup is a pointer compare), accepts exact ``float``, ``numpy.float64`` and ``int``
values (``int`` through ``PyLong_AsDouble``), fills in defaults, checks NaN, integrality and
the declared constraints, checks that channel arguments are the ones the code is specialised
for, evaluates, and returns a new float.  *Anything* else — a positional argument, an unknown
or missing keyword, a string channel name, an array, a violated constraint, an evaluation
error, a NaN result, an out-of-grid warning — is handed unchanged to a Python fallback
(``PyObject_Call(fallback, args, kwargs)``), which binds the arguments properly and raises the
exact :class:`TlopError`.  So the native path only ever answers when the answer is certain.

The per-evaluator data (fallback, table pointers, parameter names, defaults, type objects) is
a block of machine words held in a ``PyCapsule`` that is the ``self`` of the builtin function.
Layout (words): ``[fallback, tabs, scal, float, int, numpy.float64, names…, defaults…]``.

What it does not do: batch evaluation (:mod:`tlop.jit.codegen` ``sym_batch``), or run on
Python implementations whose object layout differs (:func:`layout_supported` says whether
the ``ob_type`` / ``ob_fval`` offsets hold; otherwise the evaluator uses ctypes).
"""

from __future__ import annotations

import ctypes
import sys

import numpy as np
from llvmlite import ir

from .codegen import CodeGen, emit_arg_checks
from .tables import F64, F64P, I64, I8

__all__ = ["emit_pywrap", "make_builtin", "layout_supported", "HEADER_WORDS"]

HEADER_WORDS = 6
_PTR = I8.as_pointer()
_OB_TYPE_WORD = 1  # ob_type is the second word of every object
_OB_FVAL_WORD = 2  # PyFloatObject.ob_fval, PyDoubleScalarObject.obval: the third word
_METH_VARARGS_KEYWORDS = 0x0001 | 0x0002


def layout_supported() -> bool:
    """True on CPython builds whose object header is ``{refcnt, type}`` and whose float value
    sits right after it (every release build of 3.8 … 3.13 with the GIL)."""
    if sys.implementation.name != "cpython" or hasattr(sys, "gettotalrefcount"):
        return False
    if getattr(sys, "_is_gil_enabled", lambda: True)() is False:
        return False
    try:
        for obj, tp in ((1.25, float), (np.float64(-3.5), np.float64)):
            words = (ctypes.c_void_p * 3).from_address(id(obj))
            if words[_OB_TYPE_WORD] != id(tp):
                return False
            if ctypes.c_double.from_address(id(obj) + 8 * _OB_FVAL_WORD).value != float(obj):
                return False
    except Exception:  # noqa: BLE001 - any surprise: do not use the native wrapper
        return False
    return True


def emit_pywrap(cg: CodeGen, core: ir.Function) -> str:
    """Add ``{sym}_py`` to ``cg.module``; returns its name."""
    m = cg.module
    infos = cg.infos
    n = len(infos)
    obj = _PTR
    name = f"{cg.sym}_py"
    fn = ir.Function(m, ir.FunctionType(obj, [obj, obj, obj]), name)
    self_, args, kw = fn.args

    def decl(fname, ret, params):
        if fname in m.globals:
            return m.globals[fname]
        return ir.Function(m, ir.FunctionType(ret, params), fname)

    capsule_get = decl("PyCapsule_GetPointer", _PTR, [obj, _PTR])
    dict_get = decl("PyDict_GetItem", obj, [obj, obj])
    dict_size = decl("PyDict_Size", I64, [obj])
    long_as = decl("PyLong_AsDouble", F64, [obj])
    err_occ = decl("PyErr_Occurred", obj, [])
    err_clear = decl("PyErr_Clear", ir.VoidType(), [])
    from_double = decl("PyFloat_FromDouble", obj, [F64])
    call = decl("PyObject_Call", obj, [obj, obj, obj])

    entry = fn.append_basic_block("entry")
    fallback = fn.append_basic_block("fallback")
    b = ir.IRBuilder(entry)
    buf = b.alloca(F64, ir.Constant(I64, max(n, 1)))
    nst = 2 + cg.nslots
    st = b.alloca(I64, ir.Constant(I64, nst))
    ctx = b.bitcast(b.call(capsule_get, [self_, ir.Constant(_PTR, None)]), I64.as_pointer())

    def word(k):
        return b.load(b.gep(ctx, [ir.Constant(I64, k)]))

    def as_obj(v):
        return b.inttoptr(v, obj)

    fb_obj = as_obj(word(0))
    tabs = b.inttoptr(word(1), F64P.as_pointer())
    scal = b.inttoptr(word(2), F64P)
    t_float, t_int, t_np = word(3), word(4), word(5)
    null = ir.Constant(obj, None)
    # positional arguments -> fallback
    nargs = b.load(b.gep(b.bitcast(args, I64.as_pointer()), [ir.Constant(I64, 2)]))
    has_kw = b.icmp_unsigned("!=", kw, null)
    check_kw = fn.append_basic_block("kw")
    b.cbranch(b.icmp_signed("!=", nargs, ir.Constant(I64, 0)), fallback, check_kw)
    b.position_at_end(check_kw)
    size_bb = fn.append_basic_block("kwsize")
    after_size = fn.append_basic_block("params")
    cur = b.block
    b.cbranch(has_kw, size_bb, after_size)
    b.position_at_end(size_bb)
    nkw_v = b.call(dict_size, [kw])
    b.branch(after_size)
    b.position_at_end(after_size)
    nkw = b.phi(I64)
    nkw.add_incoming(ir.Constant(I64, 0), cur)
    nkw.add_incoming(nkw_v, size_bb)
    found = ir.Constant(I64, 0)
    values = []
    for k, info in enumerate(infos):
        default = b.bitcast(word(HEADER_WORDS + n + k), F64)
        start = b.block
        lookup_bb = fn.append_basic_block(f"get_{info.name}")
        have_bb = fn.append_basic_block(f"have_{info.name}")
        float_bb = fn.append_basic_block(f"float_{info.name}")
        notfloat_bb = fn.append_basic_block(f"notfloat_{info.name}")
        int_bb = fn.append_basic_block(f"int_{info.name}")
        done_bb = fn.append_basic_block(f"done_{info.name}")
        b.cbranch(has_kw, lookup_bb, done_bb)
        b.position_at_end(lookup_bb)
        item = b.call(dict_get, [kw, as_obj(word(HEADER_WORDS + k))])
        b.cbranch(b.icmp_unsigned("==", item, null), done_bb, have_bb)
        b.position_at_end(have_bb)
        words = b.bitcast(item, I64.as_pointer())
        tp = b.load(b.gep(words, [ir.Constant(I64, _OB_TYPE_WORD)]))
        is_float = b.or_(b.icmp_unsigned("==", tp, t_float), b.icmp_unsigned("==", tp, t_np))
        b.cbranch(is_float, float_bb, notfloat_bb)
        b.position_at_end(float_bb)
        fv = b.load(b.gep(b.bitcast(item, F64P), [ir.Constant(I64, _OB_FVAL_WORD)]))
        b.branch(done_bb)
        b.position_at_end(notfloat_bb)
        b.cbranch(b.icmp_unsigned("==", tp, t_int), int_bb, fallback)
        b.position_at_end(int_bb)
        iv = b.call(long_as, [item])
        maybe_err = b.fcmp_ordered("==", iv, ir.Constant(F64, -1.0))
        int_ok = fn.append_basic_block(f"intok_{info.name}")
        int_chk = fn.append_basic_block(f"intchk_{info.name}")
        b.cbranch(maybe_err, int_chk, int_ok)
        b.position_at_end(int_chk)
        occurred = b.icmp_unsigned("!=", b.call(err_occ, []), null)
        int_err = fn.append_basic_block(f"interr_{info.name}")
        b.cbranch(occurred, int_err, int_ok)
        b.position_at_end(int_err)
        b.call(err_clear, [])
        b.branch(fallback)
        b.position_at_end(int_ok)
        b.branch(done_bb)
        b.position_at_end(done_bb)
        v = b.phi(F64, info.name)
        v.add_incoming(default, start)
        v.add_incoming(default, lookup_bb)
        v.add_incoming(fv, float_bb)
        v.add_incoming(iv, int_ok)
        got = b.phi(I64)
        got.add_incoming(ir.Constant(I64, 0), start)
        got.add_incoming(ir.Constant(I64, 0), lookup_bb)
        got.add_incoming(ir.Constant(I64, 1), float_bb)
        got.add_incoming(ir.Constant(I64, 1), int_ok)
        found = b.add(found, got)
        values.append(v)
        b.store(v, b.gep(buf, [ir.Constant(I64, k)]))
    ok = b.icmp_signed("==", found, nkw)
    ok = b.and_(ok, emit_arg_checks(b, infos, values))
    for info, v in zip(infos, values):
        if info.channel:
            ok = b.and_(ok, b.fcmp_ordered("==", v, ir.Constant(F64, float(cg.channel_args[info.name]))))
    eval_bb = fn.append_basic_block("eval")
    b.cbranch(ok, eval_bb, fallback)
    b.position_at_end(eval_bb)
    for j in range(nst):
        b.store(ir.Constant(I64, 0), b.gep(st, [ir.Constant(I64, j)]))
    r = b.call(core, [buf, tabs, scal, st, ir.Constant(I64, 0)])
    bad = b.fcmp_unordered("uno", r, r)
    for j in range(nst):
        bad = b.or_(bad, b.icmp_signed("!=", b.load(b.gep(st, [ir.Constant(I64, j)])), ir.Constant(I64, 0)))
    ret_bb = fn.append_basic_block("ret")
    b.cbranch(bad, fallback, ret_bb)
    b.position_at_end(ret_bb)
    b.ret(b.call(from_double, [r]))
    b.position_at_end(fallback)
    b.ret(b.call(call, [fb_obj, args, kw]))
    return name


class _MethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p),
                ("ml_flags", ctypes.c_int), ("ml_doc", ctypes.c_char_p)]


_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_PyCFunction_NewEx = ctypes.pythonapi.PyCFunction_NewEx
_PyCFunction_NewEx.restype = ctypes.py_object
_PyCFunction_NewEx.argtypes = [ctypes.POINTER(_MethodDef), ctypes.py_object, ctypes.py_object]


class NativeCall:
    """Owns what a native wrapper needs alive: the method definition, the context words (and
    everything they point to) and the resulting builtin function (:attr:`function`)."""

    def __init__(self, address: int, label: str, fallback, tabs: int, scal: int, names: list,
                 defaults: list, keepalive: tuple):
        n = len(names)
        self.names = [sys.intern(s) for s in names]
        self.fallback = fallback
        words = (ctypes.c_uint64 * (HEADER_WORDS + 2 * n))()
        words[0] = id(fallback)
        words[1] = tabs
        words[2] = scal
        words[3] = id(float)
        words[4] = id(int)
        words[5] = id(np.float64)
        for k, s in enumerate(self.names):
            words[HEADER_WORDS + k] = id(s)
        dflt = np.array([np.nan if d is None else d for d in defaults] + [0.0], dtype=np.float64)
        for k in range(n):
            words[HEADER_WORDS + n + k] = int(dflt[k:k + 1].view(np.uint64)[0])
        self.words = words
        self.keepalive = keepalive
        self._label = label.encode()
        self.methoddef = _MethodDef(self._label, address, _METH_VARARGS_KEYWORDS, None)
        self.capsule = _PyCapsule_New(ctypes.addressof(words), None, None)
        self.function = _PyCFunction_NewEx(ctypes.byref(self.methoddef), self.capsule, None)


def make_builtin(*args, **kwargs) -> NativeCall:
    return NativeCall(*args, **kwargs)
