"""Elaboration: checked AST → cost IR, with name resolution and type checking in one walk.

What it does: builds the global scope of a module and everything it imports (channels, tables,
scalar parameters, transmissions, defs, algorithms; duplicates reported), resolves every name,
checks types and dimensions (:mod:`tlop.ir.types`: ``int real bool channel``, and numbers with a
dimension — ``bytes``, ``time`` (``cost``), and products and quotients such as ``time/bytes``),
and lowers each algorithm to :mod:`tlop.ir`, every node annotated with its type: defs and
algorithm calls inlined with simultaneous ``Let`` bindings, channel names replaced by channel
indices, ``A || cost`` to ``Conc``, ``cost || cost || …`` to one n-ary ``ParComp`` of
transmission sequences.

Dimensions: a literal with a unit (``2us``, ``4KiB``) has its dimension, a plain number none,
except that a plain ``0`` is a zero of whatever dimension its place needs (``m > 0``,
``max(t, 0)``).  An algorithm's cost and a transmission's body must be times.  Defaults of defs
and algorithms must be closed (constants): they are lowered once, where they are declared.

Errors are collected, never stopping at the first: an ill-typed sub-expression gets the type
``error``, which every rule accepts silently, so one mistake is reported once.

Cost: linear in the declarations.  A def's body is lowered once and shared by every call that
inlines it (so the IR is a DAG), and every question asked of lowered IR — its tree size for the
inlining limit, whether it holds a schedule — is answered by one walk memoized on node identity
for the whole pass (:class:`TreeSizes`), which only descends into nodes it has not seen.

What it does not do: simplify, evaluate, or look at any profile.

Layout: one class, :class:`_Elaborator`, assembled from three parts of this package —
:mod:`.declarations` (the global scope), :mod:`.expressions` and :mod:`.schedules`; :mod:`.common`
holds the names they share.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from tlop.frontend import ast as A
from tlop import ir
from tlop.ir import types as T
from tlop.runtime.diagnostics import Span
from tlop.frontend.loader import LoadedModule
from tlop.frontend.transmission_cycles import check_transmission_cycles
from tlop.frontend.expansion import check_transmission_expansion

from tlop.frontend.elaborate.common import ERR, EXCHANGE_VAR, GAMMA, LOCAL, TYPES, _close  # noqa: F401 (re-exported)
from tlop.frontend.elaborate.declarations import Declarations
from tlop.frontend.elaborate.expressions import Expressions
from tlop.frontend.elaborate.schedules import Schedules

__all__ = ["elaborate", "elaborate_expression", "Elaborated", "TYPES"]


@dataclass
class Elaborated:
    """The result: the IR program plus what printers need (docs, declarations)."""
    program: ir.Program
    root_algorithms: tuple
    decls: dict = field(default_factory=dict)  # name -> AST declaration (first one)
    modules: tuple = ()


class _Elaborator(Declarations, Expressions, Schedules):
    """Checks and lowers a loaded module tree: the three parts share one state."""

@dataclass
class _Root:
    body: ir.Expr
    span: Optional[Span]


def elaborate_expression(modules: list[LoadedModule], expr: A.Expr, var_types: dict):
    """(IR, type) of a lone expression in the scope of a loaded module tree, with the free
    variables ``var_types`` (name -> type spelling such as ``int`` or ``time/bytes``); the type
    is returned as its spelling.  Raises TlopError with every error."""
    el = _Elaborator(modules)
    el.collect()
    transmissions = el.transmission_variants()
    env = {}
    for n, spelling in var_types.items():
        t = T.parse_type(spelling)
        if t is None:
            el.sink.error(f"unknown type '{spelling}' of '{n}'", expr.span)
            t = ERR
        env[n] = (LOCAL, t)
    node, t = el.expr(expr, env)
    node, t = el._bounded(node, t, "the expression", expr.span)
    if not el.sink.has_errors:
        check_transmission_expansion(transmissions, {"the expression": _Root(node, expr.span)}, el.sink)
    el.sink.raise_if_errors()
    return node, str(t)


def elaborate(modules: list[LoadedModule]) -> Elaborated:
    """Check and lower a loaded module tree (root last).  Raises TlopError with every error."""
    el = _Elaborator(modules)
    el.collect()
    transmissions = el.transmission_variants()
    check_transmission_cycles(tuple(el.channels), transmissions, el.sink)
    algorithms = {}
    root = modules[-1]
    root_names = tuple(d.name for d in root.module.decls if isinstance(d, A.AlgorithmDecl))
    for name, d in el.globals.items():
        if isinstance(d, A.DefDecl):
            el.body_of(name)
    in_root = set(root_names)
    ordered = list(root_names) + [n for n, d in el.globals.items()
                                  if isinstance(d, A.AlgorithmDecl) and n not in in_root]
    for name in ordered:
        if isinstance(el.globals.get(name), A.AlgorithmDecl):
            algorithms[name] = el.algorithm(name)
    if not el.sink.has_errors:
        check_transmission_expansion(transmissions, algorithms, el.sink, unweighted=el.sizes)
    el.sink.raise_if_errors()
    program = ir.Program(tuple(el.channels), dict(el.tables), dict(el.scalars), transmissions, algorithms,
                         el.model, dict(el.channel_info))
    return Elaborated(program, root_names, dict(el.globals), tuple(modules))
