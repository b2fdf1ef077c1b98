"""The process mapping on LLVM values: which node a rank runs on, inside generated schedule code.

What it does: :class:`MappingCode` (a base of :class:`tlop.backends.jit.loopgen.NativeLoops`, so of
both schedule generators) reads the mapping's run-time words (:data:`MAP_WORDS`: Q, the node
count, a layout's P and node count, the nodes per rack; a layout's rank → node table after the
profile's tables) and
gives, for the mapping kind compiled in (:data:`MAPPING_KINDS`), the divisor and node count for a
process count (:meth:`MappingCode.mapping`), a rank's node (:meth:`MappingCode.node_of`), whether
a process count is one the mapping places (:meth:`MappingCode.placeable`), Q of a closed form
(:meth:`MappingCode.ranks_per_node`), the nodes per rack of the ``rack`` contention key
(:meth:`MappingCode.nodes_per_rack`) and the IR's ``node(p)`` (:meth:`MappingCode.gen_NodeOf`),
with :class:`tlop.runtime.mapping`'s meaning.

What it does not do: write the mapping's words (:func:`tlop.backends.jit.evaluator` fills them),
check a process count before the batch loop calls the cost function
(:meth:`tlop.backends.jit.codegen.CodeGen._mapping_check`), or group sends by node (the
generators do).
"""

from __future__ import annotations

from llvmlite import ir

from tlop import ir as tir
from tlop.runtime.mapping import MAX_RANKS

from tlop.backends.jit.llvmutil import NAN as _NAN, ZERO as _ZERO
from tlop.backends.jit.tables import F64, I64, _np_max

__all__ = ["MappingCode", "MAP_WORDS", "MAPPING_KINDS"]

#: the mapping words after the profile's scalars: Q (NaN if not given), the node count M (NaN
#: if not given), a layout's P and node count, the nodes per rack (NaN: one rack); a layout's
#: rank → node table (doubles) is the table pointer after the profile's tables
MAP_WORDS = 5
MAPPING_KINDS = ("sequential", "round_robin", "layout")


def _c(v: int):
    return ir.Constant(I64, v)


class MappingCode:
    """The mapping's helpers; needs ``self.cg``, ``self.kind``, ``self.b``, ``self.intrinsic``
    and ``self.is_rank`` (:class:`tlop.backends.jit.loopgen.NativeLoops` gives them)."""

    def _map_word(self, k):
        cg = self.cg
        lay = cg.layout
        base = lay.grid_base + len(lay.tables)
        b = self.b
        return b.load(b.gep(cg.scal, [_c(base + k)]))

    def mapping(self, P):
        """``(divisor, node count)`` of the mapping for process count ``P`` (doubles)."""
        b = self.b
        ceil = self.intrinsic("llvm.ceil")
        Q, M = self._map_word(0), self._map_word(1)
        q_given = b.fcmp_ordered("ord", Q, Q)
        if self.kind == "sequential":
            d = b.select(q_given, Q, b.call(ceil, [b.fdiv(P, M)]))
            return d, b.call(ceil, [b.fdiv(P, d)])
        if self.kind == "round_robin":
            n = b.select(q_given, _np_max(b, ir.Constant(F64, 1.0), b.call(ceil, [b.fdiv(P, Q)])), M)
            return n, n
        return None, self._map_word(3)

    def ranks_per_node(self, P):
        """Q of a closed form (:func:`tlop.backends.jit.evaluator.closed_variant`): a sequential
        mapping's ranks per node, a round-robin mapping's Q when it was given (NaN when it gives
        the node count: the closed form's conditions then fail and the schedule runs)."""
        b = self.b
        Q, M = self._map_word(0), self._map_word(1)
        if self.kind == "sequential":
            return b.select(b.fcmp_ordered("ord", Q, Q), Q, b.call(self.intrinsic("llvm.ceil"), [b.fdiv(P, M)]))
        return Q

    def nodes_per_rack(self):
        """The mapping's nodes per rack as an i64 (loaded once, in the entry block); without
        racks 2^62, so that every node is in rack 0 (:meth:`tlop.runtime.mapping.Mapping.rack_of`)."""
        cg = self.cg
        base = cg.layout.grid_base + len(cg.layout.tables)

        def load(b):
            R = b.load(b.gep(cg.scal, [_c(base + 4)]))
            return b.select(b.fcmp_ordered("ord", R, R), b.fptosi(R, I64), _c(1 << 62))
        return cg.at_entry(("nodes per rack",), load)

    def node_of(self, p, d):
        """The node of rank ``p`` (a checked double) as an i64."""
        b = self.b
        if self.kind == "sequential":
            return b.fptosi(b.call(self.intrinsic("llvm.floor"), [b.fdiv(p, d)]), I64)
        if self.kind == "round_robin":
            return b.fptosi(b.frem(p, d), I64)
        return b.fptosi(b.load(b.gep(self._node_table(), [b.fptosi(p, I64)])), I64)

    def _node_table(self):
        """A layout's rank → node table (loaded once, in the entry block)."""
        cg = self.cg
        return cg.at_entry(("node table",), lambda b: b.load(b.gep(cg.tabs, [_c(len(cg.layout.tables))])))

    def ranks(self, env):
        P = env.get(tir.RANKS)
        if P is None or self.kind is None:
            return None
        return P

    def placeable(self, P):
        """``P`` is a process count the mapping places (the batch loop runs the cost function
        even for points whose arguments failed, so the stage must not trust them)."""
        b = self.b
        ok = b.and_(b.fcmp_ordered(">=", P, ir.Constant(F64, 1.0)),
                    b.fcmp_ordered("<=", P, ir.Constant(F64, float(MAX_RANKS))))
        ok = b.and_(ok, b.fcmp_ordered("==", b.call(self.intrinsic("llvm.floor"), [P]), P))
        if self.kind == "layout":
            ok = b.and_(ok, b.fcmp_ordered("==", P, self._map_word(2)))
        return ok

    def gen_NodeOf(self, e, env, conc):
        P = self.ranks(env)
        if P is None:
            return self.cg.fail()
        from tlop.backends.jit.configdata import whole_number

        cg = self.cg
        b = self.b
        r = cg.gen(e.rank, env, conc)
        # branch-free: a rank outside 0 … P−1 (or a P the mapping cannot place) reads rank 0's
        # node and flags an evaluation error; P's checks are made once when P is fixed for the
        # evaluation (the algorithm's parameter, loaded in the entry block)
        if isinstance(P, ir.Instruction) and P.parent is cg.fn.entry_basic_block:
            def ranks(b_):
                ok_ = self.placeable(P)
                return ok_, b_.fptosi(b_.select(ok_, P, ir.Constant(F64, 1.0)), I64)
            placed, Pi = cg.at_entry(("ranks", id(P)), ranks)
        else:
            placed = self.placeable(P)
            Pi = b.fptosi(b.select(placed, P, ir.Constant(F64, 1.0)), I64)
        whole = whole_number(r)
        if whole is not None:
            ok = b.and_(placed, b.icmp_unsigned("<", whole, Pi))
        else:
            ok = b.and_(placed, self.is_rank(r, P))
        cg.check(b.not_(ok))
        safe = b.select(ok, r, _ZERO)
        d, _ = self.mapping(P)
        return b.select(ok, b.sitofp(self.node_of(safe, d), F64), _NAN)
