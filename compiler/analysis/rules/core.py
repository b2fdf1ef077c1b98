"""Rewrite rules as data, and the matcher that applies them to cost IR.

What it does: defines :class:`Rule` — a name, a left-hand pattern, a right-hand side, side
conditions, the axioms it relies on, its kind (``identity``: true in arithmetic;
``model``: true in the τ-Lop model) and its family (the switch the simplifier offers) — and
:func:`match` / :func:`substitute`, which find a pattern in an IR term and instantiate a
right-hand side.

Patterns are ordinary IR in which

* ``Var("?x")`` is a pattern variable; the rule's ``vars`` gives its sort: ``any`` (any term,
  in Z3 an uninterpreted function of the concurrency factor), ``pure`` (a term no concurrency
  factor changes: no transfer table, transmission or parallel composition in it), ``int``
  (a pure integer-valued term), ``num`` (a numeral) — sorts decide what a variable may bind;
* a table name or transmission name starting with ``?`` (``Lookup("?L", …)``,
  ``Transmit("?T", …)``) stands for any table of the declared shape (the rule's ``tables``) or
  any transmission.

A rule whose right-hand side is computed (constant folding, the n-ary A2/A3 reduction of a
parallel composition) has ``compute`` instead of ``rhs``: a function from the bindings (and the
match context) to the replacement, or ``None`` when it does not apply.  Such rules carry
``instances`` — concrete left-hand sides on which ``tlop rules --verify`` proves them.

What it does not do: decide side conditions (the simplifier's context does that), or order the
rewriting (that is :mod:`tlop.analysis.simplify`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from tlop import ir

__all__ = ["Rule", "match", "substitute", "is_pure", "is_int_expr", "PVAR", "SORTS"]

PVAR = "?"
SORTS = ("any", "pure", "int", "num")


@dataclass(frozen=True)
class Rule:
    """One rewrite rule ``lhs → rhs if conditions``.

    ``induction`` names an integer pattern variable and a base expression for rules over sums:
    they are proved by induction on that variable (see :mod:`tlop.analysis.prove`)."""
    name: str
    lhs: ir.Expr
    rhs: Optional[ir.Expr]
    vars: dict                                  # pattern-variable name (with '?') -> sort
    conditions: tuple = ()                      # IR over the pattern variables (non-zero = true)
    axioms: tuple = ()                          # names of the model axioms relied on
    kind: str = "identity"                      # "identity" | "model"
    family: str = "arith"                       # switchable group: arith, conc, sum, minmax,
                                                # intfn, linearity, A1, A2, A3
    doc: str = ""
    tables: dict = field(default_factory=dict)  # schematic table name -> ir.TableSig
    induction: Optional[tuple] = None           # (variable, base expression)
    compute: Optional[Callable] = None
    instances: tuple = ()                       # for computed rules: (lhs, assumptions) pairs
    keep_reason: dict = field(default_factory=dict)  # condition index -> why it is kept though not needed

    def __post_init__(self):
        if self.kind not in ("identity", "model"):
            raise ValueError(f"rule {self.name}: kind must be identity or model")
        if (self.rhs is None) == (self.compute is None):
            raise ValueError(f"rule {self.name}: give exactly one of rhs and compute")
        for v, s in self.vars.items():
            if not v.startswith(PVAR) or s not in SORTS:
                raise ValueError(f"rule {self.name}: bad pattern variable {v}: {s}")

    @property
    def head(self) -> tuple:
        """What the root of the left-hand side must be (for indexing rules by node)."""
        return _head(self.lhs)


def _head(e: ir.Expr):
    if isinstance(e, ir.Bin):
        return ("Bin", e.op)
    if isinstance(e, ir.Fn):
        return ("Fn", e.name)
    if isinstance(e, ir.Reduce):
        return ("Reduce", e.kind)
    if isinstance(e, ir.Var) and e.name.startswith(PVAR):
        return ("*",)
    return (type(e).__name__,)


def node_head(e: ir.Expr) -> tuple:
    return _head(e) if not isinstance(e, ir.Var) else ("Var",)


# ----------------------------------------------------------------------------- sorts

# (a stage's transfers read the concurrency factor too, and its items only occur inside it)
_CONC_NODES = (ir.Transmit, ir.ParComp, ir.Xmit, ir.Stage) + ir.ITEM_NODES


def is_pure(e: ir.Expr, program: Optional[ir.Program]) -> bool:
    """No concurrency factor changes the value of ``e``: it reads no transfer table (a table
    with a τ slot), no transmission and no parallel composition."""
    for n in ir.walk(e):
        if isinstance(n, _CONC_NODES):
            return False
        if isinstance(n, ir.Lookup):
            sig = program.tables.get(n.table) if program is not None else None
            if sig is None or sig.tau_index is not None:
                return False
        if isinstance(n, ir.Var) and n.name.startswith(PVAR):
            return False
    return True


def is_int_expr(e: ir.Expr, int_vars) -> bool:
    """``e`` has an integer value whenever its integer variables do (a syntactic check)."""
    if isinstance(e, ir.Num):
        return float(e.value).is_integer()
    if isinstance(e, ir.Var):
        return e.name in int_vars
    if isinstance(e, ir.Neg):
        return is_int_expr(e.operand, int_vars)
    if isinstance(e, ir.Bin):
        if e.op in ("+", "-", "*"):
            return is_int_expr(e.lhs, int_vars) and is_int_expr(e.rhs, int_vars)
        if e.op in ir.COMPARE_OPS or e.op in ir.LOGIC_OPS:
            return True
        if e.op == "%":
            return is_int_expr(e.lhs, int_vars) and is_int_expr(e.rhs, int_vars)
        return False
    if isinstance(e, ir.Not):
        return True
    if isinstance(e, ir.Fn):
        if e.name in ("ceil", "floor"):
            return True
        if e.name in ("min", "max", "abs"):
            return all(is_int_expr(a, int_vars) for a in e.args)
        return False
    if isinstance(e, ir.Cond):
        return is_int_expr(e.then_, int_vars) and is_int_expr(e.else_, int_vars)
    return False


# ----------------------------------------------------------------------------- matching

class MatchContext:
    """What the matcher needs to know about the term's surroundings."""

    def __init__(self, program: Optional[ir.Program] = None, int_vars=frozenset()):
        self.program = program
        self.int_vars = frozenset(int_vars)


def _sort_ok(sort: str, e: ir.Expr, ctx: MatchContext) -> bool:
    if sort == "any":
        return True
    if sort == "num":
        return isinstance(e, ir.Num)
    if not is_pure(e, ctx.program):
        return False
    if sort == "int":
        return is_int_expr(e, ctx.int_vars)
    return True


def _table_shape_ok(rule: Rule, pat_table: str, table: str, ctx: MatchContext) -> bool:
    want = rule.tables.get(pat_table)
    have = ctx.program.tables.get(table) if ctx.program is not None else None
    if want is None or have is None:
        return False
    return (want.channel_indexed == have.channel_indexed and len(want.params) == len(have.params)
            and want.tau_index == have.tau_index)


def match(rule: Rule, pat: ir.Expr, e: ir.Expr, b: dict, ctx: MatchContext) -> Optional[dict]:
    """Bindings extending ``b`` under which ``pat`` equals ``e``, or None."""
    if isinstance(pat, ir.Var) and pat.name.startswith(PVAR):
        if pat.name in b:
            return b if b[pat.name] == e else None
        if not _sort_ok(rule.vars[pat.name], e, ctx):
            return None
        nb = dict(b)
        nb[pat.name] = e
        return nb
    if type(pat) is not type(e):
        return None
    if isinstance(pat, ir.Num):
        # A literal with a dimension (``1B``, ``0s``) is not the rules' plain ``1`` or ``0``:
        # ``m / 1B`` is a number and ``m`` is bytes, so ``x / 1 = x`` would change the type.
        if e.ty is not None and (e.ty.time != 0 or e.ty.bytes != 0):
            return None
        return b if pat.value == e.value else None
    if isinstance(pat, ir.Var):
        return b if pat.name == e.name else None
    if isinstance(pat, ir.Bin) and pat.op != e.op:
        return None
    if isinstance(pat, ir.Fn) and (pat.name != e.name or len(pat.args) != len(e.args)):
        return None
    if isinstance(pat, ir.Reduce):
        if pat.kind != e.kind:
            return None
        # the index is a bound name: match it as a name binding
        key = PVAR + "idx:" + pat.var
        if key in b and b[key] != e.var:
            return None
        b = dict(b)
        b[key] = e.var
        pat_body = pat.body
        sub = {pat.var: ir.Var(e.var)}
        b2 = match(rule, pat.lo, e.lo, b, ctx)
        if b2 is None:
            return None
        b2 = match(rule, pat.hi, e.hi, b2, ctx)
        if b2 is None:
            return None
        # pattern variables of the body may mention the index only through the index itself:
        # bindings must not capture it unless the pattern allows ("any" sorts can)
        inner = MatchContext(ctx.program, ctx.int_vars | {e.var})
        out = _match_body(rule, pat_body, e.body, b2, inner, pat.var, e.var)
        return out
    if isinstance(pat, (ir.Lookup, ir.Transmit, ir.Xmit, ir.Scalar)):
        pname = pat.table if isinstance(pat, ir.Lookup) else pat.name
        ename = e.table if isinstance(e, ir.Lookup) else e.name
        if pname.startswith(PVAR):
            key = PVAR + "name:" + pname
            if key in b and b[key] != ename:
                return None
            if isinstance(pat, ir.Lookup) and not _table_shape_ok(rule, pname, ename, ctx):
                return None
            b = dict(b)
            b[key] = ename
        elif pname != ename:
            return None
        if isinstance(pat, ir.Lookup) and len(pat.args) != len(e.args):
            return None
        if (getattr(pat, "channel", None) is None) != (getattr(e, "channel", None) is None):
            return None
    if isinstance(pat, ir.ParComp):
        if len(pat.operands) != len(e.operands) or any(len(a) != len(c) for a, c in zip(pat.operands, e.operands)):
            return None
    if isinstance(pat, ir.Let):
        return None  # no rule patterns over let
    pk, ek = ir.children(pat), ir.children(e)
    if len(pk) != len(ek):
        return None
    for p, c in zip(pk, ek):
        b = match(rule, p, c, b, ctx)
        if b is None:
            return None
    return b


def _match_body(rule, pat, e, b, ctx, pvar, evar):
    """Match a reduction body; a pattern variable bound inside may not mention the index unless
    its sort is ``any`` (then it is a function of the index, as the pattern intends)."""
    out = match(rule, pat, e, b, ctx)
    if out is None:
        return None
    for name, val in out.items():
        if name in b or not name.startswith(PVAR) or name.startswith(PVAR + "idx:") \
                or name.startswith(PVAR + "name:"):
            continue
        if isinstance(val, ir.Expr) and evar in ir.free_vars(val) and not _mentions(pat, pvar, name):
            return None
    return out


def _mentions(pat, pvar, name) -> bool:
    """Whether the pattern lets variable ``name`` depend on the index ``pvar``: only when the
    variable is declared as a body term (by convention its name ends with the index, ``?f_i``)."""
    return name.endswith("_" + pvar)


def substitute(t: ir.Expr, b: dict) -> ir.Expr:
    """Instantiate a right-hand side (or condition) with bindings ``b``."""
    if isinstance(t, ir.Var):
        if t.name.startswith(PVAR):
            return b[t.name]
        return t
    if isinstance(t, ir.Reduce):
        var = b.get(PVAR + "idx:" + t.var, t.var)
        body = substitute(t.body, b)
        if var != t.var:
            body = rename(body, t.var, var)
        return ir.Reduce(t.kind, var, substitute(t.lo, b), substitute(t.hi, b), body)
    if isinstance(t, ir.Lookup) and t.table.startswith(PVAR):
        t = ir.Lookup(b[PVAR + "name:" + t.table], t.channel, t.args)
    if isinstance(t, ir.Transmit) and t.name.startswith(PVAR):
        t = ir.Transmit(b[PVAR + "name:" + t.name], t.channel, t.size)
    kids = ir.children(t)
    return ir.rebuild(t, tuple(substitute(k, b) for k in kids))


def rename(e: ir.Expr, old: str, new: str) -> ir.Expr:
    """Rename free occurrences of variable ``old`` to ``new``."""
    if isinstance(e, ir.Var):
        return ir.Var(new, span=e.span) if e.name == old else e
    b = ir.binder(e)
    if b is not None and b[0] == old:  # Reduce, Loop: the name is bound from child b[1] on
        kids = ir.children(e)
        return ir.rebuild(e, tuple(rename(k, old, new) if i < b[1] else k for i, k in enumerate(kids)))
    if isinstance(e, ir.Let):
        names = {n for n, _ in e.bindings}
        vals = tuple(rename(v, old, new) for _, v in e.bindings)
        body = e.body if old in names else rename(e.body, old, new)
        return ir.rebuild(e, vals + (body,))
    return ir.rebuild(e, tuple(rename(k, old, new) for k in ir.children(e)))


def replace_var(e: ir.Expr, name: str, value: ir.Expr) -> ir.Expr:
    """``e`` with free ``name`` replaced by ``value`` (``value`` must not be captured: callers
    substitute closed terms or fresh names)."""
    if isinstance(e, ir.Var):
        return value if e.name == name else e
    b = ir.binder(e)
    if b is not None and b[0] == name:  # Reduce, Loop: the name is bound from child b[1] on
        kids = ir.children(e)
        return ir.rebuild(e, tuple(replace_var(k, name, value) if i < b[1] else k for i, k in enumerate(kids)))
    if isinstance(e, ir.Let):
        names = {n for n, _ in e.bindings}
        vals = tuple(replace_var(v, name, value) for _, v in e.bindings)
        body = e.body if name in names else replace_var(e.body, name, value)
        return ir.rebuild(e, vals + (body,))
    return ir.rebuild(e, tuple(replace_var(k, name, value) for k in ir.children(e)))
