"""What may be assumed about an algorithm's parameters: exactly what argument binding enforces.

What it does: :func:`param_facts` turns the parameter signatures of an algorithm into the
integer variables and the facts (IR conditions, true when non-zero) that every accepted call
satisfies.  These are the only facts about parameters the simplifier and the prover may use;
they mirror :func:`tlop.backends.binding.bind_arguments` check by check:

* ``int`` and ``channel`` parameters are integers (binding rejects a fraction);
* a ``channel`` parameter is a channel index: ``0 ≤ c < number of channels``;
* a declared constraint ``P: int >= 1`` holds, and so does the implicit ``>= 0`` the front end
  gives ``bytes`` and ``time`` parameters declared without a constraint (it is
  :attr:`ParamSig.constraint` either way).

Nothing else: an ``int`` may be negative, a ``real`` anything, and a ``bytes`` parameter with a
declared constraint such as ``m: bytes < 64`` has only that constraint (binding accepts
``m = -1`` there).  Facts that hold by construction inside the IR (a reduction index lies
between its bounds, a ``let`` name equals its value) are added by the passes that meet them.

What it does not do: check arguments (binding does), or know facts about profile tables.
"""

from __future__ import annotations

from typing import Optional

from tlop.ir.nodes import Bin, Num, Var

__all__ = ["INTEGER_TYPES", "param_facts"]

#: parameter types whose values binding requires to be integers
INTEGER_TYPES = ("int", "channel")


def param_facts(params, program=None) -> tuple:
    """``(integer variable names, facts)`` for parameter signatures ``params`` (ParamSig);
    ``program`` gives the number of channels for channel parameters."""
    ints, facts = set(), []
    for p in params:
        if p.type in INTEGER_TYPES:
            ints.add(p.name)
        if p.type == "channel":
            facts.append(Bin(">=", Var(p.name), Num(0)))
            n: Optional[int] = len(program.channels) if program is not None else None
            if n is not None:
                facts.append(Bin("<", Var(p.name), Num(n)))
        if p.constraint is not None:
            op, bound = p.constraint
            facts.append(Bin(op, Var(p.name), bound))
    return frozenset(ints), tuple(facts)
