"""Visitor base classes for the cost IR: dispatch by node type, one method per node class.

What it does:

* :class:`ExprFunctor` — ``visit(e, *args)`` calls the method ``<prefix><NodeClass>`` of the
  subclass (``visit_Num``, ``visit_Bin`` … by default; a subclass may choose another prefix with
  :attr:`ExprFunctor.visit_prefix`).  There is no default: a node class without a method is an
  :class:`UnhandledNode` error naming the node and the visitor, so adding a node class to the IR
  makes every back end decide what it means (:meth:`ExprFunctor.unhandled` lists the gaps; the
  test suite checks that the interpreter, the code generator and the Z3 encoder have none).
* :class:`ExprMutator` — an identity transformation to subclass: every node's children are
  visited and the node rebuilt with :func:`tlop.ir.rebuild`, which keeps the node itself
  (and so its span and anything attached to it) when no child changed.  Override
  ``visit_<Node>`` for the nodes a pass changes.

What it does not do: know about scopes (a mutator that substitutes variables must handle
``Let`` and ``Reduce`` binders itself), memoise, or traverse declarations (transmission bodies
are visited by the back ends that expand them).
"""

from __future__ import annotations

from tlop.ir import nodes as ir

__all__ = ["ExprFunctor", "ExprMutator", "UnhandledNode", "node_classes"]


class UnhandledNode(TypeError):
    """A visitor met a node class it has no method for."""


def node_classes() -> tuple:
    """Every concrete IR expression class (the subclasses of :class:`tlop.ir.Expr`)."""
    out, stack = [], [ir.Expr]
    while stack:
        c = stack.pop()
        for s in c.__subclasses__():
            out.append(s)
            stack.append(s)
    return tuple(sorted(set(out), key=lambda c: c.__name__))


class ExprFunctor:
    """Dispatches ``visit(e, *args)`` to ``self.<visit_prefix><type(e).__name__>(e, *args)``."""

    #: the prefix of the per-node methods
    visit_prefix = "visit_"

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        cls._dispatch = {}

    def visit(self, e, *args):
        try:
            method = self._dispatch[type(e)]
        except (KeyError, AttributeError):
            method = self._resolve(type(e))
        return method(self, e, *args)

    @classmethod
    def _resolve(cls, node_type):
        if "_dispatch" not in cls.__dict__:
            cls._dispatch = {}
        for klass in node_type.__mro__:
            method = getattr(cls, cls.visit_prefix + klass.__name__, None)
            if method is not None:
                cls._dispatch[node_type] = method
                return method
            if klass is ir.Expr:
                break
        raise UnhandledNode(f"{cls.__name__} has no method for IR node {node_type.__name__} "
                            f"(define {cls.__name__}.{cls.visit_prefix}{node_type.__name__})")

    @classmethod
    def unhandled(cls) -> tuple:
        """The IR node classes this visitor has no method for (empty for a complete back end)."""
        out = []
        for c in node_classes():
            try:
                cls._resolve(c)
            except UnhandledNode:
                out.append(c)
        return tuple(out)


class ExprMutator(ExprFunctor):
    """Rebuilds every node from its visited children; unchanged subtrees are kept as they are."""

    def visit_Expr(self, e):
        kids = ir.children(e)
        new = tuple(self.visit(k) for k in kids)
        return ir.rebuild(e, new)
