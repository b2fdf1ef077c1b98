"""Configuration references in native code: ``partition.x[p]`` as a load from run-time data.

What it does: a configuration (:class:`tlop.runtime.configs.Configuration`) is constant data
for a whole evaluation, so the JIT compiles ``config.field`` and ``config.field[i]``
(:class:`tlop.ir.ConfigRef`) as reads of arrays the evaluator passes with the mapping, next to a
layout's rank → node table:

* :func:`config_fields` lists the ``(config, field)`` pairs an algorithm reads, in a fixed
  order (sorted): field ``j`` of that list is slot ``j``;
* :func:`config_data` turns a mapping into the data of those slots — per slot two words
  appended to the mapping words of the scalar array (``shape``: the length of a per-process
  field, ``-1`` for a field with one value, NaN when the mapping has no such field; ``value``:
  that one value) and one array of doubles whose pointer follows the node table's in the table
  pointer array (padded with one element, so that a guarded read of element 0 is always valid);
* :func:`emit_config_ref` emits the read with the interpreter's checks
  (:meth:`tlop.backends.interp.Interpreter._eval_ConfigRef`): a missing configuration or
  field, an index on a one-value field or none on a per-process one, an index that is not a
  whole number in ``0 … len−1`` — each an evaluation error whose message the interpreter gives
  when the evaluator re-runs it on the point.  The read is branch-free (a failing index reads
  element 0 and flags the error), so it stays in the loop's block and LLVM can hoist it; a
  field's length and array pointer are loaded once, in the entry block; an index that is a loop
  counter (a whole number by construction) is checked with one unsigned comparison.

The generated code depends only on the list of fields, never on their values: one object
serves every configuration (the cache key holds the list through the algorithm's IR and the
evaluator's ``config_fields``), and a configuration's numbers are data of the evaluator like a
profile's tables.

What it does not do: validate configurations (:mod:`tlop.runtime.configs` does, when they are
read), or fold a configuration into the code.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir

from tlop import ir as tir

__all__ = ["config_fields", "config_data", "emit_config_ref", "WORDS_PER_FIELD"]

#: words per configuration field after the mapping words: shape, value
WORDS_PER_FIELD = 2


def config_fields(alg: tir.Algorithm) -> tuple:
    """The ``(config, field)`` pairs ``alg`` reads (its body and its ``where`` condition), sorted."""
    roots = [alg.body] + ([alg.requires] if getattr(alg, "requires", None) is not None else [])
    found = set()
    for root in roots:
        for n in tir.walk_unique(root):
            if isinstance(n, tir.ConfigRef):
                found.add((n.config, n.field))
    return tuple(sorted(found))


def config_data(mapping, fields: tuple):
    """``(words, arrays)`` for ``fields`` of ``mapping``: ``WORDS_PER_FIELD`` doubles per field
    and one contiguous float64 array per field (see the module docstring).  A mapping without a
    configuration (``sequential(8)``), or a configuration without the field, gives NaN words:
    reading it is an evaluation error, as in the interpreter."""
    from tlop.runtime.mapping import MappingError

    words = np.full(WORDS_PER_FIELD * len(fields), np.nan)
    arrays = []
    table = getattr(mapping, "table", None)
    for j, (config, name) in enumerate(fields):
        arr = np.zeros(1)
        if table is not None:
            try:
                v = table(config, name)
            except MappingError:  # ConfigError: the interpreter gives the message
                v = None
            if isinstance(v, int):
                words[2 * j], words[2 * j + 1] = -1.0, float(v)
            elif v is not None:
                v = np.asarray(v, dtype=np.float64).reshape(-1)
                words[2 * j] = float(v.size)
                arr = np.ascontiguousarray(np.concatenate([v, np.zeros(1)]))
        arrays.append(arr)
    return words, arrays


def emit_config_ref(cg, e: tir.ConfigRef, env, conc):
    """The LLVM value of ``e`` in the cost function :class:`~tlop.backends.jit.codegen.CodeGen`
    ``cg`` is building (NaN and an evaluation error where the interpreter raises one)."""
    from tlop.backends.jit.codegen import _intrinsic
    from tlop.backends.jit.schedgen import MAP_WORDS
    from tlop.backends.jit.tables import F64, I64

    key = (e.config, e.field)
    if key not in cg.config_fields:  # not in the evaluator's data: the interpreter explains
        return cg.fail()
    j = cg.config_fields.index(key)
    lay = cg.layout
    base = lay.grid_base + len(lay.tables) + MAP_WORDS + WORDS_PER_FIELD * j
    zero = ir.Constant(F64, 0.0)

    def field(b):
        """(shape word, value word, length as i64 — 0 unless a per-process field —, array)"""
        shape = b.load(b.gep(cg.scal, [ir.Constant(I64, base)]))
        value = b.load(b.gep(cg.scal, [ir.Constant(I64, base + 1)]))
        per = b.fcmp_ordered(">=", shape, zero)
        n = b.select(per, b.fptosi(b.select(per, shape, zero), I64), ir.Constant(I64, 0))
        arr = b.load(b.gep(cg.tabs, [ir.Constant(I64, len(lay.tables) + 1 + j)]))
        return shape, value, n, arr

    shape, value, n, arr = cg.at_entry(("config", j), field)
    b = cg.b
    if e.index is None:
        cg.check(b.fcmp_unordered("!=", shape, ir.Constant(F64, -1.0)))
        return value
    idx = cg.gen(e.index, env, conc)
    whole = whole_number(idx)
    if whole is not None:  # a loop counter: a whole number already, in range when 0 <= it < n
        ok = b.icmp_unsigned("<", whole, n)
        i = b.select(ok, whole, ir.Constant(I64, 0))
    else:
        floor = _intrinsic(cg.module, "llvm.floor")
        # n is 0 for a missing field and a one-value field; the index must be whole, in
        # 0 … n-1 (false for NaN and ±inf)
        ok = b.and_(b.fcmp_ordered("==", b.call(floor, [idx]), idx),
                    b.and_(b.fcmp_ordered(">=", idx, zero), b.fcmp_ordered("<", idx, b.sitofp(n, F64))))
        i = b.fptosi(b.select(ok, idx, zero), I64)
    cg.check(b.not_(ok))
    return b.load(b.gep(arr, [i]))


def whole_number(v):
    """The i64 a double ``v`` was converted from (``sitofp``: a loop counter of ``sum``, ``par``
    or ``seq``), else None."""
    from tlop.backends.jit.tables import I64

    if isinstance(v, ir.CastInstr) and v.opname == "sitofp" and v.operands[0].type == I64:
        return v.operands[0]
    return None
