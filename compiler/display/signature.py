"""A parameter's signature as ``tlop show`` and the Python API print it: ``P: int >= 1``,
``c: channel = shm``.

What it does: renders the declared type, per-rank marker, explicit constraint and default (the
constants evaluated).  What it does not do: print whole algorithms (:mod:`tlop.backends.notation`).
"""

from __future__ import annotations

from tlop.display import format as fmt

__all__ = ["signature", "value_text"]


def value_text(ptype, v, program) -> str:
    return fmt.param_text(ptype, v, program.channels).replace(" ", "")


def signature(p, program) -> str:
    """``P: int >= 1`` / ``c: channel = shm`` for a parameter."""
    from tlop.backends.interp import Interpreter

    out = f"{p.name}: {p.type}" + (f"[{p.per_rank}]" if p.per_rank is not None else "")
    const = Interpreter(program, None)
    if p.constraint is not None and p.constraint_span is not None:  # not the implicit "size >= 0"
        op, bound = p.constraint
        out += f" {op} {value_text(p.type, const.eval(bound, {}), program)}"
    if p.default is not None:
        out += f" = {value_text(p.type, const.eval(p.default, {}), program)}"
    return out
