"""The LLVM loop and stage building both schedule generators share.

What it does: :class:`NativeLoops` is the base of :class:`tlop.backends.jit.schedgen.StageGen`
(τ-Lop stages) and of :class:`tlop.backends.jit.dataflowgen.DataflowGen` (LogGP/pLogP/LogGPH
programs); both emit into the cost function a :class:`~tlop.backends.jit.codegen.CodeGen` is
building.  It gives them

* variables in the function's entry block (:meth:`~NativeLoops.var`), counted loops that poll
  for Ctrl-C (:meth:`tlop.backends.jit.codegen.CodeGen.poll`) and may stop on an error flag
  (:meth:`~NativeLoops.loop`), and plain counted loops for O(P) set-up
  (:meth:`~NativeLoops.plain_loop`);
* the C library's ``malloc``/``calloc``/``realloc``/``free``/``qsort``, a null-pointer check, and
  the three-way step of a ``qsort`` comparator (:func:`three_way`);
* the enumerator's checks (:class:`tlop.backends.enumeration.StageEnumerator`): a rank, a send's
  and a computation's values, a ``par``/``seq``/``sum`` range (finite bounds within ±2^53, fewer
  than MAX_TERMS terms);
* the enumeration of a stage's items (:meth:`~NativeLoops.walk_stage`): ``par`` and ``seq`` as
  counted loops over their bindings (``where`` tested per binding, NaN true), each sequence
  carrying its phase counter — a send or computation is placed at its sequence's phase, which
  then advances; ``seq`` and blocks run their parts in order; a ``par`` continues after its
  longest binding; the items at the top of the stage start at phase 0.  Each element is handed
  to the generator with its phase and its *key* (the items' indices in their blocks and the
  values of the enclosing ``seq`` loops, outermost first, then those of the enclosing ``par``
  loops), which the dataflow generator orders by and the τ-Lop one ignores;
* the process mapping (:class:`tlop.backends.jit.mapgen.MappingCode`).

What it does not do: decide what an element costs or how elements are grouped (the τ-Lop
grouping is :mod:`tlop.backends.jit.schedgen`'s, its reduction
:mod:`tlop.backends.jit.schedreduce`'s, the dataflow execution
:mod:`tlop.backends.jit.dataflowgen`'s), count elements (each generator keeps its own count), or
report messages (an evaluation error flags the point; the evaluator re-runs the interpreter).
"""

from __future__ import annotations

import math

from llvmlite import ir

from tlop import ir as tir
from tlop.backends.interp import BOUND_LIMIT, MAX_TERMS

from tlop.backends.jit.llvmutil import Env, ZERO as _ZERO, intrinsic as _intrinsic
from tlop.backends.jit.mapgen import MappingCode
from tlop.backends.jit.tables import F64, I1, I32, I64, I8

__all__ = ["NativeLoops", "three_way"]

_PTR = I8.as_pointer()
_INF = ir.Constant(F64, math.inf)


def _c(v: int):
    return ir.Constant(I64, v)


def _declare(module: ir.Module, name: str, ret, args):
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ret, args), name)
    return fn


def three_way(b: ir.IRBuilder, less, greater):
    """One step of a ``qsort`` comparator: return −1 when ``less``, 1 when ``greater``, else go
    on (the builder is left in the block that compares the next field)."""
    lt = b.append_basic_block("lt")
    nx = b.append_basic_block("next")
    gt = b.append_basic_block("gt")
    after = b.append_basic_block("after")
    b.cbranch(less, lt, nx)
    b.position_at_end(lt)
    b.ret(ir.Constant(I32, -1))
    b.position_at_end(nx)
    b.cbranch(greater, gt, after)
    b.position_at_end(gt)
    b.ret(ir.Constant(I32, 1))
    b.position_at_end(after)


class _Walk:
    """What one enumeration of a stage hands its elements to, and the flags it obeys."""

    def __init__(self, conc, err, on_send, on_compute, stop_on_error):
        self.conc = conc  # the concurrency factor the elements' expressions are generated under
        self.err = err  # the stage's error flag (an i1 alloca)
        self.on_send = on_send  # on_send(ph, src, dst, size, weight, key)
        self.on_compute = on_compute  # on_compute(ph, rank, cost, key)
        self.stop_on_error = stop_on_error  # loops exit on an error (else only their bodies are skipped)


class NativeLoops(MappingCode):
    """Loops, scratch memory, checks, the mapping and the stage walk for one
    :class:`~tlop.backends.jit.codegen.CodeGen`."""

    def __init__(self, cg):
        self.cg = cg
        self.program = cg.program
        self.module = cg.module
        self.kind = cg.mapping_kind
        m = self.module
        self.malloc = _declare(m, "malloc", _PTR, [I64])
        self.calloc = _declare(m, "calloc", _PTR, [I64, I64])
        self.realloc = _declare(m, "realloc", _PTR, [_PTR, I64])
        self.free = _declare(m, "free", ir.VoidType(), [_PTR])
        cmpty = ir.FunctionType(I32, [_PTR, _PTR])
        self.qsort = _declare(m, "qsort", ir.VoidType(), [_PTR, I64, I64, cmpty.as_pointer()])

    @property
    def b(self) -> ir.IRBuilder:
        return self.cg.b

    # ================================================================== variables and loops
    def alloca(self, ty, name=""):
        b = self.b
        with b.goto_block(self.cg.fn.entry_basic_block):
            return b.alloca(ty, name=name)

    def var(self, ty, init, name=""):
        a = self.alloca(ty, name)
        self.b.store(init, a)
        return a

    def intrinsic(self, name):
        return _intrinsic(self.module, name)

    def loop(self, start, stop, body, name="l", err=None):
        """``for i in start .. stop`` (i64, inclusive): ``body(i)``, while no Ctrl-C (and, given
        the i1 alloca ``err``, no error); polls for Ctrl-C."""
        b = self.b
        if err is None:
            self._counted(start, stop, body, name, lambda: b.load(self.cg.stop), True)
        else:
            self._counted(start, stop, body, name, lambda: b.or_(b.load(self.cg.stop), b.load(err)), True)

    def plain_loop(self, start, stop, body, name="dfp"):
        """A counted loop without polling or early exit (O(P) set-up and reductions)."""
        self._counted(start, stop, body, name, None, False)

    def _counted(self, start, stop, body, name, halt, poll):
        b = self.b
        i = self.var(I64, start, f"{name}_i")
        head = b.append_basic_block(f"{name}_head")
        blk = b.append_basic_block(f"{name}_body")
        done = b.append_basic_block(f"{name}_done")
        b.branch(head)
        b.position_at_end(head)
        iv = b.load(i)
        go = b.icmp_signed("<=", iv, stop)
        b.cbranch(go if halt is None else b.and_(go, b.not_(halt())), blk, done)
        b.position_at_end(blk)
        body(iv)
        if poll:
            self.cg.poll()
        b.store(b.add(b.load(i), _c(1)), i)
        b.branch(head)
        b.position_at_end(done)

    def null_fails(self, ptr, err):
        """Set the i1 alloca ``err`` when ``ptr`` (a failed allocation) is null."""
        b = self.b
        with b.if_then(b.icmp_unsigned("==", b.ptrtoint(ptr, I64), _c(0)), likely=False):
            b.store(ir.Constant(I1, 1), err)

    # ================================================================== checks
    def is_rank(self, r, P):
        b = self.b
        whole = b.fcmp_ordered("==", b.call(self.intrinsic("llvm.floor"), [r]), r)
        return b.and_(whole, b.and_(b.fcmp_ordered(">=", r, _ZERO), b.fcmp_ordered("<", r, P)))

    def send_ok(self, src, dst, size, w, P):
        """A send's values as the enumerator checks them: ranks in 0 … P−1, a size ≥ 0, a
        positive and finite weight."""
        b = self.b
        ok = b.and_(self.is_rank(src, P), self.is_rank(dst, P))
        ok = b.and_(ok, b.fcmp_ordered(">=", size, _ZERO))
        return b.and_(ok, b.and_(b.fcmp_ordered(">", w, _ZERO), b.fcmp_ordered("<", w, _INF)))

    def compute_ok(self, rank, cost, P):
        """A computation's values as the enumerator checks them: a rank, a cost ≥ 0."""
        b = self.b
        return b.and_(self.is_rank(rank, P), b.fcmp_ordered(">=", cost, _ZERO))

    def range_ok(self, lo, hi):
        """The i1 that a ``par``/``seq``/``sum`` range ``lo .. hi`` passes the interpreter's
        checks: finite bounds within ±BOUND_LIMIT, fewer than MAX_TERMS terms."""
        b = self.b
        fabs, floor, ceil = (self.intrinsic(n) for n in ("llvm.fabs", "llvm.floor", "llvm.ceil"))
        lim = ir.Constant(F64, BOUND_LIMIT)
        ok = b.and_(b.fcmp_ordered("<=", b.call(fabs, [lo]), lim), b.fcmp_ordered("<=", b.call(fabs, [hi]), lim))
        span = b.fsub(b.call(floor, [hi]), b.call(ceil, [lo]))
        return b.and_(ok, b.fcmp_ordered("<", span, ir.Constant(F64, float(MAX_TERMS))))

    def range_ends(self, ok, lo, hi):
        """The first and last counter (i64) of a range that passed :meth:`range_ok`."""
        b = self.b
        start = b.fptosi(b.call(self.intrinsic("llvm.ceil"), [b.select(ok, lo, _ZERO)]), I64)
        stop = b.fptosi(b.call(self.intrinsic("llvm.floor"), [b.select(ok, hi, _ZERO)]), I64)
        return start, stop

    # ================================================================== a stage's enumeration
    def walk_stage(self, stage, env, conc, err, on_send, on_compute, stop_on_error):
        """Enumerate ``stage``'s items in native loops, handing each element to ``on_send(ph,
        src, dst, size, weight, key)`` or ``on_compute(ph, rank, cost, key)`` (its values
        generated, not yet checked); a failed range sets the i1 alloca ``err``, and nothing is
        placed once it is set."""
        w = _Walk(conc, err, on_send, on_compute, stop_on_error)
        for k, item in enumerate(stage.items):
            self._walk(item, env, _c(0), w, [_c(k)], [])

    def _walk(self, item, env, ph, w, places, lanes):
        """Place ``item``'s elements from phase ``ph``; returns the phase after them."""
        cg, b = self.cg, self.b
        if isinstance(item, tir.Send):
            src, dst, size, wt = (cg.gen(x, env, w.conc) for x in (item.src, item.dst, item.size, item.weight))
            w.on_send(ph, src, dst, size, wt, places + lanes)
            return b.add(ph, _c(1))
        if isinstance(item, tir.Compute):
            r = cg.gen(item.rank, env, w.conc)
            cost = cg.gen(item.cost, env, w.conc)
            w.on_compute(ph, r, cost, places + lanes)
            return b.add(ph, _c(1))
        if isinstance(item, tir.Block):
            for k, it in enumerate(item.items):
                ph = self._walk(it, env, ph, w, places + [_c(k)], lanes)
            return ph
        if isinstance(item, tir.Loop):
            return self._walk_loop(item, env, ph, w, places, lanes)
        b.store(ir.Constant(I1, 1), w.err)  # pragma: no cover - the verifier admits no other item
        return ph

    def _walk_loop(self, loop, env, ph, w, places, lanes):
        cg, b = self.cg, self.b
        lo = cg.gen(loop.lo, env, w.conc)
        hi = cg.gen(loop.hi, env, w.conc)
        ok = self.range_ok(lo, hi)
        acc = self.var(I64, ph, f"{loop.kind}_ph")
        with b.if_else(ok) as (then, otherwise):
            with otherwise:
                b.store(ir.Constant(I1, 1), w.err)
            with then:
                start, stop = self.range_ends(ok, lo, hi)

                def body(i):
                    inner = Env(env)
                    inner[loop.var] = b.sitofp(i, F64)
                    if isinstance(loop.where, tir.Num):
                        keep = ir.Constant(I1, int(loop.where.value != 0))
                    else:
                        keep = cg._truth(cg.gen(loop.where, inner, w.conc))
                    with b.if_then(b.and_(keep, b.not_(b.load(w.err)))):
                        if loop.kind == "par":
                            child = self._walk(loop.body, inner, ph, w, places, lanes + [i])
                            cur = b.load(acc)
                            b.store(b.select(b.icmp_signed(">", child, cur), child, cur), acc)
                        else:
                            b.store(self._walk(loop.body, inner, b.load(acc), w, places + [i], lanes), acc)

                self.loop(start, stop, body, loop.kind, w.err if w.stop_on_error else None)
        return b.load(acc)
