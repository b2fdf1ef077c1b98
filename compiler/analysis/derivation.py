"""``tlop explain … --derive [--at k=80] [--unit b]``: a schedule's cost derived the way paper 000 writes it.

What it does: from an :class:`tlop.analysis.stages.Explanation` (the evaluator's own record of
every stage), prints per stage

1. the sends, per process: ``Θ_p`` = its sends one after another (``+``, one per phase) and those
   of one phase side by side (``‖``) — 000 eq. 13's ``Θ_i`` and the SUMMA paragraph's
   ``T^0(134) + T^1(158)``;
2. the stage as the parallel composition of the processes (``(…) ‖ (…)``, eq. 14), and, with
   several phases, regrouped in lock step — phase by phase, each phase's transmissions side by
   side (the pattern of eq. 5);
3. the reduction the evaluator did: A2 inside each contention group, A3 (``max``) across groups
   (eq. 8, eq. 9), with its cost;

then, when every phase of every stage has a single contention group (no ``max``), **A1** applied
to the sum of the stages: the terms of one channel and one concurrency gathered into one
transmission of the summed size (eq. 10), priced on the profile as an expression of its own.

``focus(body, var, value)`` gives the term of a ``sum var in …`` at one value (``--at k=80``),
with the ``let`` bindings around it, so that one iteration of a kernel can be explained.

What it does not do: reduce anything (every number of steps 1–3 is the evaluator's; only the A1
expression of the last step is evaluated here, by the interpreter), or gather across a ``max``
(A1 does not apply there; the gathered form is then left out, and says why).
"""

from __future__ import annotations

from tlop import ir
from tlop.runtime.diagnostics import TlopError
from tlop.runtime.units import format_size, format_time

__all__ = ["focus", "derivation_lines", "gathered_terms"]


def focus(body: ir.Expr, var: str, value: float):
    """The term of the ``sum var in …`` in ``body`` at ``var = value``: its body, wrapped in the
    ``let`` bindings that enclose the sum, with ``var`` bound by one more ``let``; None when
    ``body`` has no such sum (outside stages, lets and sums)."""
    def walk(e, lets):
        if isinstance(e, ir.Reduce) and e.kind == "sum" and e.var == var:
            out = ir.Let(((var, ir.Num(float(value))),), e.body)
            for binds in reversed(lets):
                out = ir.Let(binds, out)
            return out
        if isinstance(e, ir.Let):
            return walk(e.body, lets + [e.bindings])
        if isinstance(e, ir.Bin) and e.op in ("+", "*"):
            return walk(e.lhs, lets) or walk(e.rhs, lets)
        if isinstance(e, ir.Reduce):
            return walk(e.body, lets)
        return None

    return walk(body, [])


class _Sizes:
    """Formats sizes: in bytes, or as multiples of a unit (``--unit b``: ``134`` for 134·b)."""

    def __init__(self, unit=None):
        self.unit = unit  # (name, bytes) or None

    def __call__(self, m: float) -> str:
        if self.unit is not None:
            q = m / self.unit[1]
            if abs(q - round(q)) < 1e-9:
                return str(int(round(q)))
        return format_size(m)


def _xmit(tau: float, ch: str, size: str) -> str:
    x = f"{ir.SEND_TRANSMISSION}^{ch}({size})"
    return x if tau == 1 else f"{tau:g}‖{x}"


def _group_notation(g, fmt) -> str:
    return " + ".join(_xmit(t, g.channel, fmt(m)) for t, m, _ in g.terms) or "0"


def _phase_notation(p, fmt) -> str:
    parts = list(dict.fromkeys(_group_notation(g, fmt) for g in p.groups))
    return parts[0] if len(parts) == 1 else "max{" + ", ".join(parts) + "}"


def _paren(text: str, alone: bool) -> str:
    return text if alone or ("+" not in text and "‖" not in text) else f"({text})"


def gathered_terms(e) -> list:
    """A1 over the sum of the stages: ``[(tau, channel, size)]`` with the terms of one channel and
    one concurrency gathered (sizes added), network channels first, then by τ decreasing — the
    order of 000 eq. 10; None when some phase has several groups (a ``max``: A1 does not apply)."""
    acc = {}
    for s in e.stages:
        for p in s.phases:
            if len(p.groups) > 1 or any(g.channel == "compute" for g in p.groups):
                return None
            for g in p.groups:
                for tau, m, _ in g.terms:
                    acc[(tau, g.channel)] = acc.get((tau, g.channel), 0.0) + m
    order = {c: i for i, c in enumerate(e.channels)}
    return [(tau, ch, m) for (tau, ch), m in sorted(acc.items(), key=lambda kv: (-order[kv[0][1]], -kv[0][0]))]


def _price(program, profile, terms) -> float:
    from tlop.backends.interp import Interpreter

    total = None
    for tau, ch, m in terms:
        x = ir.Transmit(ir.SEND_TRANSMISSION, ir.Num(float(program.channels.index(ch))), ir.Num(float(m)))
        term = ir.Conc(ir.Num(float(tau)), x) if tau != 1 else x
        total = term if total is None else ir.Bin("+", total, term)
    if total is None:
        return 0.0
    return float(Interpreter(program, profile).eval(total, {}))


def derivation_lines(e, program, profile, unit=None, at=None) -> list:
    """The text of ``--derive``: per stage the sends per process, their composition, the A2/A3
    reduction; then A1 over the stages.  ``unit``: ``(name, bytes)`` to print sizes as multiples
    of an argument; ``at``: ``(var, value)`` of ``--at``, for the heading."""
    fmt = _Sizes(unit)
    args = ", ".join(f"{k}={v}" for k, v in e.arguments.items())
    where = f" at {at[0]} = {at[1]}" if at is not None else ""
    lines = [f"{e.algorithm}({args}){where} over {e.mapping} on {e.profile}"]
    if unit is not None:
        lines.append(f"sizes in units of {unit[0]} = {format_size(unit[1])}")
    if not e.stages:
        raise TlopError(f"'{e.algorithm}' evaluates no schedule stage at this point: nothing to derive")
    for s in e.stages:
        lines.append(f"stage {s.index}{_stage_vars(s)}:")
        sends = [x for x in s.sends if x[2] > 0]
        empty = len(s.sends) - len(sends)
        by_src = {}
        for src, dst, m, w, ch, ph in sends:
            by_src.setdefault(src, {}).setdefault(ph, []).append(_xmit(w, ch, fmt(m)))
        thetas = {}
        for src in sorted(by_src):
            phases = by_src[src]
            seq = [" ‖ ".join(phases[ph]) for ph in sorted(phases)]
            thetas[src] = " + ".join(_paren(x, len(seq) == 1) for x in seq)
            lines.append(f"  Θ_{src} = {thetas[src]}")
        if empty:
            lines.append(f"  ({empty} send{'s' * (empty != 1)} of 0 bytes left out)")
        if len(thetas) > 1:
            lines.append("  processes together: " + " ‖ ".join(_paren(t, False) for t in thetas.values()))
        if len(s.phases) > 1:
            steps = []
            for p in s.phases:
                xs = [_xmit(w, ch, fmt(m)) for _, _, m, w, ch, ph in sends if ph == p.index]
                steps.append(_paren(" ‖ ".join(xs), len(s.phases) == 1))
            lines.append("  in lock step: " + " + ".join(steps))
        reduced = " + ".join(_phase_notation(p, fmt) for p in s.phases) or "0"
        lines.append(f"  A2, A3: {reduced} = {format_time(s.cost)}")
    total = sum(s.cost for s in e.stages)
    if len(e.stages) > 1:
        summed = " + ".join(" + ".join(_phase_notation(p, fmt) for p in s.phases) for s in e.stages)
        lines.append(f"sum of the stages: {summed} = {format_time(total)}")
    terms = gathered_terms(e)
    if terms is None:
        lines.append("A1 is not applied: a phase has several contention groups (a max)")
    else:
        text = " + ".join(_xmit(t, ch, fmt(m)) for t, ch, m in terms) or "0"
        gathered = _price(program, profile, terms)
        lines.append(f"A1 (terms of one channel and τ gathered): {text} = {format_time(gathered)}")
        if len(terms) < sum(len(g.terms) for s in e.stages for p in s.phases for g in p.groups):
            if gathered <= total:
                lines.append(f"  (A1 drops the overheads of the later transmissions it gathers: "
                             f"{format_time(total)} before it)")
            else:  # on a measured table T(m1) + T(m2) can be less than T(m1 + m2)
                lines.append(f"  (A1 gathers the transmissions into fewer, larger ones; on this measured table "
                             f"that costs more, not less: {format_time(total)} before it)")
    return lines


def _stage_vars(s) -> str:
    return " (" + ", ".join(f"{k} = {v}" for k, v in s.variables.items()) + ")" if s.variables else ""
