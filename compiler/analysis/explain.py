"""``tlop explain``: the derivation of a simplified cost, step by step.

What it does: runs the simplifier on an algorithm's cost and renders every rule application —
which rule fired, on which subterm, and what it gave — in the papers' notation, followed by the
result, the model assumptions the derivation relied on, and which of them the result rests on
(A2 and A3 define ``‖`` in every engine; linearity and A1 are assumptions about the tables, see
:data:`tlop.analysis.rules.catalogue.ASSUMPTIONS`).

What it does not do: prove the steps (each rule is proved once by ``tlop rules --verify``; the
whole derivation by ``--verify`` translation validation).
"""

from __future__ import annotations

from tlop import ir
from tlop.backends.notation import format_text, format_latex
from tlop.analysis.rules.catalogue import ASSUMPTIONS, rules_by_name, table_assumptions
from tlop.analysis.simplify import SimplifyResult

__all__ = ["derivation_lines"]


def derivation_lines(result: SimplifyResult, program: ir.Program, latex: bool = False) -> list:
    """The lines ``tlop explain`` prints for one simplification."""
    fmt = format_latex if latex else format_text
    rules = rules_by_name()
    lines = ["  " + fmt(result.original, program)]
    for n, s in enumerate(result.steps, 1):
        r = rules.get(s.rule)
        tag = f"{s.rule}" + (f" [{r.kind}: {', '.join(r.axioms)}]" if r is not None and r.kind == "model" else "")
        lines.append(f"{n:3}. {tag}")
        lines.append(f"       {fmt(s.before, program)}")
        lines.append(f"     ⇒ {fmt(s.after, program)}")
    lines.append("  = " + fmt(result.expr, program))
    used = sorted({a for s in result.steps for a in (rules[s.rule].axioms if s.rule in rules else ())})
    lines.append("model assumptions used: " + (", ".join(used) if used else "none"))
    rests = table_assumptions(used)
    lines.append("the result equals the original cost on every profile" if not rests else
                 "the result equals the original cost only on tables satisfying "
                 + ", ".join(f"{n} ({ASSUMPTIONS[n].short})" for n in rests))
    lines.append(f"terms: {ir.node_count(result.original)} → {ir.node_count(result.expr)}")
    return lines
