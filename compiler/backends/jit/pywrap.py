"""The scalar fast path: one native CPython call wrapper, shared by every evaluator, built only
on the documented C API.

Why: a cost function takes ~10 ns; calling it through ctypes costs ~1 µs of argument handling.
Instead the wrapper is itself native code with a documented CPython calling convention, made
into a builtin function with ``PyCFunction_NewEx`` (called once, through ``ctypes.pythonapi``)
and called by the evaluator (see :class:`tlop.backends.jit.evaluator.Evaluator`, a
``functools.partial`` of it).  It needs no C compiler at install time.

Two conventions are emitted, and :data:`CONVENTION` picks one for the running interpreter:
``METH_VARARGS | METH_KEYWORDS`` (``(self, tuple, dict)``: what CPython 3.11's ``tp_call``
path hands over without conversion) and ``METH_FASTCALL | METH_KEYWORDS`` (``(self, args,
nargsf, kwnames)``: what the vectorcall path of 3.12+ hands over without conversion).

What the wrapper uses of CPython: only exported, documented functions —
``PyCapsule_GetPointer``, ``PyTuple_Size``/``PyTuple_GetItem``, ``PyDict_Next``,
``PyObject_Type``, ``Py_DecRef``, ``PyFloat_AsDouble``, ``PyUnicode_Compare``,
``PyErr_Occurred``/``PyErr_Clear``, ``PyFloat_FromDouble``, ``PyObject_Call`` /
``PyObject_Vectorcall``, ``PyTuple_New``/``PyTuple_SetItem``/``PyLong_FromVoidPtr`` (the
warner's argument) — and the documented shape of the calling conventions.  It never reads
an object's memory, never writes a type object, and assumes no struct layout.

There is one wrapper per process, not one per algorithm: everything algorithm-specific is in a
block of context words, reached through the builtin's ``self`` — a tuple ``(capsule, owner)``,
so that the builtin itself keeps the words (and the fallback, tables and method definition) alive
however long anyone holds it.  Per call it:

* binds positional and keyword arguments to parameters (keyword names are compared by identity
  with the interned parameter names, then with ``PyUnicode_Compare``), starting from the
  declared defaults (NaN: none);
* converts each value whose exact type is one of a short list (``float``, ``int``,
  ``numpy.float64`` …: see :func:`scalar_types`) with ``PyFloat_AsDouble``; a channel
  parameter also takes a ``str`` naming a channel;
* picks the code of the channel arguments' specialisation from a table the evaluator fills as
  specialisations get compiled;
* runs that code's batch loop on the one point (which checks NaN, integrality and the declared
  constraints) and returns a new float.

*Anything* else — too many positional arguments, an unknown or repeated name, another type, an
array, an unknown channel, a specialisation not compiled yet, a violated constraint, an
evaluation error, a NaN result — goes unchanged to the Python fallback
(the evaluator's general path), which binds the arguments properly and raises the exact
:class:`TlopError`.  So the native path only answers when the answer is certain, and its
results are those of the batch loop.

A point whose lookups went outside a table's grid under ``out_of_grid = "warn"`` (status words
``2 …``, see :func:`tlop.backends.jit.tables.status_words`) is answered natively too: the
wrapper calls the *warner* (a Python callable of the context, given the address of the status
words as an ``int``, valid during that call only), which issues the warnings from them; an
exception it raises (``warnings.simplefilter("error")``) is the call's exception.  Without a
warner such a point takes the fallback.

What it does not do: batch evaluation (:mod:`tlop.backends.jit.codegen` ``sym_batch``).
"""

from __future__ import annotations

import ctypes
import hashlib
import struct
import sys
import threading
from pathlib import Path

from llvmlite import ir

from tlop.backends.jit.tables import F64, F64P, I64, I8

__all__ = ["emit_pycall", "pycall_address", "NativeCall", "scalar_types", "CONVENTION", "MAX_COMBOS"]

#: header words of the context: fallback, tabs, scal, n, n_status, n_types, n_channels, n_combos
_W_FALLBACK, _W_TABS, _W_SCAL, _W_N, _W_NST, _W_NTYPES, _W_NCHAN, _W_NCOMBO = range(8)
#: header words giving the offsets (in words) of the variable-length sections; the warner (0: none)
_W_O_NAMES, _W_O_DEFAULTS, _W_O_KINDS, _W_O_TYPES, _W_O_CHANNELS, _W_O_CODE, _W_STR, _W_WARNER = range(8, 16)
HEADER_WORDS = 16
#: the most channel combinations one evaluator keeps in its table (the others take the fallback)
MAX_COMBOS = 64
KIND_NUMBER, KIND_CHANNEL = 0, 1
PYCALL_SYMBOLS = {"varargs": "tlop_pycall_va_v5", "fastcall": "tlop_pycall_fc_v5"}
_METH_FLAGS = {"varargs": 0x0001 | 0x0002, "fastcall": 0x0080 | 0x0002}  # METH_VARARGS|KEYWORDS, FASTCALL|KEYWORDS
_PY_VECTORCALL_ARGUMENTS_OFFSET = 1 << 63
#: the convention whose arguments reach the wrapper unconverted on this interpreter (3.12+
#: calls instances of a ``functools.partial`` subclass through vectorcall; 3.11 through tp_call)
CONVENTION = "fastcall" if sys.version_info >= (3, 12) else "varargs"
_PYCALL_ADDRESSES: dict = {}
_PYCALL_LOCK = threading.Lock()
_PTR = I8.as_pointer()
I32 = ir.IntType(32)


def scalar_types() -> tuple:
    """The exact types the native path converts with ``PyFloat_AsDouble``: what
    :func:`tlop.backends.binding.bind_arguments` turns into the same double with
    ``numpy.asarray(v, dtype=float)`` (subclasses such as ``bool`` take the fallback)."""
    out = [float, int]
    np = sys.modules.get("numpy")
    if np is not None:
        out += [np.float64, np.float32, np.int64, np.int32]
    return tuple(out)


# ====================================================================== LLVM IR
class _Api:
    """Declarations of the C-API functions the wrapper calls."""

    def __init__(self, module: ir.Module):
        self.module = module

    def __call__(self, name, ret, params):
        if name in self.module.globals:
            return self.module.globals[name]
        return ir.Function(self.module, ir.FunctionType(ret, params), name)


def _emit_helpers(module: ir.Module):
    """``tlop_pyconv(ctx, j, value, buf) -> i32`` (1: converted into ``buf[j]``, 0: fallback) and
    ``tlop_pymatch(ctx, key) -> i64`` (the parameter named ``key``, or -1)."""
    if "tlop_pyconv" in module.globals:
        return module.globals["tlop_pyconv"], module.globals["tlop_pymatch"]
    obj, i64p = _PTR, I64.as_pointer()
    api = _Api(module)
    py_type = api("PyObject_Type", obj, [obj])
    decref = api("Py_DecRef", ir.VoidType(), [obj])
    as_double = api("PyFloat_AsDouble", F64, [obj])
    err_occ = api("PyErr_Occurred", obj, [])
    err_clear = api("PyErr_Clear", ir.VoidType(), [])
    ucompare = api("PyUnicode_Compare", I32, [obj, obj])
    zero, one = ir.Constant(I64, 0), ir.Constant(I64, 1)

    # ---------------------------------------------------------------- convert
    conv = ir.Function(module, ir.FunctionType(I32, [i64p, I64, obj, F64P]), "tlop_pyconv")
    conv.linkage = "internal"
    ctx, j, item, buf = conv.args
    bb = {name: conv.append_basic_block(name) for name in (
        "entry", "str", "chan_head", "chan_body", "chan_cmp", "chan_hit", "types", "type_head", "type_body",
        "num", "num_chk", "num_err", "store", "no")}
    b = ir.IRBuilder(bb["entry"])

    def word(k):
        return b.load(b.gep(ctx, [k if isinstance(k, ir.Value) else ir.Constant(I64, k)]))

    tp = b.call(py_type, [item])
    b.call(decref, [tp])  # the object keeps its type alive: only the address is compared
    tpi = b.ptrtoint(tp, I64)
    kind = word(b.add(word(_W_O_KINDS), j))
    is_chan_str = b.and_(b.icmp_signed("==", kind, ir.Constant(I64, KIND_CHANNEL)),
                         b.icmp_unsigned("==", tpi, word(_W_STR)))
    b.cbranch(is_chan_str, bb["str"], bb["types"])

    b.position_at_end(bb["str"])  # a channel by name: its index
    nchan = word(_W_NCHAN)
    ochan = word(_W_O_CHANNELS)
    b.branch(bb["chan_head"])
    b.position_at_end(bb["chan_head"])
    c = b.phi(I64, "c")
    c.add_incoming(zero, bb["str"])
    b.cbranch(b.icmp_signed("<", c, nchan), bb["chan_body"], bb["no"])
    b.position_at_end(bb["chan_body"])
    name = word(b.add(ochan, c))
    b.cbranch(b.icmp_unsigned("==", name, b.ptrtoint(item, I64)), bb["chan_hit"], bb["chan_cmp"])
    b.position_at_end(bb["chan_cmp"])
    c.add_incoming(b.add(c, one), bb["chan_cmp"])
    same = b.icmp_signed("==", b.call(ucompare, [b.inttoptr(name, obj), item]), ir.Constant(I32, 0))
    b.cbranch(same, bb["chan_hit"], bb["chan_head"])
    b.position_at_end(bb["chan_hit"])
    b.store(b.sitofp(c, F64), b.gep(buf, [j]))
    b.ret(ir.Constant(I32, 1))

    b.position_at_end(bb["types"])  # a number of one of the accepted exact types
    ntypes = word(_W_NTYPES)
    otypes = word(_W_O_TYPES)
    b.branch(bb["type_head"])
    b.position_at_end(bb["type_head"])
    t = b.phi(I64, "t")
    t.add_incoming(zero, bb["types"])
    b.cbranch(b.icmp_signed("<", t, ntypes), bb["type_body"], bb["no"])
    b.position_at_end(bb["type_body"])
    t.add_incoming(b.add(t, one), bb["type_body"])
    b.cbranch(b.icmp_unsigned("==", word(b.add(otypes, t)), tpi), bb["num"], bb["type_head"])
    b.position_at_end(bb["num"])
    v = b.call(as_double, [item])
    b.cbranch(b.fcmp_ordered("==", v, ir.Constant(F64, -1.0)), bb["num_chk"], bb["store"])
    b.position_at_end(bb["num_chk"])
    b.cbranch(b.icmp_unsigned("!=", b.call(err_occ, []), ir.Constant(obj, None)), bb["num_err"], bb["store"])
    b.position_at_end(bb["num_err"])  # e.g. an int too large for a double: the fallback says so
    b.call(err_clear, [])
    b.ret(ir.Constant(I32, 0))
    b.position_at_end(bb["store"])
    b.store(v, b.gep(buf, [j]))
    b.ret(ir.Constant(I32, 1))
    b.position_at_end(bb["no"])
    b.ret(ir.Constant(I32, 0))

    # ---------------------------------------------------------------- match
    match = ir.Function(module, ir.FunctionType(I64, [i64p, obj]), "tlop_pymatch")
    match.linkage = "internal"
    ctx, key = match.args
    bb = {name: match.append_basic_block(name) for name in (
        "entry", "id_head", "id_body", "cmp_head", "cmp_body", "hit_id", "hit_cmp", "miss")}
    b = ir.IRBuilder(bb["entry"])
    n = word(_W_N)
    onames = word(_W_O_NAMES)
    keyi = b.ptrtoint(key, I64)
    b.branch(bb["id_head"])
    b.position_at_end(bb["id_head"])  # interned names: a pointer compare
    k = b.phi(I64, "k")
    k.add_incoming(zero, bb["entry"])
    b.cbranch(b.icmp_signed("<", k, n), bb["id_body"], bb["cmp_head"])
    b.position_at_end(bb["id_body"])
    k.add_incoming(b.add(k, one), bb["id_body"])
    b.cbranch(b.icmp_unsigned("==", word(b.add(onames, k)), keyi), bb["hit_id"], bb["id_head"])
    b.position_at_end(bb["hit_id"])
    b.ret(k)
    b.position_at_end(bb["cmp_head"])  # a name built at run time: compare the text
    q = b.phi(I64, "q")
    q.add_incoming(zero, bb["id_head"])
    b.cbranch(b.icmp_signed("<", q, n), bb["cmp_body"], bb["miss"])
    b.position_at_end(bb["cmp_body"])
    q.add_incoming(b.add(q, one), bb["cmp_body"])
    same = b.icmp_signed("==", b.call(ucompare, [b.inttoptr(word(b.add(onames, q)), obj), key]),
                         ir.Constant(I32, 0))
    b.cbranch(same, bb["hit_cmp"], bb["cmp_head"])
    b.position_at_end(bb["hit_cmp"])
    b.ret(q)
    b.position_at_end(bb["miss"])
    b.ret(ir.Constant(I64, -1))
    return conv, match


def emit_pycall(module: ir.Module, convention: str, name: str | None = None) -> str:
    """Add the generic wrapper for ``convention`` (``"varargs"`` or ``"fastcall"``) to
    ``module``; returns its name.  See the module docstring for what it does."""
    name = name or PYCALL_SYMBOLS[convention]
    obj, i64p = _PTR, I64.as_pointer()
    conv, match = _emit_helpers(module)
    api = _Api(module)
    tuple_size = api("PyTuple_Size", I64, [obj])
    tuple_item = api("PyTuple_GetItem", obj, [obj, I64])
    capsule_ptr = api("PyCapsule_GetPointer", _PTR, [obj, _PTR])
    from_double = api("PyFloat_FromDouble", obj, [F64])
    tuple_new = api("PyTuple_New", obj, [I64])
    tuple_set = api("PyTuple_SetItem", I32, [obj, I64, obj])
    from_ptr = api("PyLong_FromVoidPtr", obj, [_PTR])
    call_obj = api("PyObject_Call", obj, [obj, obj, obj])
    decref = api("Py_DecRef", ir.VoidType(), [obj])
    if convention == "varargs":
        fn = ir.Function(module, ir.FunctionType(obj, [obj, obj, obj]), name)
        self_, args, kw = fn.args
        dict_next = api("PyDict_Next", I32, [obj, i64p, obj.as_pointer(), obj.as_pointer()])
        call_fallback = api("PyObject_Call", obj, [obj, obj, obj])
    else:
        fn = ir.Function(module, ir.FunctionType(obj, [obj, obj.as_pointer(), I64, obj]), name)
        self_, argv, nargsf, kwnames = fn.args
        call_fallback = api("PyObject_Vectorcall", obj, [obj, obj.as_pointer(), I64, obj])
    batch_ty = ir.FunctionType(ir.VoidType(), [I64, I64, F64P.as_pointer(), i64p, F64P.as_pointer(),
                                               F64P, F64P, i64p])
    null = ir.Constant(obj, None)
    zero, one = ir.Constant(I64, 0), ir.Constant(I64, 1)
    names = ("entry", "setup", "dflt_head", "dflt_body", "pos_head", "pos_body", "kw", "kw_head", "kw_item",
             "kw_ok", "combo_head", "combo_body", "combo_chan", "combo_next", "run", "chk_head", "chk_body",
             "ret", "fallback")
    bb = {n: fn.append_basic_block(n) for n in names}
    b = ir.IRBuilder(bb["entry"])
    ctx = b.bitcast(b.call(capsule_ptr, [b.call(tuple_item, [self_, zero]), ir.Constant(_PTR, None)]), i64p)

    def word(k):
        return b.load(b.gep(ctx, [k if isinstance(k, ir.Value) else ir.Constant(I64, k)]))

    n = word(_W_N)
    nst = word(_W_NST)
    if convention == "varargs":
        nargs = b.call(tuple_size, [args])
    else:
        nargs = b.and_(nargsf, ir.Constant(I64, ~_PY_VECTORCALL_ARGUMENTS_OFFSET & (2 ** 64 - 1)))
    b.cbranch(b.icmp_signed("<=", nargs, n), bb["setup"], bb["fallback"])

    b.position_at_end(bb["setup"])
    nbuf = b.add(n, one)
    buf = b.alloca(F64, nbuf)
    argp = b.alloca(F64P, nbuf)
    strides = b.alloca(I64, nbuf)
    st = b.alloca(I64, b.add(nst, one))
    out = b.alloca(F64)
    odef = word(_W_O_DEFAULTS)
    b.branch(bb["dflt_head"])

    # every parameter starts at its default (NaN: none, so the checks reject a missing one)
    b.position_at_end(bb["dflt_head"])
    k = b.phi(I64, "k")
    k.add_incoming(zero, bb["setup"])
    b.cbranch(b.icmp_signed("<", k, n), bb["dflt_body"], bb["pos_head"])
    b.position_at_end(bb["dflt_body"])
    slot = b.gep(buf, [k])
    b.store(b.bitcast(word(b.add(odef, k)), F64), slot)
    b.store(slot, b.gep(argp, [k]))
    b.store(zero, b.gep(strides, [k]))
    k.add_incoming(b.add(k, one), bb["dflt_body"])
    b.branch(bb["dflt_head"])

    # positional arguments, in parameter order
    b.position_at_end(bb["pos_head"])
    p = b.phi(I64, "p")
    p.add_incoming(zero, bb["dflt_head"])
    b.cbranch(b.icmp_signed("<", p, nargs), bb["pos_body"], bb["kw"])
    b.position_at_end(bb["pos_body"])
    item = b.call(tuple_item, [args, p]) if convention == "varargs" else b.load(b.gep(argv, [p]))
    okp = b.icmp_signed("!=", b.call(conv, [ctx, p, item, buf]), ir.Constant(I32, 0))
    p.add_incoming(b.add(p, one), bb["pos_body"])
    b.cbranch(okp, bb["pos_head"], bb["fallback"])

    # keyword arguments: find the parameter (not one given positionally), convert the value
    b.position_at_end(bb["kw"])
    if convention == "varargs":
        pos = b.alloca(I64)
        key_slot = b.alloca(obj)
        val_slot = b.alloca(obj)
        b.store(zero, pos)
        b.cbranch(b.icmp_unsigned("==", kw, null), bb["combo_head"], bb["kw_head"])
        b.position_at_end(bb["kw_head"])
        more = b.call(dict_next, [kw, pos, key_slot, val_slot])
        b.cbranch(b.icmp_signed("!=", more, ir.Constant(I32, 0)), bb["kw_item"], bb["combo_head"])
        b.position_at_end(bb["kw_item"])
        key, val = b.load(key_slot), b.load(val_slot)
    else:
        is_null = b.icmp_unsigned("==", kwnames, null)
        nkw = b.alloca(I64)
        b.store(zero, nkw)
        has_kw = fn.append_basic_block("has_kw")
        b.cbranch(is_null, bb["combo_head"], has_kw)
        b.position_at_end(has_kw)
        b.store(b.call(tuple_size, [kwnames]), nkw)
        idx = b.alloca(I64)
        b.store(zero, idx)
        b.branch(bb["kw_head"])
        b.position_at_end(bb["kw_head"])
        i = b.load(idx)
        b.cbranch(b.icmp_signed("<", i, b.load(nkw)), bb["kw_item"], bb["combo_head"])
        b.position_at_end(bb["kw_item"])
        b.store(b.add(i, one), idx)
        key = b.call(tuple_item, [kwnames, i])
        val = b.load(b.gep(argv, [b.add(nargs, i)]))
    j = b.call(match, [ctx, key])
    b.cbranch(b.icmp_signed(">=", j, nargs), bb["kw_ok"], bb["fallback"])  # -1: unknown; < nargs: twice
    b.position_at_end(bb["kw_ok"])
    okk = b.icmp_signed("!=", b.call(conv, [ctx, j, val, buf]), ir.Constant(I32, 0))
    b.cbranch(okk, bb["kw_head"], bb["fallback"])

    # the channel arguments select the code: combo = sum over channel params of index * C^rank
    b.position_at_end(bb["combo_head"])
    q = b.phi(I64, "q")
    combo = b.phi(I64, "combo")
    for pred in (bb["kw"], bb["kw_head"]):
        q.add_incoming(zero, pred)
        combo.add_incoming(zero, pred)
    okind = word(_W_O_KINDS)
    nchan_f = b.sitofp(word(_W_NCHAN), F64)
    b.cbranch(b.icmp_signed("<", q, n), bb["combo_body"], bb["run"])
    b.position_at_end(bb["combo_body"])
    is_chan = b.icmp_signed("==", word(b.add(okind, q)), ir.Constant(I64, KIND_CHANNEL))
    b.cbranch(is_chan, bb["combo_chan"], bb["combo_next"])
    b.position_at_end(bb["combo_chan"])
    cv = b.load(b.gep(buf, [q]))
    floor = module.declare_intrinsic("llvm.floor", [F64])
    good = b.and_(b.fcmp_ordered("==", b.call(floor, [cv]), cv),
                  b.and_(b.fcmp_ordered(">=", cv, ir.Constant(F64, 0.0)), b.fcmp_ordered("<", cv, nchan_f)))
    combo_c = b.add(b.mul(combo, word(_W_NCHAN)), b.fptosi(b.select(good, cv, ir.Constant(F64, 0.0)), I64))
    b.cbranch(b.and_(good, b.icmp_signed("<", combo_c, ir.Constant(I64, MAX_COMBOS))),
              bb["combo_next"], bb["fallback"])
    b.position_at_end(bb["combo_next"])
    combo_n = b.phi(I64, "combo_n")
    combo_n.add_incoming(combo, bb["combo_body"])
    combo_n.add_incoming(combo_c, bb["combo_chan"])
    q.add_incoming(b.add(q, one), bb["combo_next"])
    combo.add_incoming(combo_n, bb["combo_next"])
    b.branch(bb["combo_head"])

    # one point through the batch loop of that code (which checks the arguments)
    b.position_at_end(bb["run"])
    ok_combo = b.icmp_signed("<", combo, word(_W_NCOMBO))
    batch_word = word(b.add(word(_W_O_CODE), b.select(ok_combo, combo, zero)))
    have = b.and_(ok_combo, b.icmp_unsigned("!=", batch_word, zero))
    run_it = fn.append_basic_block("run_it")
    b.cbranch(have, run_it, bb["fallback"])
    b.position_at_end(run_it)
    b.call(module.declare_intrinsic("llvm.memset", [_PTR, I64]),
           [b.bitcast(st, _PTR), ir.Constant(I8, 0), b.mul(b.add(nst, one), ir.Constant(I64, 8)),
            ir.Constant(ir.IntType(1), 0)])
    b.store(ir.Constant(F64, float("nan")), out)
    batch = b.inttoptr(batch_word, batch_ty.as_pointer())
    b.call(batch, [zero, one, argp, strides, b.inttoptr(word(_W_TABS), F64P.as_pointer()),
                   b.inttoptr(word(_W_SCAL), F64P), out, st])
    # an error, an argument check or a NaN result (status[0]), or a non-finite value: fallback
    r = b.load(out)
    dr = b.fsub(r, r)  # NaN exactly when r is ±inf or NaN: the fallback raises the error
    failed = b.or_(b.icmp_signed("!=", b.load(st), zero), b.fcmp_unordered("uno", dr, dr))
    b.cbranch(failed, bb["fallback"], bb["chk_head"])
    # out-of-grid words (status[2 …]): the warner issues the warnings, then the value is returned
    b.position_at_end(bb["chk_head"])
    c = b.phi(I64, "c")
    c.add_incoming(ir.Constant(I64, 2), run_it)
    b.cbranch(b.icmp_signed("<", c, nst), bb["chk_body"], bb["ret"])
    b.position_at_end(bb["chk_body"])
    c.add_incoming(b.add(c, one), bb["chk_body"])
    warn_bb = fn.append_basic_block("warn")
    b.cbranch(b.icmp_signed("!=", b.load(b.gep(st, [c])), zero), warn_bb, bb["chk_head"])

    b.position_at_end(warn_bb)
    warner = word(_W_WARNER)
    call_bb = fn.append_basic_block("warn_call")
    b.cbranch(b.icmp_unsigned("==", warner, zero), bb["fallback"], call_bb)
    b.position_at_end(call_bb)
    addr = b.call(from_ptr, [b.bitcast(st, _PTR)])
    tup_bb, tup_err, set_bb, err_bb, done_bb = (fn.append_basic_block(x) for x in (
        "warn_tuple", "warn_tuple_err", "warn_set", "warn_err", "warn_done"))
    b.cbranch(b.icmp_unsigned("==", addr, null), err_bb, tup_bb)
    b.position_at_end(tup_bb)
    tup = b.call(tuple_new, [one])
    b.cbranch(b.icmp_unsigned("==", tup, null), tup_err, set_bb)
    b.position_at_end(tup_err)
    b.call(decref, [addr])
    b.branch(err_bb)
    b.position_at_end(set_bb)
    b.call(tuple_set, [tup, zero, addr])  # steals the reference to addr
    res = b.call(call_obj, [b.inttoptr(warner, obj), tup, null])
    b.call(decref, [tup])
    b.cbranch(b.icmp_unsigned("==", res, null), err_bb, done_bb)
    b.position_at_end(done_bb)
    b.call(decref, [res])
    b.branch(bb["ret"])
    b.position_at_end(err_bb)  # the warner raised (or memory ran out): its exception is the call's
    b.ret(null)

    b.position_at_end(bb["ret"])
    b.ret(b.call(from_double, [r]))

    b.position_at_end(bb["fallback"])
    fallback = b.inttoptr(word(_W_FALLBACK), obj)
    if convention == "varargs":
        b.ret(b.call(call_fallback, [fallback, args, kw]))
    else:
        b.ret(b.call(call_fallback, [fallback, argv, nargsf, kwnames]))
    return name


# ====================================================================== compile once
def pycall_address(convention: str = CONVENTION) -> int:
    """The address of the generic wrapper for ``convention``, compiled once per process (and
    cached on disk)."""
    with _PYCALL_LOCK:
        if not _PYCALL_ADDRESSES:
            _PYCALL_ADDRESSES.update(_build_pycall())
    return _PYCALL_ADDRESSES[convention]


def _build_pycall() -> dict:
    from tlop.backends.jit import cache as _cache
    from tlop.backends.jit.engine import engine

    eng = engine()
    h = hashlib.sha256()
    for part in ("tlop-pycall-5", Path(__file__).read_text(), eng.describe()):
        h.update(part.encode())
        h.update(b"\0")
    key = h.hexdigest()
    conventions = tuple(PYCALL_SYMBOLS)
    symbols = tuple(PYCALL_SYMBOLS[c] for c in conventions)
    store = _cache.default_cache()
    obj = store.get(key)
    if obj is not None:
        try:
            addrs = eng.load_object(obj, symbols)
            return {c: addrs[PYCALL_SYMBOLS[c]] for c in conventions}
        except ValueError:
            store.invalidate(key)
    module = ir.Module(name="tlop_pycall")
    for c in conventions:
        emit_pycall(module, c)
    obj = eng.compile_ir(str(module), "tlop_pycall")
    store.put(key, obj)
    addrs = eng.load_object(obj, symbols)
    return {c: addrs[PYCALL_SYMBOLS[c]] for c in conventions}


# ====================================================================== the builtin
class _MethodDef(ctypes.Structure):
    """``PyMethodDef`` (documented C API struct)."""
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p),
                ("ml_flags", ctypes.c_int), ("ml_doc", ctypes.c_char_p)]


_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_PyCFunction_NewEx = ctypes.pythonapi.PyCFunction_NewEx
_PyCFunction_NewEx.restype = ctypes.py_object
_PyCFunction_NewEx.argtypes = [ctypes.POINTER(_MethodDef), ctypes.py_object, ctypes.py_object]


def _not_ready(*args, **kwargs):
    raise RuntimeError("this compiled evaluator is not initialised")


def _bits(x) -> int:
    return struct.unpack("<Q", struct.pack("<d", float("nan") if x is None else float(x)))[0]


class NativeCall:
    """The context words of one evaluator and the builtin function (:attr:`function`) that
    calls the wrapper with them.  The builtin's ``self`` is ``(capsule, self)``: whoever holds
    the builtin keeps this object — words, method definition, fallback, ``keepalive`` — alive.

    ``names``/``defaults``/``channel`` describe the parameters in order (``defaults[k]`` None:
    required; ``channel[k]``: a channel parameter); ``channels`` are the program's channel names.
    Code for a channel combination is registered with :meth:`set_code` (index:
    :meth:`combo_index`); until then such calls take the fallback."""

    def __init__(self, label: str, tabs: int, scal: int, names: list, defaults: list, channel: list,
                 channels: list, nstatus: int, keepalive: tuple, convention: str = CONVENTION):
        n = len(names)
        self.names = [sys.intern(s) for s in names]
        self.channel_names = [sys.intern(s) for s in channels]
        self.types = scalar_types()
        self.channel = list(channel)
        self.nchan = len(channels)
        nchanparams = sum(1 for c in channel if c)
        self.ncombo = min(MAX_COMBOS, max(1, self.nchan) ** nchanparams)
        o_names = HEADER_WORDS
        o_def = o_names + n
        o_kind = o_def + n
        o_types = o_kind + n
        o_chan = o_types + len(self.types)
        o_code = o_chan + self.nchan
        words = (ctypes.c_uint64 * (o_code + self.ncombo))()
        words[_W_FALLBACK] = 0
        words[_W_TABS] = tabs
        words[_W_SCAL] = scal
        words[_W_N] = n
        words[_W_NST] = nstatus
        words[_W_NTYPES] = len(self.types)
        words[_W_NCHAN] = self.nchan
        words[_W_NCOMBO] = self.ncombo
        words[_W_O_NAMES], words[_W_O_DEFAULTS], words[_W_O_KINDS] = o_names, o_def, o_kind
        words[_W_O_TYPES], words[_W_O_CHANNELS], words[_W_O_CODE] = o_types, o_chan, o_code
        words[_W_STR] = id(str)
        words[_W_WARNER] = 0
        self.warner = None
        for k in range(n):
            words[o_names + k] = id(self.names[k])
            words[o_def + k] = _bits(defaults[k])
            words[o_kind + k] = KIND_CHANNEL if channel[k] else KIND_NUMBER
        for k, t in enumerate(self.types):
            words[o_types + k] = id(t)
        for k, s in enumerate(self.channel_names):
            words[o_chan + k] = id(s)
        self._o_code = o_code
        self.words = words
        self.set_fallback(_not_ready)
        self.keepalive = keepalive
        self._label = label.encode()
        self.methoddef = _MethodDef(self._label, pycall_address(convention), _METH_FLAGS[convention], None)
        self.capsule = _PyCapsule_New(ctypes.addressof(words), None, None)
        self.function = _PyCFunction_NewEx(ctypes.byref(self.methoddef), (self.capsule, self), None)

    def set_fallback(self, fallback) -> None:
        """What answers every call the native path does not (kept alive here)."""
        self.fallback = fallback
        self.words[_W_FALLBACK] = id(fallback)

    def set_warner(self, warner) -> None:
        """What issues the out-of-grid warnings of a natively answered point (kept alive here):
        called with the address of the status words (see the module docstring); None: such
        points take the fallback."""
        self.warner = warner
        self.words[_W_WARNER] = 0 if warner is None else id(warner)

    def combo_index(self, channel_values: list) -> int:
        """The table index of the code for these channel arguments (in parameter order)."""
        combo = 0
        for v in channel_values:
            combo = combo * self.nchan + int(v)
        return combo

    def set_code(self, channel_values: list, batch: int) -> None:
        """Use the batch loop at address ``batch`` for calls with these channel arguments."""
        i = self.combo_index(channel_values)
        if i < self.ncombo:
            self.words[self._o_code + i] = batch
