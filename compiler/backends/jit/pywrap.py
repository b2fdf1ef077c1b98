"""The scalar fast path: one CPython call wrapper, written in LLVM IR, shared by every evaluator.

Why: a cost function takes ~10 ns; calling it through ctypes with keyword arguments costs
~2 µs and through cffi ~1 µs of argument handling in Python.  Instead the wrapper is itself
native code with the CPython calling convention (``METH_VARARGS | METH_KEYWORDS``), installed
as the ``__call__`` of the evaluator's class.  It needs no C compiler at install time.

There is one wrapper per process, not one per algorithm: everything algorithm-specific is in
a block of context words (a ``PyCapsule`` that is the ``self`` of the builtin function), so
the wrapper is compiled once (and cached on disk like any object file) and an algorithm's
own module holds only its cost function and batch loop — half the code LLVM has to optimise
on a cold compile.  The wrapper evaluates the point by calling the algorithm's
``sym_batch`` for one point (an indirect call, a few ns).

What it does, per call: reads each keyword argument from the dict (interned parameter names,
so the lookup is a pointer compare), accepts exact ``float``, ``numpy.float64`` and ``int``
values (``int`` through ``PyLong_AsDouble``), fills in defaults, checks that channel arguments
are the ones the code is specialised for, runs the batch loop on the one point (which checks
NaN, integrality and the declared constraints) and returns a new float.  *Anything* else — a
positional argument, an unknown or missing keyword, a string channel name, an array, a
violated constraint, an evaluation error, a NaN result, an out-of-grid warning — is handed
unchanged to a Python fallback (``PyObject_Call(fallback, args, kwargs)``), which binds the
arguments properly and raises the exact :class:`TlopError`.  So the native path only ever
answers when the answer is certain.

Context layout (words): ``[fallback, tabs, scal, float, int, numpy.float64, batch, n,
n_status]``, then ``MAX_PARAMS`` words each of interned names, default values (NaN: none) and
fixed values (NaN: any value).

What it does not do: batch evaluation (:mod:`tlop.backends.jit.codegen` ``sym_batch``), or run on
Python implementations whose object layout differs (:func:`layout_supported` says whether
the ``ob_type`` / ``ob_fval`` offsets hold; otherwise the evaluator uses ctypes)."""

from __future__ import annotations

import ctypes
import sys
import threading

import numpy as np
from llvmlite import ir

from tlop.backends.jit.tables import F64, F64P, I64, I8

__all__ = ["emit_pycall", "pycall_address", "NativeCall", "make_builtin", "layout_supported", "HEADER_WORDS",
           "install_tp_call", "tp_call_supported"]

#: context words: fallback, tabs, scal, float, int, numpy.float64, batch, n, n_status
HEADER_WORDS = 9
_W_FALLBACK, _W_TABS, _W_SCAL, _W_FLOAT, _W_INT, _W_NPF64, _W_BATCH, _W_N, _W_NST = range(HEADER_WORDS)
MAX_PARAMS = 32  # more parameters (or status words) than this: the evaluator uses ctypes
MAX_STATUS = 256
PYCALL_SYMBOL = "tlop_pycall_v3"
_PYCALL_ADDRESSES = None
_TP_CALL_WORD = 16  # PyTypeObject.tp_call (checked by tp_call_supported)
_INSTANCE_SLOT_WORD = 2  # the first __slots__ entry of a class derived from object
_PYCALL_LOCK = threading.Lock()
_PTR = I8.as_pointer()
_OB_TYPE_WORD = 1  # ob_type is the second word of every object
_OB_FVAL_WORD = 2  # PyFloatObject.ob_fval, PyDoubleScalarObject.obval: the third word
_CAPSULE_POINTER_WORD = 2  # PyCapsule.pointer: the third word
_METH_VARARGS_KEYWORDS = 0x0001 | 0x0002


def layout_supported() -> bool:
    """True on CPython builds whose object header is ``{refcnt, type}`` and whose float value
    and capsule pointer sit right after it (every release build of 3.8 … 3.13 with the GIL)."""
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
        probe = ctypes.c_uint64(0)
        cap = _PyCapsule_New(ctypes.addressof(probe), None, None)
        if (ctypes.c_void_p * 3).from_address(id(cap))[_CAPSULE_POINTER_WORD] != ctypes.addressof(probe):
            return False
    except Exception:  # noqa: BLE001 - any surprise: do not use the native wrapper
        return False
    return True


def emit_pycall(module: ir.Module, name: str = PYCALL_SYMBOL, via_instance: bool = False) -> str:
    """Add the generic wrapper ``name`` to ``module``; returns its name.

    ``PyObject* name(PyObject* self, PyObject* args, PyObject* kwargs)``, where ``self`` is the
    context capsule (a builtin function's ``self``) or, with ``via_instance``, an evaluator
    whose first slot holds that capsule (the wrapper is then the ``tp_call`` of the
    evaluator's class, see :func:`install_tp_call`).  The context words
    (:data:`HEADER_WORDS` words, then names, defaults and fixed values, ``MAX_PARAMS`` of each)
    say everything algorithm-specific, so this one function serves every evaluator.  The
    keyword dict is walked once with ``PyDict_Next`` and each key matched by identity against
    the interned parameter names (no hashing); a key that matches none goes to the fallback."""
    obj = _PTR
    i64p = I64.as_pointer()
    fn = ir.Function(module, ir.FunctionType(obj, [obj, obj, obj]), name)
    self_, args, kw = fn.args

    def decl(fname, ret, params):
        if fname in module.globals:
            return module.globals[fname]
        return ir.Function(module, ir.FunctionType(ret, params), fname)

    dict_next = decl("PyDict_Next", ir.IntType(32), [obj, i64p, obj.as_pointer(), obj.as_pointer()])
    long_as = decl("PyLong_AsDouble", F64, [obj])
    err_occ = decl("PyErr_Occurred", obj, [])
    err_clear = decl("PyErr_Clear", ir.VoidType(), [])
    from_double = decl("PyFloat_FromDouble", obj, [F64])
    call = decl("PyObject_Call", obj, [obj, obj, obj])
    batch_ty = ir.FunctionType(ir.VoidType(), [I64, I64, F64P.as_pointer(), i64p, F64P.as_pointer(),
                                               F64P, F64P, i64p])
    null = ir.Constant(obj, None)
    zero, one = ir.Constant(I64, 0), ir.Constant(I64, 1)

    def block(label):
        return fn.append_basic_block(label)

    entry, setup, dflt_head, dflt_body = block("entry"), block("setup"), block("dflt_head"), block("dflt_body")
    kw_bb, kw_head, kw_item, match_head, match_body = (block("kw"), block("kw_head"), block("kw_item"),
                                                        block("match_head"), block("match_body"))
    matched, float_bb, notfloat_bb, int_bb, int_chk, int_err, store_bb = (
        block("matched"), block("float"), block("notfloat"), block("int"), block("intchk"), block("interr"),
        block("store"))
    fix_head, fix_body, run_bb, chk_head, chk_body, ret_bb, fallback = (
        block("fix_head"), block("fix_body"), block("run"), block("chk"), block("chk_body"), block("ret"),
        block("fallback"))

    b = ir.IRBuilder(entry)
    capsule = self_
    if via_instance:  # the evaluator's first slot (checked by tp_call_supported)
        capsule = b.load(b.gep(b.bitcast(self_, obj.as_pointer()), [ir.Constant(I64, _INSTANCE_SLOT_WORD)]))
        # an instance made without __init__ has no context: call the class's __call__
        no_ctx = fn.append_basic_block("no_ctx")
        have_ctx = fn.append_basic_block("have_ctx")
        b.cbranch(b.icmp_unsigned("==", capsule, null), no_ctx, have_ctx)
        b.position_at_end(no_ctx)
        get_attr = decl("PyObject_GetAttrString", obj, [obj, _PTR])
        dec_ref = decl("Py_DecRef", ir.VoidType(), [obj])
        text = bytearray(b"__call__\0")
        cname = ir.GlobalVariable(module, ir.ArrayType(I8, len(text)), name + "_call_name")
        cname.global_constant = True
        cname.linkage = "internal"
        cname.initializer = ir.Constant(ir.ArrayType(I8, len(text)), text)
        tp = b.inttoptr(b.load(b.gep(b.bitcast(self_, i64p), [ir.Constant(I64, _OB_TYPE_WORD)])), obj)
        meth = b.call(get_attr, [tp, b.bitcast(cname, _PTR)])
        got_meth = fn.append_basic_block("got_call")
        fail_bb = fn.append_basic_block("no_call")
        b.cbranch(b.icmp_unsigned("==", meth, null), fail_bb, got_meth)
        b.position_at_end(fail_bb)
        b.ret(null)
        b.position_at_end(got_meth)
        res = b.call(call, [meth, args, kw])
        b.call(dec_ref, [meth])
        b.ret(res)
        b.position_at_end(have_ctx)
    # the capsule's pointer field is the word after the object header (see layout_supported)
    ctx = b.inttoptr(b.load(b.gep(b.bitcast(capsule, i64p), [ir.Constant(I64, _CAPSULE_POINTER_WORD)])), i64p)

    def word(k):
        return b.load(b.gep(ctx, [k if isinstance(k, ir.Value) else ir.Constant(I64, k)]))

    nargs = b.load(b.gep(b.bitcast(args, i64p), [ir.Constant(I64, 2)]))  # PyTuple ob_size
    n = word(_W_N)
    nst = word(_W_NST)
    ok = b.and_(b.icmp_signed("==", nargs, zero), b.icmp_signed("<=", n, ir.Constant(I64, MAX_PARAMS)))
    ok = b.and_(ok, b.icmp_signed("<=", nst, ir.Constant(I64, MAX_STATUS)))
    b.cbranch(ok, setup, fallback)

    b.position_at_end(setup)
    buf = b.alloca(F64, ir.Constant(I64, MAX_PARAMS))
    argp = b.alloca(F64P, ir.Constant(I64, MAX_PARAMS))
    strides = b.alloca(I64, ir.Constant(I64, MAX_PARAMS))
    st = b.alloca(I64, ir.Constant(I64, MAX_STATUS))
    out = b.alloca(F64)
    pos = b.alloca(I64)
    key_slot = b.alloca(obj)
    val_slot = b.alloca(obj)
    b.branch(dflt_head)

    # every parameter starts at its default (NaN: none, so the batch loop's checks reject it)
    b.position_at_end(dflt_head)
    k = b.phi(I64, "k")
    k.add_incoming(zero, setup)
    b.cbranch(b.icmp_signed("<", k, n), dflt_body, kw_bb)
    b.position_at_end(dflt_body)
    slot = b.gep(buf, [k])
    b.store(b.bitcast(word(b.add(k, ir.Constant(I64, HEADER_WORDS + MAX_PARAMS))), F64), slot)
    b.store(slot, b.gep(argp, [k]))
    b.store(zero, b.gep(strides, [k]))
    k.add_incoming(b.add(k, one), dflt_body)
    b.branch(dflt_head)

    # each keyword argument: find its parameter, convert its value
    b.position_at_end(kw_bb)
    b.store(zero, pos)
    b.cbranch(b.icmp_unsigned("==", kw, null), fix_head, kw_head)
    b.position_at_end(kw_head)
    more = b.call(dict_next, [kw, pos, key_slot, val_slot])
    b.cbranch(b.icmp_signed("!=", more, ir.Constant(ir.IntType(32), 0)), kw_item, fix_head)
    b.position_at_end(kw_item)
    key = b.ptrtoint(b.load(key_slot), I64)
    item = b.load(val_slot)
    b.branch(match_head)
    b.position_at_end(match_head)
    j = b.phi(I64, "j")
    j.add_incoming(zero, kw_item)
    b.cbranch(b.icmp_signed("<", j, n), match_body, fallback)
    b.position_at_end(match_body)
    j.add_incoming(b.add(j, one), match_body)
    b.cbranch(b.icmp_unsigned("==", word(b.add(j, ir.Constant(I64, HEADER_WORDS))), key), matched, match_head)
    b.position_at_end(matched)
    tp = b.load(b.gep(b.bitcast(item, i64p), [ir.Constant(I64, _OB_TYPE_WORD)]))
    is_float = b.or_(b.icmp_unsigned("==", tp, word(_W_FLOAT)), b.icmp_unsigned("==", tp, word(_W_NPF64)))
    b.cbranch(is_float, float_bb, notfloat_bb)
    b.position_at_end(float_bb)
    fv = b.load(b.gep(b.bitcast(item, F64P), [ir.Constant(I64, _OB_FVAL_WORD)]))
    b.branch(store_bb)
    b.position_at_end(notfloat_bb)
    b.cbranch(b.icmp_unsigned("==", tp, word(_W_INT)), int_bb, fallback)
    b.position_at_end(int_bb)
    iv = b.call(long_as, [item])
    b.cbranch(b.fcmp_ordered("==", iv, ir.Constant(F64, -1.0)), int_chk, store_bb)
    b.position_at_end(int_chk)
    b.cbranch(b.icmp_unsigned("!=", b.call(err_occ, []), null), int_err, store_bb)
    b.position_at_end(int_err)
    b.call(err_clear, [])
    b.branch(fallback)
    b.position_at_end(store_bb)
    v = b.phi(F64, "v")
    v.add_incoming(fv, float_bb)
    v.add_incoming(iv, int_bb)
    v.add_incoming(iv, int_chk)
    b.store(v, b.gep(buf, [j]))
    b.branch(kw_head)

    # a channel parameter must be the channel the code is specialised for (NaN: anything)
    b.position_at_end(fix_head)
    q = b.phi(I64, "q")
    q.add_incoming(zero, kw_bb)
    q.add_incoming(zero, kw_head)
    b.cbranch(b.icmp_signed("<", q, n), fix_body, run_bb)
    b.position_at_end(fix_body)
    fixed = b.bitcast(word(b.add(q, ir.Constant(I64, HEADER_WORDS + 2 * MAX_PARAMS))), F64)
    bad = b.and_(b.fcmp_ordered("ord", fixed, fixed), b.fcmp_unordered("!=", b.load(b.gep(buf, [q])), fixed))
    q.add_incoming(b.add(q, one), fix_body)
    b.cbranch(bad, fallback, fix_head)

    # one point through the batch loop (which checks the arguments)
    b.position_at_end(run_bb)
    b.call(module.declare_intrinsic("llvm.memset", [_PTR, I64]),
           [b.bitcast(st, _PTR), ir.Constant(I8, 0), b.mul(nst, ir.Constant(I64, 8)), ir.Constant(ir.IntType(1), 0)])
    batch = b.inttoptr(word(_W_BATCH), batch_ty.as_pointer())
    b.call(batch, [zero, one, argp, strides, b.inttoptr(word(_W_TABS), F64P.as_pointer()),
                   b.inttoptr(word(_W_SCAL), F64P), out, st])
    b.branch(chk_head)
    # any status word set (error, NaN, argument check, out-of-grid warning): fallback
    b.position_at_end(chk_head)
    c = b.phi(I64, "c")
    c.add_incoming(zero, run_bb)
    b.cbranch(b.icmp_signed("<", c, nst), chk_body, ret_bb)
    b.position_at_end(chk_body)
    c.add_incoming(b.add(c, one), chk_body)
    b.cbranch(b.icmp_signed("!=", b.load(b.gep(st, [c])), zero), fallback, chk_head)

    b.position_at_end(ret_bb)
    b.ret(b.call(from_double, [b.load(out)]))
    b.position_at_end(fallback)
    b.ret(b.call(call, [b.inttoptr(word(_W_FALLBACK), obj), args, kw]))
    return name


def pycall_address(via_instance: bool = False) -> int:
    """The address of the generic wrapper (see :func:`emit_pycall`), compiled once per
    process (and cached on disk)."""
    global _PYCALL_ADDRESSES
    if _PYCALL_ADDRESSES is None:
        with _PYCALL_LOCK:
            if _PYCALL_ADDRESSES is None:
                _PYCALL_ADDRESSES = _build_pycall()
    return _PYCALL_ADDRESSES[1 if via_instance else 0]


def tp_call_supported() -> bool:
    """True when :func:`install_tp_call` may be used: ``tp_call`` sits where this module
    expects it in a type object (checked against ``FunctionType``, whose ``tp_call`` is the
    exported ``PyVectorcall_Call``) and a class's first ``__slots__`` entry is the word after
    the object header."""
    if not layout_supported():
        return False
    try:
        import types
        want = ctypes.cast(ctypes.pythonapi.PyVectorcall_Call, ctypes.c_void_p).value
        if ctypes.c_void_p.from_address(id(types.FunctionType) + 8 * _TP_CALL_WORD).value != want:
            return False

        class _Probe:
            __slots__ = ("first", "__dict__")

        p, o = _Probe(), object()
        p.first = o
        return (ctypes.c_void_p * 3).from_address(id(p))[_INSTANCE_SLOT_WORD] == id(o)
    except Exception:  # noqa: BLE001 - any surprise: keep the builtin-function path
        return False


def install_tp_call(cls: type) -> None:
    """Make calls of ``cls``'s instances go straight to the native wrapper: CPython calls
    ``tp_call`` of the class, which otherwise is the generic slot that looks up ``__call__``
    and calls it (≈ 30 ns).  ``cls.__call__`` must already be the builtin function made by
    :class:`NativeCall` (so Python-visible behaviour is unchanged), and every instance's first
    slot must hold its context capsule.  Assigning ``cls.__call__`` again restores the generic
    slot."""
    ctypes.c_void_p.from_address(id(cls) + 8 * _TP_CALL_WORD).value = pycall_address(via_instance=True)


def _build_pycall() -> int:
    import hashlib
    from pathlib import Path

    from tlop.backends.jit import cache as _cache
    from tlop.backends.jit.engine import engine

    eng = engine()
    h = hashlib.sha256()
    for part in ("tlop-pycall-1", Path(__file__).read_text(), eng.describe()):
        h.update(part.encode())
        h.update(b"\0")
    key = h.hexdigest()
    symbols = (PYCALL_SYMBOL, PYCALL_SYMBOL + "_tp")
    store = _cache.default_cache()
    obj = store.get(key)
    if obj is not None:
        try:
            addrs = eng.load_object(obj, symbols)
            return tuple(addrs[s] for s in symbols)
        except ValueError:
            store.invalidate(key)
    module = ir.Module(name="tlop_pycall")
    emit_pycall(module, symbols[0])
    emit_pycall(module, symbols[1], via_instance=True)
    obj = eng.compile_ir(str(module), "tlop_pycall")
    store.put(key, obj)
    addrs = eng.load_object(obj, symbols)
    return tuple(addrs[s] for s in symbols)


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
    everything they point to) and the resulting builtin function (:attr:`function`).

    ``batch`` is the address of the algorithm's ``sym_batch``; ``fixed`` the value each
    parameter must have for that code (a channel parameter's specialisation) or None."""

    def __init__(self, batch: int, label: str, fallback, tabs: int, scal: int, names: list,
                 defaults: list, fixed: list, nstatus: int, keepalive: tuple):
        n = len(names)
        if n > MAX_PARAMS or nstatus > MAX_STATUS:
            raise ValueError("too many parameters or tables for the native wrapper")
        self.names = [sys.intern(s) for s in names]
        self.fallback = fallback
        words = (ctypes.c_uint64 * (HEADER_WORDS + 3 * MAX_PARAMS))()
        words[_W_FALLBACK] = id(fallback)
        words[_W_TABS] = tabs
        words[_W_SCAL] = scal
        words[_W_FLOAT] = id(float)
        words[_W_INT] = id(int)
        words[_W_NPF64] = id(np.float64)
        words[_W_BATCH] = batch
        words[_W_N] = n
        words[_W_NST] = nstatus
        for k, s in enumerate(self.names):
            words[HEADER_WORDS + k] = id(s)

        def bits(x):
            return int(np.array([np.nan if x is None else x], dtype=np.float64).view(np.uint64)[0])

        for k in range(n):
            words[HEADER_WORDS + MAX_PARAMS + k] = bits(defaults[k])
            words[HEADER_WORDS + 2 * MAX_PARAMS + k] = bits(fixed[k])
        self.words = words
        self.keepalive = keepalive
        self._label = label.encode()
        self.methoddef = _MethodDef(self._label, pycall_address(), _METH_VARARGS_KEYWORDS, None)
        self.capsule = _PyCapsule_New(ctypes.addressof(words), None, None)
        self.function = _PyCFunction_NewEx(ctypes.byref(self.methoddef), self.capsule, None)


def make_builtin(*args, **kwargs) -> NativeCall:
    return NativeCall(*args, **kwargs)
