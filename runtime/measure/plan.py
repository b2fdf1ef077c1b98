"""What a run measures: its settings and the list of points, in order.

What it does: :class:`Settings` holds the method parameters of a run (size grid, repetition
rule, which benchmarks); :func:`quick_settings` and :func:`full_settings` are the two presets;
:func:`plan_channel` lists the :class:`Point` s one channel needs, and :func:`plan_collectives`
the collective timings.  A point's ``key`` names it uniquely and stably, which is what ``--resume``
matches on; its ``label`` is what messages show (``ring on shm at m=1 KiB, τ=2``).

What it does not do: run anything, or know MPI.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Optional

from .stats import Rule

__all__ = ["BENCHMARKS", "DEFAULT_BENCHMARKS", "COLLECTIVES", "Settings", "Point", "quick_settings",
           "full_settings", "plan_channel", "plan_collectives", "fmt_bytes", "parse_benchmarks"]

#: every benchmark family ``--bench`` accepts
BENCHMARKS = ("taulop", "postal", "plogp", "loggp", "maxrate", "coll", "cuda")
DEFAULT_BENCHMARKS = BENCHMARKS

#: collective timings: (name, implementation) — ``mpi`` is the library's own collective,
#: ``p2p`` the project's mpi4py point-to-point version of the stdlib algorithm
COLLECTIVES = (
    ("bcast", "mpi"), ("scatter", "mpi"), ("allgather", "mpi"), ("alltoall", "mpi"),
    ("binomial_bcast", "p2p"), ("flat_bcast", "p2p"), ("chain_bcast", "p2p"),
    ("segmented_chain_bcast", "p2p"), ("binomial_scatter", "p2p"), ("rd_allgather", "p2p"),
    ("ring_allgather", "p2p"), ("pairwise_alltoall", "p2p"),
)


def fmt_bytes(m: int) -> str:
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if m >= size and m % size == 0:
            return f"{m // size} {unit}"
    return f"{m} B"


def parse_benchmarks(text: str) -> tuple:
    names = tuple(x.strip() for x in text.split(",") if x.strip())
    bad = [x for x in names if x not in BENCHMARKS]
    if bad or not names:
        from tlop.diagnostics import TlopError
        raise TlopError(f"--bench {text!r}: unknown benchmark {', '.join(bad) or '(none)'}; "
                        f"choose from {', '.join(BENCHMARKS)}")
    return names


@dataclass(frozen=True)
class Settings:
    """Method parameters of one run (recorded in the profile's metadata)."""
    preset: str
    sizes: tuple                     # the m grid of o, L, postal, pLogP (bytes, increasing)
    rule: Rule
    benchmarks: tuple = DEFAULT_BENCHMARKS
    loggp_sizes: tuple = (1, 1024, 16384, 65536)
    loggp_n: int = 8                 # messages per PRTT(n, ·, s) train
    plogp_g_n: int = 8               # messages per g(m) burst
    coll_sizes: tuple = (1024, 65536)
    coll_segment: int = 8192         # segment size of the segmented chain broadcast
    maxrate_size: int = 1 << 18
    maxrate_msgs: int = 8
    tau_max: Optional[int] = None    # cap on τ (None: every rank of a node)
    point_timeout: float = 60.0      # a point that does not finish within this many seconds fails

    def as_dict(self) -> dict:
        return {"preset": self.preset, "sizes": list(self.sizes), "rule": self.rule.as_dict(),
                "benchmarks": list(self.benchmarks), "loggp_sizes": list(self.loggp_sizes),
                "loggp_n": self.loggp_n, "plogp_g_n": self.plogp_g_n,
                "coll_sizes": list(self.coll_sizes), "coll_segment": self.coll_segment,
                "maxrate_size": self.maxrate_size, "maxrate_msgs": self.maxrate_msgs,
                "tau_max": self.tau_max, "point_timeout_s": self.point_timeout}

    def with_(self, **kw) -> "Settings":
        return replace(self, **kw)


def quick_settings() -> Settings:
    """Cheap enough for a 2-core laptop in well under 3 minutes: 12 sizes 1 B .. 4 MiB (×4),
    CI within ±3 %, at most 0.5 s per point."""
    return Settings("quick", tuple(4 ** i for i in range(12)),
                    Rule(eps=0.03, cl=0.95, min_n=20, max_n=1000, time_cap=0.5, warmup=5),
                    loggp_sizes=(1, 4096, 65536), coll_sizes=(4096, 262144), maxrate_msgs=4,
                    point_timeout=30.0)


def full_settings() -> Settings:
    """The default: 23 sizes 1 B .. 4 MiB (×2), 2 % CI at 95 %, up to 2 s per point."""
    return Settings("full", tuple(2 ** i for i in range(23)),
                    Rule(eps=0.02, cl=0.95, min_n=30, max_n=5000, time_cap=2.0, warmup=10),
                    loggp_sizes=(1, 1024, 16384, 65536, 262144),
                    coll_sizes=(1024, 65536, 1 << 20))


@dataclass(frozen=True)
class Point:
    """One thing to measure: benchmark ``bench`` on channel ``channel`` with ``params``."""
    bench: str
    channel: str
    params: tuple = field(default=())       # sorted (name, value) pairs

    @property
    def p(self) -> dict:
        return dict(self.params)

    @property
    def key(self) -> str:
        return "/".join([self.channel, self.bench] + [f"{k}={v}" for k, v in self.params])

    @property
    def label(self) -> str:
        parts = []
        for k, v in self.params:
            if k in ("m", "s"):
                parts.append(f"{k}={fmt_bytes(int(v))}")
            elif k == "tau":
                parts.append(f"τ={v}")
            else:
                parts.append(f"{k}={v}")
        where = f" at {', '.join(parts)}" if parts else ""
        return f"{self.bench} on {self.channel}{where}"


def _pt(bench: str, channel: str, **params) -> Point:
    return Point(bench, channel, tuple(sorted(params.items())))


def plan_channel(channel: str, settings: Settings, tau_max: int, n_pairs: int = 1) -> list:
    """The points of one channel, in the order they run.  ``tau_max`` is the largest ring
    (ranks per node, or all ranks under a forced network); ``n_pairs`` the most concurrent
    pairs the max-rate benchmark can use."""
    b = set(settings.benchmarks)
    if settings.tau_max is not None:
        tau_max = min(tau_max, settings.tau_max)
    pts = []
    if b & {"taulop", "postal", "plogp"}:
        pts.append(_pt("o_eager", channel))          # RTT(0)/2: eager overhead, pLogP RTT(0)
    if "taulop" in b:
        pts.append(_pt("o_rdv", channel))            # 0-byte synchronous send
    if b & {"taulop", "postal"}:
        pts += [_pt("pingpong", channel, m=m) for m in settings.sizes]
    if "taulop" in b:
        pts += [_pt("ring", channel, m=m, tau=t) for t in range(2, tau_max + 1) for m in settings.sizes]
    if "plogp" in b:
        for bench in ("plogp_os", "plogp_or", "plogp_g"):
            pts += [_pt(bench, channel, m=m) for m in settings.sizes]
    if "loggp" in b:
        for s in settings.loggp_sizes:
            pts += [_pt("prtt", channel, s=s, n=1, d=0), _pt("prtt", channel, s=s, n=settings.loggp_n, d=0),
                    _pt("prtt", channel, s=s, n=settings.loggp_n, d=1)]
    if "maxrate" in b:
        pts += [_pt("maxrate", channel, pairs=k) for k in range(1, max(1, n_pairs) + 1)]
    return pts


def plan_collectives(channel: str, settings: Settings, nprocs: int) -> list:
    """Collective timings at P = ``nprocs`` for every algorithm of :data:`COLLECTIVES`."""
    if "coll" not in settings.benchmarks or nprocs < 2:
        return []
    return [_pt("coll", channel, alg=alg, impl=impl, P=nprocs, m=m)
            for alg, impl in COLLECTIVES for m in settings.coll_sizes]
