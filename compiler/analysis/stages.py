"""``tlop explain ALG NAME=VALUE… --mapping …``: a schedule explained stage by stage.

What it does: evaluates an algorithm at one point with the reference interpreter, recording
every schedule stage it evaluates (:class:`tlop.backends.schedule.StageDetail`: the reduction's
own groups, terms and costs), and turns the records into an :class:`Explanation` — per stage and
phase, the contention groups (channel, the node their contention key names, the sends with their
sizes and weights, τ), each group's A2 sum in the papers' notation (``4‖T^shm(1KiB)``), the
phase's A3 maximum (``max{4‖T^shm(1KiB), T^net(1KiB)}``, 000 eq. 8–9), each cost, and the total.
:func:`explanation_lines` renders it as text (consecutive stages that are the same apart from
their stage variable are printed once), :func:`explanation_json` as JSON-ready data; the picture
is :mod:`tlop.cli.plot_stages`.

What it does not do: reduce anything itself (every number comes from the evaluator's record; the
notation is built from the recorded increments and weights), explain the simplifier's derivation
(:mod:`tlop.analysis.explain`), or explain array arguments (one point at a time).  Every stage is
enumerated, even the identical stages of a ``sum`` the interpreter otherwise evaluates once and
each repetition of ``k * stage {…}`` (:func:`unfold_repeats`; the recorded stages must cost what
the algorithm costs, checked), so the explanation has a size limit
(:data:`MAX_EXPLAINED_ELEMENTS`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tlop import ir
from tlop.ir.taulop import KEYS, key_of, schedule_channels
from tlop.runtime.diagnostics import TlopError
from tlop.runtime.units import format_size, format_time

__all__ = ["Explanation", "StageView", "PhaseView", "GroupView", "explain_stages", "explanation_lines",
           "explanation_json", "MAX_EXPLAINED_ELEMENTS", "unfold_repeats"]

#: the most sends and computations (over all stages) one explanation records
MAX_EXPLAINED_ELEMENTS = 200_000


@dataclass
class GroupView:
    """One contention group of a phase (or one computation)."""
    channel: str          # the channel's name, or "compute"
    contention: str       # the channel's contention key (node, dst_node, src_node, either), or "rank"
    key: int              # the node the key names (the rank for a computation)
    label: str            # e.g. "shm node 0", "net → node 1"
    members: list         # sends: (src, dst, size, weight); a computation: (rank, cost)
    tau: float            # the concurrency of the group's first increment: its weights × the factor
    terms: list           # (tau, increment size, seconds) of each non-zero A2 term, in order
    cost: float
    notation: str


@dataclass
class PhaseView:
    index: int
    groups: list
    cost: float
    notation: str


@dataclass
class StageView:
    index: int            # 1, 2, … in evaluation order
    variables: dict       # the enclosing stage variables' values, e.g. {"s": 2}
    sends: list           # (src, dst, size, weight, channel name, phase)
    computes: list        # (rank, cost, phase)
    phases: list
    cost: float
    notation: str
    exchanges: frozenset = frozenset()   # indices of the sends (and, below, computations) an
    exchange_computes: frozenset = frozenset()  # ``exchange`` item made (both ways; both combine)


@dataclass
class Explanation:
    algorithm: str
    arguments: dict       # parameter name -> value as printed
    values: dict          # parameter name -> value (a number, or a channel's name)
    mapping: str
    profile: str
    P: int
    node_of: list         # node of each rank 0 … P−1
    channels: tuple
    stages: list = field(default_factory=list)
    total: float = 0.0    # the algorithm's cost at the point (the interpreter's value)

    @property
    def stages_total(self) -> float:
        return float(sum(s.cost for s in self.stages))

    @property
    def nodes(self) -> list:
        return sorted(set(self.node_of))


def _stage_variables(body: ir.Expr) -> dict:
    """id(Stage) -> the variables of the reductions (``stages``/``sum``) enclosing it."""
    out = {}

    def walk(e, scope):
        if isinstance(e, ir.Stage):
            out[id(e)] = scope
            return
        if isinstance(e, ir.Reduce):
            for k in ir.children(e):
                walk(k, scope + (e.var,) if k is e.body else scope)
            return
        for k in ir.children(e):
            walk(k, scope)

    walk(body, ())
    return out


def _num(v: float) -> str:
    return f"{v:g}"


def _xmit(tau: float, ch: str, size: float) -> str:
    x = f"{ir.SEND_TRANSMISSION}^{ch}({format_size(size)})"
    return x if tau == 1 else f"{_num(tau)}‖{x}"


def _group_label(ch: str, rule: str, within: bool, key: int) -> str:
    if rule == "rank":
        return f"compute on rank {key}"
    return KEYS[rule].label(ch, within, key)  # the contention key's own label


def _max(parts: list) -> str:
    parts = list(dict.fromkeys(parts))  # identical groups (one per node) are one term of the max
    return parts[0] if len(parts) == 1 else "max{" + ", ".join(parts) + "}"


class _Recorder:
    def __init__(self):
        self.details = []
        self.elements = 0

    def __call__(self, d):
        self.elements += len(d.send_src) + len(d.comp_rank)
        if self.elements > MAX_EXPLAINED_ELEMENTS:
            raise TlopError(f"the schedule has more than {MAX_EXPLAINED_ELEMENTS:,} sends and computations at this "
                            f"point, more than tlop explains; try a smaller P")
        self.details.append(d)


def _rule(program, ch: str) -> tuple:
    """(the contention key's name, whether ``ch`` is the channel within nodes)."""
    return key_of(program, ch).name, ch in schedule_channels(program)[0]


def _stage_view(index, d, program, scope) -> StageView:
    chans = d.channels
    nsend = len(d.send_src)
    sends = [(int(s), int(t), float(m), float(w), chans[int(c)], int(p)) for s, t, m, w, c, p in
             zip(d.send_src, d.send_dst, d.send_size, d.send_weight, d.send_channel, d.send_phase)]
    computes = [(int(r), float(c), int(p)) for r, c, p in zip(d.comp_rank, d.comp_cost, d.comp_phase)]
    n = len(d.size)
    ends = list(d.group_start[1:]) + [n]
    groups = []
    for g, (a, b) in enumerate(zip(d.group_start, ends)):
        a, b = int(a), int(b)
        c = int(d.channel[a])
        if c < 0:
            k = int(d.element[a]) - nsend
            members = [(int(d.comp_rank[k]), float(d.comp_cost[k]))]
            cost = float(d.group_cost[g])
            groups.append(GroupView("compute", "rank", int(d.key[a]), _group_label("compute", "rank", False, int(d.key[a])),
                                    members, 1.0, [(1.0, 0.0, cost)], cost, format_time(cost)))
            continue
        ch = chans[c]
        rule, within = _rule(program, ch)
        members = [(int(d.send_src[e]), int(d.send_dst[e]), float(d.send_size[e]), float(d.send_weight[e]))
                   for e in d.element[a:b]]
        terms = []
        for j in range(a, b):
            inc = float(d.size[j] - d.prev[j])
            if inc > 0 or d.term[j] != 0:
                terms.append((float(d.carried[j]) * d.conc, inc, float(d.term[j])))
        notation = " + ".join(_xmit(t, ch, m) for t, m, _ in terms) or "0"
        groups.append(GroupView(ch, rule, int(d.key[a]), _group_label(ch, rule, within, int(d.key[a])), members,
                                float(d.carried[a]) * d.conc, terms, float(d.group_cost[g]), notation))
    phases = []
    pends = list(d.phase_start[1:]) + [len(groups)]
    for p, (a, b) in enumerate(zip(d.phase_start, pends)):
        gs = groups[int(a):int(b)]
        phases.append(PhaseView(int(d.phase[int(d.group_start[int(a)])]), gs, float(d.phase_cost[p]),
                                _max([g.notation for g in gs])))
    notation = " + ".join(p.notation for p in phases) or "0"
    variables = {v: d.env[v] for v in scope if v in d.env}
    marked = (lambda a: frozenset() if a is None else frozenset(int(i) for i in np.flatnonzero(a)))
    return StageView(index, {k: (int(v) if float(v).is_integer() else float(v)) for k, v in variables.items()},
                     sends, computes, phases, d.cost, notation, marked(d.send_exchange), marked(d.comp_exchange))


#: the index of the sum a repeated stage is unfolded into (a name no source can write)
_REPEAT = "%repeat"


def unfold_repeats(e: ir.Expr) -> ir.Expr:
    """``e`` with every product ``k * S`` (or ``S * k``) whose one factor ``S`` holds a stage
    written as ``sum %repeat in 1 .. k: S`` — the same cost for a whole ``k`` — so that an
    evaluation with a stage recorder records each repetition (the interpreter evaluates a product
    once and multiplies)."""
    if not ir.has_schedule(e):
        return e
    if isinstance(e, ir.Bin) and e.op == "*":
        left, right = ir.has_schedule(e.lhs), ir.has_schedule(e.rhs)
        if left != right:
            k, body = (e.rhs, e.lhs) if left else (e.lhs, e.rhs)
            return ir.Reduce("sum", _REPEAT, ir.Num(1.0), k, unfold_repeats(body), span=e.span)
    kids = ir.children(e)
    new = tuple(unfold_repeats(k) for k in kids)
    return e if all(a is b for a, b in zip(kids, new)) else ir.rebuild(e, new)


def explain_stages(program: ir.Program, alg: ir.Algorithm, profile, mapping, env: dict, arguments: dict,
                   values: dict) -> Explanation:
    """Evaluate ``alg`` at ``env`` (bound arguments, the mapping's ``%P`` included) and explain its
    schedule stages.  ``arguments``: the parameters as they should be printed; ``values``: as
    numbers (channels by name), for JSON."""
    from tlop.backends.interp import Interpreter

    rec = _Recorder()
    interp = Interpreter(program, profile, mapping, stage_recorder=rec)
    if getattr(interp, "dataflow", False):
        raise TlopError(f"'{alg.name}' is a schedule in the {program.model} model, where it means a dataflow program "
                        f"(each send starts when its data has arrived), not stages of contention groups; tlop explain "
                        f"shows stages for τ-Lop schedules (e.g. taulop/bcast binomial)")
    # a repeated stage (``k * stage {…}``) is recorded k times: every stage that is priced is
    # explained (and run by a plan); the recorded evaluation must price exactly the same cost
    total = float(Interpreter(program, profile, mapping).eval(alg.body, env))
    recorded = float(interp.eval(unfold_repeats(alg.body), env))
    if not (recorded == total or abs(recorded - total) <= 1e-9 * max(abs(total), abs(recorded))):
        raise TlopError(f"'{alg.name}': its stages cannot be listed one by one at this point (a stage repeated a "
                        f"number of times that is not a whole number?): listed they cost {recorded:.6g} s, "
                        f"the algorithm {total:.6g} s")
    P = int(env[ir.RANKS])
    scopes = _stage_variables(alg.body)
    stages = [_stage_view(i, d, program, scopes.get(id(d.stage), ())) for i, d in enumerate(rec.details, 1)]
    node_of = [int(v) for v in np.asarray(mapping.node_of(np.arange(P), P)).tolist()]
    return Explanation(alg.name, arguments, values, str(mapping), getattr(profile, "name", str(profile)), P, node_of,
                       tuple(program.channels), stages, total)


# ----------------------------------------------------------------------------- text

def _ranges(xs: list) -> str:
    """``0–3, 8`` for runs of consecutive numbers; ``0, 8, …, 56`` for a longer stride."""
    if len(xs) > 3 and xs[1] - xs[0] > 1 and all(b - a == xs[1] - xs[0] for a, b in zip(xs, xs[1:])):
        return f"{xs[0]}, {xs[1]}, …, {xs[-1]}"
    out, start, prev = [], None, None
    for x in xs:
        if start is None:
            start = prev = x
        elif x == prev + 1:
            prev = x
        else:
            out.append(f"{start}" if start == prev else f"{start}–{prev}")
            start = prev = x
    if start is not None:
        out.append(f"{start}" if start == prev else f"{start}–{prev}")
    return ", ".join(out)


def _node_summary(e: Explanation) -> str:
    by = {}
    for r, nd in enumerate(e.node_of):
        by.setdefault(nd, []).append(r)
    shown = [f"node {nd}: ranks {_ranges(rs)}" for nd, rs in sorted(by.items())[:8]]
    more = f"; … ({len(by) - 8} more)" if len(by) > 8 else ""
    return f"{len(by)} node{'s' * (len(by) != 1)} ({'; '.join(shown)}{more})"


def _count(n: float, what: str) -> str:
    return f"{_num(n)} {what}{'s' if n != 1 else ''}"


def _members_text(g: GroupView) -> str:
    if g.channel == "compute":
        return f"cost {format_time(g.members[0][1])}"
    sizes: dict = {}
    for _, _, m, w in g.members:
        sizes.setdefault((m, w), 0)
        sizes[(m, w)] += 1
    parts = []
    for (m, w), k in sizes.items():
        parts.append(f"{_count(k, 'transfer')} of {format_size(m)}" + (f" (weight {_num(w)})" if w != 1 else ""))
    pairs = [f"{s}→{t}" for s, t, _, _ in g.members]
    shown = ", ".join(pairs[:6]) + (", …" if len(pairs) > 6 else "")
    return f"{', '.join(parts)} [{shown}]"


def _group_line(g: GroupView) -> str:
    if g.channel == "compute":
        return f"{g.label}: {_members_text(g)}"
    return f"{g.label}: {_members_text(g)} (τ={_num(g.tau)} → {g.notation} = {format_time(g.cost)})"


#: more groups alike than this in a row are printed as one line
_RUN = 4


def _alike(g: GroupView) -> tuple:
    sizes = tuple(sorted({(m, w) for *_, m, w in g.members})) if g.channel != "compute" else ()
    return (g.channel, g.contention, len(g.members), sizes, g.tau, g.notation, g.cost)


def _group_lines(groups: list) -> list:
    """One line per group; a run of more than :data:`_RUN` alike groups (same channel, members'
    sizes, τ and cost: one per node, typically) is one line."""
    out, i = [], 0
    while i < len(groups):
        j = i + 1
        while j < len(groups) and _alike(groups[j]) == _alike(groups[i]):
            j += 1
        if j - i > _RUN:
            g = groups[i]
            keys = _ranges([x.key for x in groups[i:j]])
            what = "ranks" if g.channel == "compute" else "nodes"
            text = _group_line(g).split(": ", 1)[1]
            text = text.split(" [", 1)[0] + (" (" + text.split(" (", 1)[1] if " (τ=" in text else "")
            out.append(f"{g.channel} {what} {keys} ({j - i} groups, {g.contention}), each: {text}")
        else:
            out.extend(_group_line(g) for g in groups[i:j])
        i = j
    return out


def _stage_body(s: StageView) -> list:
    lines = []
    multi = len(s.phases) > 1
    for p in s.phases:
        ind = "    " if multi else "  "
        if multi:
            lines.append(f"  phase {p.index + 1}: {p.notation} = {format_time(p.cost)}")
        lines.extend(ind + line for line in _group_lines(p.groups))
    return lines


def _what(s: StageView) -> str:
    parts = []
    if s.sends:
        parts.append(_count(len(s.sends), "send"))
    if s.computes:
        parts.append(_count(len(s.computes), "computation"))
    if len(s.phases) > 1:
        parts.append(f"{len(s.phases)} phases")
    return ", ".join(parts) or "nothing"


def _vars(vs: list) -> str:
    """The stage variables of consecutive stages: ``s = 2`` or ``k = 0 … 14``."""
    if not vs or not vs[0]:
        return ""
    out = []
    for name in vs[0]:
        vals = [v.get(name) for v in vs]
        out.append(f"{name} = {vals[0]}" if len(set(vals)) == 1 else f"{name} = {vals[0]} … {vals[-1]}")
    return " (" + ", ".join(out) + ")"


def explanation_lines(e: Explanation) -> list:
    """The text ``tlop explain`` prints for a schedule at a point."""
    args = ", ".join(f"{k}={v}" for k, v in e.arguments.items())
    lines = [f"{e.algorithm}({args}) over {e.mapping} on {e.profile}: P = {e.P}, {_node_summary(e)}"]
    i = 0
    while i < len(e.stages):
        s = e.stages[i]
        body = _stage_body(s)
        j = i + 1
        while (j < len(e.stages) and _stage_body(e.stages[j]) == body and e.stages[j].notation == s.notation
               and e.stages[j].cost == s.cost and _what(e.stages[j]) == _what(s)):
            j += 1
        run = e.stages[i:j]
        if len(run) == 1:
            lines.append(f"stage {s.index}{_vars([s.variables])}: {_what(s)}")
        else:
            lines.append(f"stages {s.index}–{run[-1].index}{_vars([r.variables for r in run])}, each: {_what(s)}")
        lines.extend(body)
        cost = f"  cost: {s.notation} = {format_time(s.cost)}"
        if len(run) > 1:
            cost += f"; {len(run)} × {format_time(s.cost)} = {format_time(s.cost * len(run))}"
        lines.append(cost)
        i = j
    n = len(e.stages)
    lines.append(f"total: {format_time(e.total)}")  # full precision: --json
    if not np.isclose(e.stages_total, e.total, rtol=1e-12, atol=0.0):
        lines.append(f"  of which the {_count(n, 'stage')} above: {format_time(e.stages_total)}; the rest of the "
                     f"algorithm's cost: {format_time(e.total - e.stages_total)}")
    else:
        lines.append(f"  = the sum of the {_count(n, 'stage')} above")
    return lines


def explanation_json(e: Explanation) -> dict:
    """The explanation as JSON-ready data (stages, phases, groups, costs)."""
    def group(g: GroupView) -> dict:
        if g.channel == "compute":
            members = [{"rank": r, "seconds": c} for r, c in g.members]
        else:
            members = [{"src": s, "dst": t, "size": m, "weight": w} for s, t, m, w in g.members]
        return {"channel": g.channel, "contention": g.contention, "key": g.key, "label": g.label, "tau": g.tau,
                "members": members, "terms": [{"tau": t, "size": m, "seconds": c} for t, m, c in g.terms],
                "notation": g.notation, "seconds": g.cost}

    return {
        "algorithm": e.algorithm, "arguments": e.values, "mapping": e.mapping, "profile": e.profile,
        "P": e.P, "node_of": e.node_of, "channels": list(e.channels),
        "stages": [{
            "index": s.index, "variables": s.variables, "notation": s.notation, "seconds": s.cost,
            "sends": [{"src": a, "dst": b, "size": m, "weight": w, "channel": c, "phase": p}
                      for a, b, m, w, c, p in s.sends],
            "computations": [{"rank": r, "seconds": c, "phase": p} for r, c, p in s.computes],
            "phases": [{"index": p.index, "notation": p.notation, "seconds": p.cost,
                        "groups": [group(g) for g in p.groups]} for p in s.phases],
        } for s in e.stages],
        "stages_seconds": e.stages_total,
        "seconds": e.total,
    }
