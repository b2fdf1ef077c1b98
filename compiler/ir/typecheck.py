"""Types of IR nodes: the typing rule of each node kind, and annotation after the fact.

What it does: :func:`node_type` gives the type of one IR node from the types of its children,
the program's declarations (table and parameter signatures) and the types of the variables in
scope, with the rules of :mod:`tlop.ir.types`.  :func:`annotate` fills in the ``ty`` of every
node that lacks one, bottom-up, so that a pass that builds new nodes (the simplifier, rewrite
rules, a reduction pass) need not type them itself.  A bare constant (``Num``) has no dimension
of its own: it takes the one its place needs — the dimension of its sibling in ``+``, ``−``,
comparisons, ``min``/``max`` and ``if`` branches, what its parent's type leaves for it in ``*``
and ``/``, a size as a transmission's size, and so on; elsewhere it is a plain ``int``/``real``.

What it does not do: report source errors (the front end does, with spans) or check existing
annotations (:mod:`tlop.ir.verify` does).
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Mapping, Optional

from tlop.ir import nodes as N
from tlop.ir import types as T
from tlop.ir.types import Type, TypeRuleError

__all__ = ["node_type", "annotate", "annotate_algorithm", "annotate_program", "param_type",
           "constant_exponent", "IRTypeError"]


class IRTypeError(Exception):
    """An IR that is not well typed: a bug in the pass that produced it, not a user error."""

    def __init__(self, problems):
        self.problems = list(problems) if not isinstance(problems, str) else [problems]
        super().__init__("ill-typed IR:\n  " + "\n  ".join(self.problems))


def param_type(spelling: str) -> Type:
    """The type of an algorithm parameter from its :attr:`ParamSig.type` spelling."""
    t = T.parse_type(spelling)
    if t is None:
        raise IRTypeError(f"unknown parameter type '{spelling}'")
    return t


def constant_exponent(e: N.Expr) -> Optional[Fraction]:
    """The value of a constant exponent (a number, possibly negated), else None."""
    sign = 1
    while isinstance(e, N.Neg):
        sign, e = -sign, e.operand
    if isinstance(e, N.Num):
        return sign * Fraction(e.value)
    return None


def _want(t: Optional[Type], want: Type, what: str, i: int):
    if t is not None and not T.accepts(want, t):
        raise TypeRuleError(f"{what} must be {want.describe()}, found {t.describe()}", i)


def node_type(e: N.Expr, kids: tuple, program: Optional[N.Program], env: Mapping[str, Type]) -> Type:
    """The type of ``e`` given its children's types ``kids`` (the order of :func:`ir.children`).
    ``Num`` has no rule (its annotation is its type); raises TypeRuleError when ill-typed."""
    if isinstance(e, N.Num):
        if e.ty is None:
            raise TypeRuleError("a constant without a type")
        return e.ty
    if isinstance(e, N.Var):
        if e.name not in env:
            raise TypeRuleError(f"variable '{e.name}' is not in scope")
        return env[e.name]
    if isinstance(e, N.Bin):
        if e.op in N.ARITH_OPS:
            return T.arith(e.op, kids[0], kids[1], constant_exponent(e.rhs) if e.op == "^" else None)
        if e.op in N.COMPARE_OPS:
            return T.compare(e.op, kids[0], kids[1])
        if e.op in N.INT_OPS:
            return T.integer_op(e.op, kids[0], kids[1])
        return T.logic(e.op, kids[0], kids[1])
    if isinstance(e, N.Neg):
        return T.negate(kids[0])
    if isinstance(e, N.Not):
        return T.logical_not(kids[0])
    if isinstance(e, N.Fn):
        arity = N.FUNCTIONS.get(e.name, 0)
        if (arity is None and len(kids) < 2) or (arity is not None and len(kids) != arity):
            raise TypeRuleError(f"'{e.name}' with {len(kids)} arguments")
        return T.function(e.name, kids)
    if isinstance(e, N.Cond):
        if kids[0] != T.BOOL:
            raise TypeRuleError(f"the condition of 'if' must be bool, found {kids[0].describe()}", 0)
        return T.branches(kids[1], kids[2])
    if isinstance(e, N.Let):
        return kids[-1]
    if isinstance(e, N.Reduce):
        T.reduction_bound(e.kind, kids[0])
        T.reduction_bound(e.kind, kids[1])
        if not kids[2].is_num:
            raise TypeRuleError(f"the body of '{e.kind}' must be a number, found {kids[2].describe()}", 2)
        return kids[2]
    if isinstance(e, N.Lookup):
        sig = program.tables.get(e.table) if program is not None else None
        if sig is None or sig.ty is None or sig.param_tys is None:
            raise TypeRuleError(f"table '{e.table}' has no typed declaration")
        off = 0
        if e.channel is not None:
            _want(kids[0], T.CHANNEL, "a channel index", 0)
            off = 1
        if len(kids) - off != len(sig.param_tys):
            raise TypeRuleError(f"table '{e.table}' with {len(kids) - off} arguments")
        for i, (want, got) in enumerate(zip(sig.param_tys, kids[off:])):
            _want(got, want, f"argument {i + 1} of table '{e.table}'", i + off)
        return sig.ty
    if isinstance(e, N.Scalar):
        sig = program.scalars.get(e.name) if program is not None else None
        if sig is None or sig.ty is None:
            raise TypeRuleError(f"parameter '{e.name}' has no typed declaration")
        if e.channel is not None:
            _want(kids[0], T.CHANNEL, "a channel index", 0)
        return sig.ty
    if isinstance(e, N.Conc):
        return T.conc(kids[0], kids[1])
    if isinstance(e, N.Transmit):
        _want(kids[0], T.CHANNEL, "a channel index", 0)
        _want(kids[1], T.BYTES, "the size of a transmission", 1)
        return T.TIME
    if isinstance(e, N.Xmit):
        if not kids[0].dimensionless:
            raise TypeRuleError(f"the multiplicity of a transmission must be a plain number, "
                                f"found {kids[0].describe()}", 0)
        _want(kids[1], T.CHANNEL, "a channel index", 1)
        _want(kids[2], T.BYTES, "the size of a transmission", 2)
        return T.TIME
    if isinstance(e, N.ParComp):
        for op in e.operands:
            if not op or not all(isinstance(x, N.Xmit) for x in op):
                raise TypeRuleError("an operand of a parallel composition must be a non-empty sequence of Xmit")
        for i, t in enumerate(kids):
            _want(t, T.TIME, "an item of a parallel composition", i)
        return T.TIME
    if isinstance(e, (N.Stage, N.Block)):
        for i, t in enumerate(kids):
            if t != T.ITEM:
                raise TypeRuleError(f"an item of a stage must be a schedule item, found {t.describe()}", i)
        return T.TIME if isinstance(e, N.Stage) else T.ITEM
    if isinstance(e, N.Loop):
        T.reduction_bound(e.kind, kids[0])
        T.reduction_bound(e.kind, kids[1])
        if kids[2] != T.BOOL:
            raise TypeRuleError(f"the 'where' of '{e.kind}' must be a condition (bool), found {kids[2].describe()}", 2)
        if kids[3] != T.ITEM:
            raise TypeRuleError(f"the body of '{e.kind}' must be a schedule item, found {kids[3].describe()}", 3)
        return T.ITEM
    if isinstance(e, N.Send):
        _want(kids[0], T.INT, "the source rank of a send", 0)
        _want(kids[1], T.INT, "the destination rank of a send", 1)
        _want(kids[2], T.BYTES, "the size of a send", 2)
        if not kids[3].dimensionless:
            raise TypeRuleError(f"the weight of a send must be a plain number, found {kids[3].describe()}", 3)
        return T.ITEM
    if isinstance(e, N.Compute):
        _want(kids[0], T.INT, "the rank of a computation", 0)
        _want(kids[1], T.TIME, "the cost of a computation", 1)
        return T.ITEM
    if isinstance(e, N.NodeOf):
        _want(kids[0], T.INT, "the rank of node(…)", 0)
        return T.INT
    if isinstance(e, N.ConfigRef):
        if kids:
            _want(kids[0], T.INT, f"the index of {e.config}.{e.field}[…]", 0)
        return T.INT
    if isinstance(e, N.PerRankArg):
        _want(kids[0], T.INT, f"the index of {e.name}[…]", 0)
        if e.name not in env:  # the parameter's element type, as for a Var
            raise TypeRuleError(f"per-rank parameter '{e.name}' is not in scope")
        return env[e.name]
    raise TypeRuleError(f"not an IR node: {type(e).__name__}")


def child_env(e: N.Expr, i: int, env: Mapping[str, Type], kids: list) -> Mapping[str, Type]:
    """The variables in scope of child ``i`` of ``e`` (``kids``: the children's types so far)."""
    if isinstance(e, N.Let) and i == len(e.bindings):
        return {**env, **{n: t for (n, _), t in zip(e.bindings, kids)}}
    if isinstance(e, (N.Reduce, N.Loop)) and i >= 2:
        return {**env, e.var: T.INT}
    return env


# ----------------------------------------------------------------------------- annotation

def _by_value(e: N.Num) -> Type:
    return T.INT if float(e.value).is_integer() else T.REAL


def _dims(t: Type, v: N.Num) -> Type:
    """The dimension of ``t`` for the constant ``v`` (int or real by its value when plain)."""
    if t.is_num and t.dimensionless:
        return _by_value(v)
    return t


def _bare(e) -> bool:
    return isinstance(e, N.Num) and e.ty is None


def _hint(e: N.Expr, i: int, sib: list, want: Optional[Type], program) -> Optional[Type]:
    """The type child ``i`` of ``e`` should have, from the parent's type ``want`` and the known
    types ``sib`` of its siblings (None where unknown); None for no preference."""
    other = next((t for j, t in enumerate(sib) if j != i and t is not None and t.is_num), None)
    if isinstance(e, N.Bin):
        if e.op in N.LOGIC_OPS:
            return T.BOOL
        if e.op in N.INT_OPS:
            return T.INT
        if e.op in ("+", "-", "%") or e.op in N.COMPARE_OPS:
            if e.op == "%" and i == 1:
                return sib[0] if sib[0] is not None else want
            return other or (want if e.op not in N.COMPARE_OPS else None)
        if e.op == "*" and want is not None and want.is_num and other is not None:
            return want / other
        if e.op == "/" and want is not None and want.is_num:
            if i == 0 and sib[1] is not None and sib[1].is_num:
                return want * sib[1]
            if i == 1 and sib[0] is not None and sib[0].is_num:
                return sib[0] / want
        return None
    if isinstance(e, N.Not):
        return T.BOOL
    if isinstance(e, N.Neg):
        return want
    if isinstance(e, N.Fn):
        if e.name in ("min", "max"):
            return other or want
        if e.name in ("ceil", "floor", "abs"):
            return want
        if e.name == "sqrt" and want is not None and want.is_num:
            return want.power(Fraction(2))
        return None
    if isinstance(e, N.Cond):
        return T.BOOL if i == 0 else (sib[2 if i == 1 else 1] or want)
    if isinstance(e, N.Let):
        return want if i == len(e.bindings) else None
    if isinstance(e, N.Reduce):
        return T.INT if i < 2 else want
    if isinstance(e, N.Lookup):
        if e.channel is not None and i == 0:
            return T.CHANNEL
        sig = program.tables.get(e.table) if program is not None else None
        j = i - (e.channel is not None)
        return sig.param_tys[j] if sig is not None and sig.param_tys and j < len(sig.param_tys) else None
    if isinstance(e, N.Scalar):
        return T.CHANNEL
    if isinstance(e, N.Conc):
        return None if i == 0 else T.TIME
    if isinstance(e, N.Transmit):
        return (T.CHANNEL, T.BYTES)[i]
    if isinstance(e, N.Xmit):
        return (None, T.CHANNEL, T.BYTES)[i]
    if isinstance(e, N.ParComp):
        return T.TIME
    if isinstance(e, (N.Stage, N.Block)):
        return T.ITEM
    if isinstance(e, N.Loop):
        return (T.INT, T.INT, T.BOOL, T.ITEM)[i]
    if isinstance(e, N.Send):
        return (T.INT, T.INT, T.BYTES, T.REAL)[i]
    if isinstance(e, N.Compute):
        return (T.INT, T.TIME)[i]
    if isinstance(e, (N.NodeOf, N.ConfigRef, N.PerRankArg)):
        return T.INT
    return None


def _with(e: N.Expr, t: Type) -> N.Expr:
    return dataclasses.replace(e, ty=t)


class _Annotator:
    def __init__(self, program):
        self.program = program

    def expr(self, e: N.Expr, env: Mapping[str, Type], want: Optional[Type]) -> N.Expr:
        if isinstance(e, N.Num):
            return e if e.ty is not None else _with(e, _dims(want, e) if want is not None else _by_value(e))
        if isinstance(e, N.Var):
            if e.ty is not None:
                return e
            if e.name not in env:
                raise IRTypeError(f"variable '{e.name}' is not in scope")
            return _with(e, env[e.name])
        want = e.ty or want
        old = N.children(e)
        new: list = list(old)
        tys: list = [None] * len(old)
        for phase in (0, 1):  # typed sub-terms first, then bare constants from their siblings
            for i, k in enumerate(old):
                if _bare(k) != bool(phase):
                    continue
                new[i] = self.expr(k, child_env(e, i, env, tys), _hint(e, i, tys, want, self.program))
                tys[i] = new[i].ty
        out = N.rebuild(e, tuple(new))
        if out.ty is None:
            try:
                t = node_type(out, tuple(tys), self.program, env)
            except TypeRuleError as err:
                raise IRTypeError(f"{_where(e)}: {err.message}") from None
            out = _with(out, t)
        return out


def _where(e: N.Expr) -> str:
    sp = getattr(e, "span", None)
    what = type(e).__name__ + (f" '{e.op}'" if isinstance(e, N.Bin) else "")
    return f"{what} at {sp}" if sp is not None else what


def annotate(e: N.Expr, program: Optional[N.Program], env: Optional[Mapping[str, Type]] = None,
             want: Optional[Type] = None) -> N.Expr:
    """``e`` with a type on every node (existing annotations are kept, not checked); ``env``
    gives the types of its free variables, ``want`` the type its context needs (a cost: TIME).
    Raises :class:`IRTypeError` when a node without a type cannot be typed."""
    return _Annotator(program).expr(e, dict(env or {}), want)


def algorithm_env(alg: N.Algorithm) -> dict:
    return {p.name: param_type(p.type) for p in alg.params}


def annotate_algorithm(alg: N.Algorithm, program: N.Program) -> N.Algorithm:
    """The algorithm with its body (a cost), defaults and constraint bounds annotated."""
    env = algorithm_env(alg)
    params = []
    for p in alg.params:
        pt = env[p.name]
        default = annotate(p.default, program, {}, pt) if p.default is not None else None
        constraint = (p.constraint[0], annotate(p.constraint[1], program, {}, pt)) if p.constraint else None
        params.append(dataclasses.replace(p, default=default, constraint=constraint))
    return dataclasses.replace(alg, params=tuple(params), body=annotate(alg.body, program, env, T.TIME))


def annotate_program(program: N.Program) -> N.Program:
    """The program with every algorithm and transmission body annotated."""
    transmissions = {name: tuple(dataclasses.replace(v, body=annotate(v.body, program, {v.param: T.BYTES}, T.TIME))
                                 for v in variants)
                     for name, variants in program.transmissions.items()}
    algorithms = {name: annotate_algorithm(a, program) for name, a in program.algorithms.items()}
    return dataclasses.replace(program, transmissions=transmissions, algorithms=algorithms)
