"""The vocabulary of closed-form derivation: mapping kinds, the outcome, the refusal, IR shorthands.

What it does: :data:`KINDS`, :func:`parse_kind`, :class:`Derivation` (what :func:`tlop.lower.closedform.derive`
returns), :class:`NoClosedForm` (a stage no pattern recognises) and two IR constructors.  What it
does not do: derive anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from tlop import ir

__all__ = ["KINDS", "parse_kind", "Derivation", "NoClosedForm"]

_ZERO, _ONE = ir.Num(0.0), ir.Num(1.0)


#: the mapping kinds a closed form is derived for
KINDS = ("sequential", "round_robin")
_ALIASES = {"sequential": "sequential", "seq": "sequential", "round_robin": "round_robin", "rr": "round_robin"}

_ZERO, _ONE = ir.Num(0.0), ir.Num(1.0)


def parse_kind(text: str) -> Optional[str]:
    """``sequential`` / ``round_robin`` (or ``seq`` / ``rr``) → the kind; None otherwise."""
    return _ALIASES.get(text.strip())


@dataclass
class Derivation:
    """The outcome of :func:`derive`.  ``expr`` is None when there is no closed form (``reason``
    says why).  ``q`` is the name of the ranks-per-node variable; ``conditions`` (a bool IR
    expression over the parameters and ``q``) is where ``expr`` equals the schedule."""
    kind: str
    q: str = "Q"
    expr: Optional[ir.Expr] = None
    conditions: ir.Expr = _ONE
    condition_text: list = field(default_factory=list)
    #: the conditions one by one (IR, untyped), in the order of ``condition_text``
    condition_parts: list = field(default_factory=list)
    reason: str = ""
    patterns: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.expr is not None


class NoClosedForm(Exception):
    """A stage that no pattern recognises (the message says which and why)."""


def _b(op, a, b):
    return ir.Bin(op, a, b)


def _num(v):
    return ir.Num(float(v))
