"""A τ-Lop schedule at one point as a plan that MPI ranks can execute.

What it does: :func:`execution_plan` evaluates a schedule at one point with the reference
interpreter (through :func:`tlop.analysis.stages.explain_stages`, so every send is the one the
cost model priced) and lists, stage by stage and phase by phase, who sends how many bytes to
whom and which rank combines how many bytes.  The result, :class:`ExecPlan`, is plain data
(JSON round trip: :meth:`ExecPlan.as_json`, :meth:`ExecPlan.from_json`) that
:mod:`tlop.runtime.measure.schedrun` executes with mpi4py without loading the compiler; it also
carries the prediction (the interpreter's cost of the same point).  :func:`rank_program` is what
one rank does: per stage and phase, its sends ``(dst, bytes)``, its receives ``(src, bytes)``
(in the schedule's order, so that MPI's non-overtaking rule pairs them) and its reductions.

The execution semantics: the stages run one after another; inside a stage the phases (the
positions of a ``seq``) run in order on every rank; inside a phase a rank starts all its sends
and receives at once (non-blocking) and waits for them, then performs its reductions.  There is
no barrier between stages or phases: a rank waits only for its own transfers, as a real
implementation of the algorithm does.

What it does not do: run MPI (:mod:`tlop.runtime.measure.schedrun`), or know a computation's
size from the model: the evaluator records a computation's *cost* (γ(m)), so a reduction is
given the size of the last message its rank received in that stage up to its phase (every
stdlib reduction combines what it just received), or, when it received none, the algorithm's
``m``.  Weights (``send … weight 2``) change what a transfer costs, not what is sent: each send
is executed once — except the send of a τ-Lop ``exchange a <-> b`` (one transfer of weight 2 in
the cost, marked :attr:`ir.Send.exchange`), which is the sendrecv it stands for: ``a → b`` and
``b → a`` in the same phase, and with ``combine`` both ranks reduce (the cost counts one
reduction, :attr:`ir.Compute.exchange`).  A dataflow model's exchange is two sends already.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tlop.runtime.diagnostics import TlopError

__all__ = ["ExecPlan", "execution_plan", "rank_program", "MAX_PLAN_RANKS"]

#: the most ranks a plan is made for (each is an MPI process on this machine or a cluster)
MAX_PLAN_RANKS = 4096


@dataclass
class ExecPlan:
    """A schedule at one point: ``stages[i]`` is a list of phases, each phase a dict with
    ``sends`` ``[[src, dst, bytes], …]`` and ``reduces`` ``[[rank, bytes], …]``."""
    algorithm: str
    arguments: dict
    mapping: str
    profile: str
    P: int
    predicted: float
    stages: list = field(default_factory=list)

    @property
    def sends(self) -> int:
        return sum(len(ph["sends"]) for st in self.stages for ph in st)

    @property
    def bytes_sent(self) -> int:
        return sum(int(s[2]) for st in self.stages for ph in st for s in ph["sends"])

    def as_json(self) -> dict:
        return {"algorithm": self.algorithm, "arguments": self.arguments, "mapping": self.mapping,
                "profile": self.profile, "P": self.P, "predicted": self.predicted, "stages": self.stages}

    @classmethod
    def from_json(cls, d: dict) -> "ExecPlan":
        return cls(d["algorithm"], dict(d["arguments"]), d["mapping"], d["profile"], int(d["P"]),
                   float(d["predicted"]), [[{"sends": [list(map(int, s)) for s in ph["sends"]],
                                             "reduces": [list(map(int, r)) for r in ph["reduces"]]}
                                            for ph in st] for st in d["stages"]])


def _whole(x: float, what: str, alg: str) -> int:
    if not (x >= 0 and float(x).is_integer()):
        raise TlopError(f"'{alg}' {what} {x:g} bytes at this point; a run needs whole bytes")
    return int(x)


def execution_plan(handle, profile, mapping, values: dict) -> ExecPlan:
    """The plan of algorithm ``handle`` (an :class:`tlop.api.AlgorithmHandle` whose body is a
    schedule over a process mapping) at the point ``values`` (parameter name → command-line
    text or number, e.g. ``{"P": "4", "m": "1KiB"}``) on ``mapping``; the prediction is priced
    on ``profile``."""
    from tlop import ir
    from tlop.analysis.stages import explain_stages
    from tlop.backends.binding import bind_mapping

    alg = handle.ir
    if alg.over is None or not ir.has_schedule(alg.body):
        raise TlopError(f"'{alg.name}' is not a schedule over a process mapping; only schedules (stages of "
                        f"sends) can be run (e.g. taulop/bcast binomial)")
    env = handle.bind({k: str(v) for k, v in values.items()}, strings=True)
    P = int(env["P"]) if "P" in env else None
    if P is None or P < 1 or P > MAX_PLAN_RANKS:
        raise TlopError(f"'{alg.name}': a run needs P between 1 and {MAX_PLAN_RANKS}")
    bound = bind_mapping(alg, env, mapping)
    program = handle.module.program
    shown = {p.name: str(values.get(p.name, env[p.name])) for p in alg.params}
    e = explain_stages(program, alg, profile, mapping, bound, shown, shown)
    m_default = int(env["m"]) if "m" in env and float(env["m"]).is_integer() else 0
    stages = []
    for s in e.stages:
        phases: dict = {}
        partner: dict = {}  # (rank, phase) -> the other rank of the exchange it started there
        for i, (src, dst, size, _w, _ch, ph) in enumerate(s.sends):
            sends = phases.setdefault(ph, {"sends": [], "reduces": []})["sends"]
            sends.append([int(src), int(dst), _whole(size, "sends", alg.name)])
            if i in s.exchanges:  # the sendrecv's other direction
                sends.append([int(dst), int(src), _whole(size, "sends", alg.name)])
                partner[(int(src), int(ph))] = int(dst)
        for k, (rank, _cost, ph) in enumerate(s.computes):
            ranks = [int(rank)]
            if k in s.exchange_computes and (int(rank), int(ph) - 1) in partner:
                ranks.append(partner[(int(rank), int(ph) - 1)])  # both ranks of the pair combine
            for r in ranks:
                got = [x[2] for p in sorted(phases) if p <= ph for x in phases[p]["sends"] if x[1] == r]
                phases.setdefault(ph, {"sends": [], "reduces": []})["reduces"].append(
                    [r, got[-1] if got else m_default])
        stages.append([phases[p] for p in sorted(phases)])
    for st in stages:
        for ph in st:
            for src, dst, _ in ph["sends"]:
                if not (0 <= src < e.P and 0 <= dst < e.P):
                    raise TlopError(f"'{alg.name}' sends from {src} to {dst}, outside ranks 0 … {e.P - 1}")
    return ExecPlan(alg.name, shown, str(mapping), e.profile, e.P, float(e.total), stages)


def rank_program(plan: ExecPlan, rank: int) -> list:
    """What ``rank`` does: a list over stages and phases (flattened, in order) of
    ``(sends, recvs, reduces)`` — ``sends`` ``[(dst, bytes)]``, ``recvs`` ``[(src, bytes)]``,
    ``reduces`` ``[bytes]`` — leaving out the phases in which it does nothing.  A self-send is a
    local copy: it appears as a send to and a receive from itself."""
    out = []
    for st in plan.stages:
        for ph in st:
            sends = [(d, n) for s, d, n in ph["sends"] if s == rank]
            recvs = [(s, n) for s, d, n in ph["sends"] if d == rank]
            reduces = [n for r, n in ph["reduces"] if r == rank]
            if sends or recvs or reduces:
                out.append((sends, recvs, reduces))
    return out
