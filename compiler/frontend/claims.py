"""Claims and assumptions: ``tlop prove`` conditions read by the real front end.

What it does: parses a claim such as ``"rd_allgather(P, m, S) > 2 * binomial_scatter(P, m, S)"``
(or an ``--assume`` condition) with the ANTLR grammar, infers the type of each free variable
from the parameter it is passed to, elaborates it in the scope of a loaded module into IR, and
collects the facts argument binding enforces for a variable passed straight to an algorithm's
parameter (:func:`tlop.ir.facts.param_facts`: the declared constraint or the implicit ``>= 0`` of
bytes and time, channel indices; integrality comes with the variable's type) and the
algorithm's own ``where`` clause, with the call's arguments for its parameters (a call whose
arguments are the claim's variables or closed expressions; not one inside a ``sum`` or ``let``
of the claim, whose bound names the clause cannot see).  A claim is thus read over the
arguments every algorithm it calls accepts.  Byte counts are whole numbers (a message has a
whole number of bytes, never negative: the engines reject a negative size), like ``int`` and
``channel`` variables.  Nothing else is assumed: an
``int`` may be negative, and a ``def``'s declared constraint gives no fact (nothing enforces it
when the definition is inlined).

What it does not do: prove anything (:mod:`tlop.analysis.prove` does).
"""

from __future__ import annotations

from tlop.frontend import ast as A
from tlop import ir
from tlop.ir.facts import INTEGER_TYPES, param_facts
from tlop.runtime.diagnostics import Source, TlopError
from tlop.frontend.elaborate import elaborate_expression
from tlop.frontend.parse import parse_expression

__all__ = ["parse_claim", "parse_condition"]

_RELATIONS = ("<", "<=", ">", ">=", "==", "!=")


def _infer(expr: A.Expr, decls: dict, types: dict, facts: list, globals_: set, program):
    """Give each free name the type of the parameter it is passed to; note the facts binding
    enforces for that parameter when the callee is an algorithm."""
    for node in A.iter_nodes(expr):
        if not isinstance(node, A.Call):
            continue
        d = decls.get(node.callee)
        if not isinstance(d, (A.AlgorithmDecl, A.DefDecl)):
            continue
        params = list(d.params)
        for i, arg in enumerate(node.args):
            p = next((q for q in params if q.name == arg.name), None) if arg.name else \
                (params[i] if i < len(params) else None)
            if p is None or not isinstance(arg.value, A.Name) or arg.value.id in globals_:
                continue
            name, ptype = arg.value.id, ("time" if p.type.name == "cost" else p.type.name)
            if types.setdefault(name, ptype) != ptype:
                raise TlopError(f"'{name}' is passed as {types[name]} and as {ptype}", arg.span)
            sig = program.algorithms.get(node.callee) if isinstance(d, A.AlgorithmDecl) else None
            psig = next((q for q in sig.params if q.name == p.name), None) if sig is not None else None
            if psig is not None:
                # every fact of one parameter is ``Var(parameter) op closed bound``
                facts.extend(ir.Bin(f.op, ir.Var(name), f.rhs) for f in param_facts((psig,), program)[1])


def _free_names(expr: A.Expr, globals_: set) -> list:
    bound = set()
    out = []
    for node in A.iter_nodes(expr):
        if isinstance(node, (A.LetIn,)):
            bound.add(node.name)
        if isinstance(node, A.Reduction):
            bound.add(node.var)
        if isinstance(node, A.Name) and node.id not in globals_ and node.id not in bound and node.id not in out:
            out.append(node.id)
    return out


def parse_claim(text: str, module, extra_types: dict | None = None):
    """``(lhs, relation, rhs, integer variables, facts, variable types)`` of a claim."""
    source = Source("<claim>", text)
    expr = parse_expression(source)
    if not (isinstance(expr, A.Binary) and expr.op in _RELATIONS):
        raise TlopError("a claim compares two expressions, e.g. \"a(P, m) <= 2 * b(P, m)\"", expr.span)
    decls = module.elaborated.decls
    globals_ = set(decls)
    types = dict(extra_types or {})
    raw_facts: list = []
    _infer(expr, decls, types, raw_facts, globals_, module.program)
    for node in A.iter_nodes(expr):  # an unknown function is the first thing to report
        if isinstance(node, A.Call) and node.callee not in decls and node.callee not in ir.FUNCTIONS:
            raise TlopError(f"unknown function, table or algorithm '{node.callee}'", node.callee_span or node.span)
    for name in _free_names(expr, globals_):
        if name not in types:
            raise TlopError(f"cannot tell the type of '{name}': pass it to an algorithm parameter, "
                            f"or declare it with --var {name}:TYPE", _name_span(expr, name))
    modules = list(module.elaborated.modules)
    elaborate_expression(modules, expr, types)  # both sides of one dimension (errors with spans)
    lhs, _ = elaborate_expression(modules, expr.lhs, types)
    rhs, _ = elaborate_expression(modules, expr.rhs, types)
    facts = []
    for fact in raw_facts:
        if fact not in facts:
            facts.append(fact)
    for fact in _where_facts(expr, decls, module, modules, types):
        if fact not in facts:
            facts.append(fact)
    ints = {n for n, t in types.items() if t in INTEGER_TYPES or t == "bytes"}
    for n, t in types.items():
        if t == "bytes":  # a byte count is never negative (the engines reject a negative size)
            fact = ir.Bin(">=", ir.Var(n), ir.Num(0))
            if fact not in facts:
                facts.append(fact)
    channels = len(module.program.channels)
    for n, t in types.items():
        if t == "channel":  # binding accepts channel indices only
            for fact in (ir.Bin(">=", ir.Var(n), ir.Num(0)), ir.Bin("<", ir.Var(n), ir.Num(channels))):
                if fact not in facts:
                    facts.append(fact)
    return lhs, expr.op, rhs, ints, tuple(facts), types


def _where_facts(expr: A.Expr, decls: dict, module, modules, types) -> list:
    """The ``where`` clause of every algorithm the claim calls, its parameters bound to the
    call's arguments (``let P = …, m = … in COND``); a call inside a reduction or ``let`` of the
    claim is skipped (its arguments may name the bound variable)."""
    inner = set()
    for node in A.iter_nodes(expr):
        if isinstance(node, (A.Reduction, A.LetIn)):
            inner.update(id(n) for n in A.iter_nodes(node) if n is not node)
    out = []
    for node in A.iter_nodes(expr):
        if not isinstance(node, A.Call) or id(node) in inner:
            continue
        d = decls.get(node.callee)
        sig = module.program.algorithms.get(node.callee) if isinstance(d, A.AlgorithmDecl) else None
        if sig is None or sig.requires is None:
            continue
        params = list(d.params)
        bindings = []
        for i, arg in enumerate(node.args):
            p = next((q for q in params if q.name == arg.name), None) if arg.name else \
                (params[i] if i < len(params) else None)
            if p is None:
                break
            value, _ = elaborate_expression(modules, arg.value, types)
            bindings.append((p.name, value))
        else:
            bound = {n for n, _ in bindings}
            defaults = [(q.name, q.default) for q in sig.params if q.name not in bound
                        and getattr(q, "default", None) is not None]
            if ir.free_vars(sig.requires) <= bound | {n for n, _ in defaults}:
                out.append(ir.Let(tuple(bindings) + tuple(defaults), sig.requires))
    return out


def parse_condition(text: str, module, types: dict) -> ir.Expr:
    """An ``--assume`` condition such as ``"P >= 4"`` over the claim's variables."""
    expr = parse_expression(Source("<assumption>", text))
    node, t = elaborate_expression(list(module.elaborated.modules), expr, types)
    if t != "bool":
        raise TlopError(f"an assumption must be a condition (bool), found {t}", expr.span)
    return node


def _name_span(expr, name):
    for node in A.iter_nodes(expr):
        if isinstance(node, A.Name) and node.id == name:
            return node.span
    return expr.span
