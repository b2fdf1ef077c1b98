"""Profile tables for native code: marshalling into flat arrays, and the lookup in LLVM IR.

What it does:

* :class:`ProfileLayout` binds a program to a profile: every (table, channel) and (scalar,
  channel) entry the program can read gets a *slot*; each table slot is marshalled into one
  contiguous float64 block ``[n_m, n_tau, m…, tau…, values…]`` (``n_tau = 0`` for a table over
  m only; values row-major) and scalars into one float64 array (followed by a padding word
  and each table's m-grid id: tables with equal m grids share an id).  The generated code receives
  these as pointers, so one compiled evaluator serves every profile whose tables have the same
  *structure* (which entries exist, 1-D or 2-D, interpolation policy) — that structure, not the
  measured numbers, is :meth:`ProfileLayout.signature` (part of the cache key).  With
  ``specialize=True`` the numbers are baked into the code instead (and into the key).
* :func:`emit_lookup` writes the lookup as an LLVM function mirroring
  :mod:`tlop.runtime.interpolation` operation for operation (clamping, ``searchsorted``
  segment by binary search, the ``lerp`` formula with its exact-``x1`` case, m-then-τ order,
  the proportional τ rule, non-negativity, the ``"chunks"`` rule for m past the grid), with every array access inside ``0 … n-1`` and
  the out-of-grid test of ``TableData._check_grid``.

* :func:`status_words`, :func:`oog_word`, :func:`oog_count_word`: the layout of a batch loop's status words, where
  the out-of-grid flag of each table slot and the point of its first lookup outside the grid
  are kept (read by :mod:`tlop.backends.jit.oogwarn`).

What it does not do: decide what an out-of-grid point means (the caller emits the error or the
warning flag) or read profile files.
"""

from __future__ import annotations

import hashlib
from typing import Optional

import numpy as np
from llvmlite import ir

from tlop import ir as tir

__all__ = ["ProfileLayout", "TableSlot", "emit_lookup", "status_words", "oog_word", "oog_count_word", "F64", "I64", "I1", "F64P"]

F64 = ir.DoubleType()
I64 = ir.IntType(64)
I32 = ir.IntType(32)
I8 = ir.IntType(8)
I1 = ir.IntType(1)
F64P = F64.as_pointer()
LOOKUP_INLINE = "alwaysinline"
#: function attributes of the grid search that llvmlite does not know by name
_PURE_READ_ATTRS = ("memory(argmem: read)", "willreturn", "mustprogress", "nofree", "nosync")


def status_words(ntables: int) -> int:
    """How many ``i64`` status words a batch loop over a layout of ``ntables`` table slots
    writes: ``[0]`` the error code and ``[1]`` the first failing point
    (:mod:`tlop.backends.jit.codegen`); ``[2 + slot]`` 0, or the rank (1, 2, …) of that slot
    among the slots whose lookups fell outside the grid under ``out_of_grid = "warn"``, in the
    order of their first such lookup; then for each slot two words from :func:`oog_word`: that
    lookup's ``m`` and ``tau`` as float64 bits (``tau`` 0 for a table over m only); last, the
    count of such slots (:func:`oog_count_word`)."""
    return 3 + 3 * ntables


def oog_word(ntables: int, slot: int) -> int:
    """The status word holding the ``m`` of the first out-of-grid lookup of ``slot`` (its
    ``tau`` is the next word); see :func:`status_words`."""
    return 2 + ntables + 2 * slot


def oog_count_word(ntables: int) -> int:
    """The status word counting the slots with an out-of-grid lookup; see :func:`status_words`."""
    return 2 + 3 * ntables


class TableSlot:
    """One table of the profile as the generated code sees it."""

    def __init__(self, index: int, key: str, pch: Optional[str], data):
        self.index = index
        self.key = key
        self.pch = pch
        self.data = data  # TableData
        self.ndim = 1 if data.tau is None else 2
        self.policy = data.policy
        tau = np.zeros(0) if data.tau is None else np.asarray(data.tau, dtype=np.float64)
        m = np.asarray(data.m, dtype=np.float64)
        self.block = np.ascontiguousarray(np.concatenate(
            [[float(len(m)), float(len(tau))], m, tau, np.asarray(data.values, dtype=np.float64).ravel()]))

    def structure(self) -> str:
        p = self.policy
        return (f"{self.key}@{self.pch}:{self.ndim}:{p.m_below},{p.m_beyond},{p.tau_beyond},"
                f"{int(p.nonnegative)},{p.out_of_grid}")


class ProfileLayout:
    """Slots of every profile entry ``program`` can read under ``profile``.

    ``table_slot(table, model_channel)`` / ``scalar_slot(…)`` return a slot index or an error
    message (str) saying why the entry is unavailable — the generated code raises it only if
    the lookup is actually evaluated, exactly like the interpreter."""

    def __init__(self, program: tir.Program, profile, specialize: bool = False):
        self.program = program
        self.profile = profile
        self.specialize = specialize
        self.tables: list[TableSlot] = []
        self.scalar_values: list[float] = []
        self._tslot: dict = {}
        self._sslot: dict = {}
        self._variant: dict = {}
        by_id: dict = {}
        chans = list(program.channels)
        self.pch = {c: profile.resolve_channel(c) for c in chans}
        self.kind = {}
        for c, p in self.pch.items():
            if p is not None:
                try:
                    self.kind[c] = profile.transmission_kind(p)
                except Exception:  # noqa: BLE001 - a binding to a missing channel: unusable
                    self.kind[c] = None
        for name, sig in sorted(program.tables.items()):
            for mch in (chans if sig.channel_indexed else [None]):
                pch = self.pch.get(mch) if mch is not None else None
                if mch is not None and pch is None:
                    self._tslot[(name, mch)] = "no profile channel"
                    continue
                key = sig.profile_key(profile, pch)
                if not profile.has_table(key, pch):
                    self._tslot[(name, mch)] = "missing"
                    continue
                data = profile.table(key, pch)
                slot = by_id.get(id(data))
                if slot is None:
                    slot = TableSlot(len(self.tables), key, pch, data)
                    by_id[id(data)] = slot
                    self.tables.append(slot)
                self._tslot[(name, mch)] = slot.index
        for name, sig in sorted(program.scalars.items()):
            for mch in (chans if sig.channel_indexed else [None]):
                pch = self.pch.get(mch) if mch is not None else None
                if mch is not None and pch is None:
                    self._sslot[(name, mch)] = "no profile channel"
                    continue
                key = sig.profile_key(profile, pch)
                if not profile.has_scalar(key, pch):
                    self._sslot[(name, mch)] = "missing"
                    continue
                self._sslot[(name, mch)] = len(self.scalar_values)
                self.scalar_values.append(float(profile.scalar(key, pch)))
        # after the scalars: each table's m-grid id (the first slot with an equal m grid), so
        # that generated code can tell in two loads whether two tables share their m search
        self.grid_ids = []
        for t in self.tables:
            same = [u.index for u in self.tables[:t.index] if np.array_equal(u.data.m, t.data.m)]
            self.grid_ids.append(same[0] if same else t.index)
        self.grid_base = len(self.scalar_values) + 1
        self.scalars = np.ascontiguousarray(np.asarray(self.scalar_values + [0.0] + self.grid_ids, dtype=np.float64))
        self._ptrs = None

    # ------------------------------------------------------------------ resolution
    def table_slot(self, table: str, mch: Optional[str]):
        return self._tslot.get((table, mch), "missing")

    def scalar_slot(self, name: str, mch: Optional[str]):
        return self._sslot.get((name, mch), "missing")

    def variant(self, name: str, channel: int):
        """The decomposition of transmission ``name`` on channel index ``channel`` the
        interpreter would pick (``Interpreter.variant``), or None when it would fail."""
        k = (name, channel)
        if k not in self._variant:
            self._variant[k] = self._pick(name, channel)
        return self._variant[k]

    def _pick(self, name, channel):
        variants = self.program.variants(name, channel)
        mch = self.program.channels[channel]
        if not variants or self.pch.get(mch) is None:
            return None
        kind = self.kind.get(mch)
        if kind is None:
            return None
        return self.program.variant_for(name, channel, kind)

    # ------------------------------------------------------------------ keys and data
    def signature(self) -> str:
        """The profile structure the generated code depends on (values too if specialised)."""
        parts = [f"spec={int(self.specialize)}"]
        parts += [f"ch {c}->{self.pch[c]}:{self.kind.get(c)}" for c in self.program.channels]
        parts += [f"T {k}={v if isinstance(v, str) else self.tables[v].structure()}"
                  for k, v in sorted(self._tslot.items(), key=str)]
        parts += [f"S {k}={v if isinstance(v, str) else 'slot' + str(v)}"
                  for k, v in sorted(self._sslot.items(), key=str)]
        if self.specialize:
            h = hashlib.sha256()
            for t in self.tables:
                h.update(t.block.tobytes())
            h.update(self.scalars.tobytes())
            parts.append("data=" + h.hexdigest())
        return "\n".join(parts)

    def pointers(self):
        """``(tabs, scal)``: addresses of the table-pointer array and of the scalar array (the
        arrays stay alive as long as this layout)."""
        if self._ptrs is None:
            arr = np.array([t.block.ctypes.data for t in self.tables] + [0], dtype=np.uintp)
            self._ptr_array = arr
            self._ptrs = (arr.ctypes.data, self.scalars.ctypes.data)
        return self._ptrs


# ============================================================================= lookup codegen

def _const(x: float):
    return ir.Constant(F64, float(x))


def _np_max(b: ir.IRBuilder, x, y):
    """numpy.maximum: ``x if (x >= y or isnan(x)) else y``."""
    c = b.or_(b.fcmp_ordered(">=", x, y), b.fcmp_unordered("uno", x, x))
    return b.select(c, x, y)


def _np_min(b: ir.IRBuilder, x, y):
    """numpy.minimum: ``x if (x <= y or isnan(x)) else y``."""
    c = b.or_(b.fcmp_ordered("<=", x, y), b.fcmp_unordered("uno", x, x))
    return b.select(c, x, y)


def _emit_segment(module: ir.Module, hoistable: bool) -> ir.Function:
    """``i64 segment(double* g, i64 n, double x)``: ``clip(searchsorted(g, x, 'right') - 1, 0,
    n-2)`` for ``n >= 2`` and 0 for ``n == 1`` (so ``i`` and ``min(i + 1, n - 1)`` are always
    valid indices).  ``searchsorted`` orders NaN last, hence the unordered ``<=``.

    Two forms.  ``hoistable``: a separate, non-inlined function that only reads its argument
    memory and always returns — LLVM may then merge two searches of the same grid for the
    same ``x`` and hoist a search whose arguments do not change out of a loop (e.g. the m
    search of ``L(m, 2^i)`` inside ``sum i``, or ``g(s)`` out of a batch with one ``s``),
    which it cannot do with a loop inlined.  Otherwise the search is inlined (no call, no
    spilled registers), which is faster when the search runs for every point anyway."""
    name = "tlop_segment" if hoistable else "tlop_segment_inline"
    if name in module.globals:
        return module.globals[name]
    fn = ir.Function(module, ir.FunctionType(I64, [F64P, I64, F64]), name)
    fn.linkage = "internal"
    fn.attributes.add("noinline" if hoistable else "alwaysinline")
    fn.attributes.add("nounwind")
    for attr in _PURE_READ_ATTRS:  # not in llvmlite's list of known attributes
        set.add(fn.attributes, attr)
    g, n, x = fn.args
    entry = fn.append_basic_block("entry")
    head = fn.append_basic_block("head")
    body = fn.append_basic_block("body")
    done = fn.append_basic_block("done")
    b = ir.IRBuilder(entry)
    b.branch(head)
    b.position_at_end(head)
    lo = b.phi(I64, "lo")
    ln = b.phi(I64, "len")
    lo.add_incoming(ir.Constant(I64, 0), entry)
    ln.add_incoming(n, entry)
    b.cbranch(b.icmp_signed(">", ln, ir.Constant(I64, 0)), body, done)
    b.position_at_end(body)
    half = b.lshr(ln, ir.Constant(I64, 1))
    mid = b.add(lo, half)
    gm = b.load(b.gep(g, [mid]))
    le = b.fcmp_unordered("<=", gm, x)
    lo2 = b.select(le, b.add(mid, ir.Constant(I64, 1)), lo)
    ln2 = b.select(le, b.sub(b.sub(ln, half), ir.Constant(I64, 1)), half)
    lo.add_incoming(lo2, body)
    ln.add_incoming(ln2, body)
    b.branch(head)
    b.position_at_end(done)
    i = b.sub(lo, ir.Constant(I64, 1))
    top = b.sub(n, ir.Constant(I64, 2))
    i = b.select(b.icmp_signed(">", i, top), top, i)
    i = b.select(b.icmp_signed("<", i, ir.Constant(I64, 0)), ir.Constant(I64, 0), i)
    b.ret(i)
    return fn


def _lerp(b: ir.IRBuilder, x, x0, x1, v0, v1):
    """``v1 if x == x1 else v0 + (v1 - v0) * (x - x0) / (x1 - x0)``."""
    r = b.fadd(v0, b.fdiv(b.fmul(b.fsub(v1, v0), b.fsub(x, x0)), b.fsub(x1, x0)))
    return b.select(b.fcmp_ordered("==", x, x1), v1, r)


#: what a lookup returns: the value and the index of its m segment (reusable by the next
#: lookup of a table with the same m grid at the same m, see ``hint``)
LOOKUP_RESULT = ir.LiteralStructType([F64, I64])


def emit_lookup(module: ir.Module, ndim: int, policy, hoist_m: bool = False,
                hoist_tau: bool = False) -> ir.Function:
    """``{double, i64} lookup(double* block, double m, double tau, i8* outside, i64 hint)`` for tables of
    ``ndim`` axes under ``policy`` (``tau`` ignored when ``ndim == 1``).  When the policy's
    ``out_of_grid`` is not ``"allow"``, ``*outside`` is set to 1 for a point outside the grid
    (m checked against ``m[0] … m[-1]``, then τ against ``tau[0] … tau[-1]``, NaN inside).

    Each axis is searched once (:func:`_emit_segment`); a one-point axis takes index 0 for
    both neighbours and its value is selected instead of the (then meaningless) lerp, so the
    body is branch-free after the searches and every load stays inside the block.
    ``hoist_m`` / ``hoist_tau``: search that axis with the hoistable form of
    :func:`_emit_segment` (the caller knows the argument is loop-invariant).  ``hint >= 0``
    is the m segment already found by a lookup of a table with the same m grid at the same m
    under the same m policy (the search is skipped); the result carries this lookup's m
    segment for the next one."""
    tag = (f"tlop_lookup{ndim}_{policy.m_below[0]}{policy.m_beyond[:2]}{policy.tau_beyond[0]}"
           f"{int(policy.nonnegative)}{policy.out_of_grid[0]}_{int(hoist_m)}{int(hoist_tau)}")
    if tag in module.globals:
        return module.globals[tag]
    fn = ir.Function(module, ir.FunctionType(LOOKUP_RESULT, [F64P, F64, F64, I8.as_pointer(), I64]), tag)
    fn.linkage = "internal"
    fn.attributes.add(LOOKUP_INLINE)
    blk, m, tau, outside, hint = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    nm = b.fptosi(b.load(blk), I64)
    nt = b.fptosi(b.load(b.gep(blk, [ir.Constant(I64, 1)])), I64)
    mg = b.gep(blk, [ir.Constant(I64, 2)])
    tg = b.gep(mg, [nm])
    vals = b.gep(tg, [nt])
    one = ir.Constant(I64, 1)
    m_first = b.load(mg)
    m_last = b.load(b.gep(mg, [b.sub(nm, one)]))
    if ndim == 2:
        t_first = b.load(tg)
        t_last = b.load(b.gep(tg, [b.sub(nt, one)]))
    if policy.out_of_grid != "allow":
        out = b.or_(b.fcmp_ordered("<", m, m_first), b.fcmp_ordered(">", m, m_last))
        if ndim == 2:
            out = b.or_(out, b.or_(b.fcmp_ordered("<", tau, t_first), b.fcmp_ordered(">", tau, t_last)))
        with b.if_then(out):
            b.store(ir.Constant(I8, 1), outside)
    x = m
    if policy.m_below == "clamp":
        x = _np_max(b, x, m_first)
    if policy.m_beyond == "clamp":
        x = _np_min(b, x, m_last)

    def neighbours(grid, n, v, hoist):
        """``(i, i + 1)`` around ``v`` on ``grid`` (``(0, 0)`` when ``n == 1``)."""
        i = b.call(_emit_segment(module, hoist), [grid, n, v])
        i1 = b.add(i, one)
        return i, b.select(b.icmp_signed(">=", i1, n), i, i1)

    if ndim == 2:
        tt = _np_max(b, tau, t_first)
        if policy.tau_beyond != "linear":
            tt = _np_min(b, tt, t_last)
        tj, tj1 = neighbours(tg, nt, tt, hoist_tau)
    m_single = b.icmp_signed("==", nm, one)

    def read(x, hint, search_hoisted, known=None):
        """Steps 3–7 of the interpolation at ``x``: ``(value, m segment)``; the m search is
        skipped when ``hint >= 0``, and not emitted when the segment is ``known``."""
        if known is not None:
            mi = known
        else:
            given = b.icmp_signed(">=", hint, ir.Constant(I64, 0))
            before = b.block
            search_bb = b.append_basic_block("m_search")
            found_bb = b.append_basic_block("m_found")
            b.cbranch(given, found_bb, search_bb)
            b.position_at_end(search_bb)
            searched = b.call(_emit_segment(module, search_hoisted), [mg, nm, x])
            b.branch(found_bb)
            b.position_at_end(found_bb)
            mi = b.phi(I64, "mi")
            mi.add_incoming(hint, before)
            mi.add_incoming(searched, search_bb)
        mi1 = b.add(mi, one)
        mi1 = b.select(b.icmp_signed(">=", mi1, nm), mi, mi1)
        mx0, mx1 = b.load(b.gep(mg, [mi])), b.load(b.gep(mg, [mi1]))

        def interp_m(col_value):
            """Interpolate along m; ``col_value(i)`` loads the value at m-row ``i``."""
            v0, v1 = col_value(mi), col_value(mi1)
            return b.select(m_single, v0, _lerp(b, x, mx0, mx1, v0, v1))

        if ndim == 1:
            r = interp_m(lambda i: b.load(b.gep(vals, [i])))
        else:
            a = interp_m(lambda i: b.load(b.gep(vals, [b.add(b.mul(i, nt), tj)])))
            c = interp_m(lambda i: b.load(b.gep(vals, [b.add(b.mul(i, nt), tj1)])))
            rn = _lerp(b, tt, b.load(b.gep(tg, [tj])), b.load(b.gep(tg, [tj1])), a, c)
            r = b.select(b.icmp_signed("==", nt, one), a, rn)
            if policy.tau_beyond == "proportional":
                r = b.select(b.fcmp_ordered(">", tau, t_last), b.fdiv(b.fmul(r, tau), t_last), r)
        if policy.nonnegative:
            r = _np_max(b, r, _const(0.0))
        return r, mi

    if policy.m_beyond != "chunks":
        r, mi = read(x, hint, hoist_m)
    else:
        # step 8: x = k·s + r past the last grid point s > 0 is read as k·f(s) + f(r)
        over = b.and_(b.fcmp_ordered(">", x, m_last), b.fcmp_ordered(">", m_last, _const(0.0)))
        rem = b.frem(x, m_last)
        rem = b.select(b.fcmp_unordered("ueq", rem, _const(0.0)), m_last, rem)
        k = b.call(module.declare_intrinsic("llvm.floor", [F64]),
                   [b.fadd(b.fdiv(b.fsub(x, rem), m_last), _const(0.5))])
        v, mi = read(b.select(over, rem, x), hint, hoist_m)
        last_seg = b.sub(nm, ir.Constant(I64, 2))
        last_seg = b.select(b.icmp_signed("<", last_seg, ir.Constant(I64, 0)), ir.Constant(I64, 0), last_seg)
        w, _ = read(m_last, None, False, known=last_seg)  # the segment of x = m[-1]
        r = b.select(over, b.fadd(b.fmul(w, k), v), v)
    res = b.insert_value(ir.Constant(LOOKUP_RESULT, ir.Undefined), r, 0)
    b.ret(b.insert_value(res, mi, 1))
    return fn
