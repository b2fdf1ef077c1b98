"""What a run measures: its settings and the list of points, in order.

What it does: :class:`Settings` holds the method parameters of a run (size grid, repetition
rule, which benchmarks); :func:`quick_settings` and :func:`full_settings` are the two presets;
:func:`plan_channel` lists the :class:`Point` s one channel needs, and :func:`plan_collectives`
the collective timings.  A point's ``key`` names it uniquely and stably, which is what ``--resume``
matches on; its ``label`` is what messages show (``ring on shm at m=1 KiB, τ=2``).

:data:`FORCED` lists, per MPI family, the variable that forces each library collective's
algorithm and the algorithms forced; :func:`forced_launches` groups them into launches (the
variables are read at MPI_Init, so each forcing needs its own launch) and :func:`forced_in_env`
reads back, inside a rank, which collectives its environment forces.  Forced points are
``impl = "mpi:<algorithm>"``.

What it does not do: run anything, or know MPI beyond these variable names.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Optional

from tlop.runtime.measure.stats import Rule

__all__ = ["FORCED", "FORCED_COMMON", "forced_launches", "forced_in_env", "forced_unusable", "BENCHMARKS", "DEFAULT_BENCHMARKS", "COLLECTIVES", "Settings", "Point", "quick_settings",
           "full_settings", "plan_channel", "plan_collectives", "fmt_bytes", "parse_benchmarks"]

#: every benchmark family ``--bench`` accepts
BENCHMARKS = ("taulop", "postal", "plogp", "loggp", "maxrate", "coll", "cuda", "gamma")
DEFAULT_BENCHMARKS = BENCHMARKS

#: collective timings: (name, implementation) — ``mpi`` is the library's own collective,
#: ``p2p`` the project's mpi4py point-to-point version of the stdlib algorithm
COLLECTIVES = (
    ("bcast", "mpi"), ("scatter", "mpi"), ("allgather", "mpi"), ("alltoall", "mpi"),
    ("binomial_bcast", "p2p"), ("flat_bcast", "p2p"), ("chain_bcast", "p2p"),
    ("segmented_chain_bcast", "p2p"), ("binomial_scatter", "p2p"), ("rd_allgather", "p2p"),
    ("ring_allgather", "p2p"), ("pairwise_alltoall", "p2p"),
)


#: per MPI family: library collective → (variable, algorithms forced, value of each algorithm).
#: MPICH (checked against ``mpivars`` of MPICH 5.0.2): the MPIR-level ``*_INTRA_ALGORITHM`` CVARs;
#: Open MPI: the ``coll_tuned`` dynamic-rules MCA parameters (algorithm numbers of Open MPI 4/5).
FORCED = {
    "mpich": {
        "bcast": ("MPIR_CVAR_BCAST_INTRA_ALGORITHM",
                  ("binomial", "scatter_recursive_doubling_allgather", "scatter_ring_allgather")),
        "scatter": ("MPIR_CVAR_SCATTER_INTRA_ALGORITHM", ("binomial",)),
        "allgather": ("MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM", ("brucks", "recursive_doubling", "ring")),
        "alltoall": ("MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM", ("brucks", "pairwise", "scattered")),
    },
    "openmpi": {
        "bcast": ("OMPI_MCA_coll_tuned_bcast_algorithm",
                  ("binomial", "scatter_allgather", "scatter_allgather_ring")),
        "scatter": ("OMPI_MCA_coll_tuned_scatter_algorithm", ("binomial",)),
        "allgather": ("OMPI_MCA_coll_tuned_allgather_algorithm", ("bruck", "recursive_doubling", "ring")),
        "alltoall": ("OMPI_MCA_coll_tuned_alltoall_algorithm", ("modified_bruck", "pairwise", "linear")),
    },
}
#: the value an algorithm name is given as (MPICH takes the name, Open MPI a number)
_VALUES = {"openmpi": {"bcast": {"binomial": "6", "scatter_allgather": "8", "scatter_allgather_ring": "9"},
                       "scatter": {"binomial": "2"},
                       "allgather": {"bruck": "2", "recursive_doubling": "3", "ring": "4"},
                       "alltoall": {"linear": "1", "pairwise": "2", "modified_bruck": "3"}}}
#: set in every forced launch: MPICH lets the device (CH4) override the MPIR algorithm unless
#: told not to, and silently falls back to its own choice when the forced one cannot run
#: (``error`` makes that a failure the worker records as a skip); Open MPI reads the
#: per-collective parameters only with dynamic rules on
FORCED_COMMON = {
    "mpich": {"MPIR_CVAR_DEVICE_COLLECTIVES": "none", "MPIR_CVAR_COLLECTIVE_FALLBACK": "error"},
    "openmpi": {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1", "OMPI_MCA_coll_tuned_priority": "100"},
}


#: forced algorithms that only run on a power-of-two number of ranks (MPICH refuses the forcing
#: already inside MPI_Init otherwise, since its own start-up calls MPI_Allgather)
NEEDS_POW2 = {("allgather", "recursive_doubling")}


def forced_unusable(coll: str, alg: str, nprocs: int) -> Optional[str]:
    """Why the forced algorithm ``alg`` of ``coll`` cannot run on ``nprocs`` ranks, or None."""
    if (coll, alg) in NEEDS_POW2 and nprocs & (nprocs - 1):
        return f"{coll} {alg} needs P a power of two"
    return None


def _value(family: str, coll: str, alg: str) -> str:
    return _VALUES.get(family, {}).get(coll, {}).get(alg, alg)


def forced_launches(family: str, nprocs: int = 2) -> list:
    """The launches that force the library's algorithms on ``nprocs`` ranks: a list of
    environments.  Launch k forces the k-th algorithm of every collective that has one (each
    collective has its own variable, so one launch can force bcast, scatter, allgather and
    all-to-all at once); algorithms :func:`forced_unusable` on ``nprocs`` ranks are left out."""
    table = FORCED.get(family)
    if not table:
        return []
    n = max(len(algs) for _, algs in table.values())
    out = []
    for k in range(n):
        env = dict(FORCED_COMMON[family])
        for coll, (var, algs) in table.items():
            if k < len(algs) and not forced_unusable(coll, algs[k], nprocs):
                env[var] = _value(family, coll, algs[k])
        if len(env) > len(FORCED_COMMON[family]):
            out.append(env)
    return out


def forced_in_env(environ) -> dict:
    """collective → {"algorithm", "variable", "value"} for every collective whose algorithm
    ``environ`` forces (any family; an unknown value is reported by its value)."""
    out = {}
    for family, table in FORCED.items():
        common = FORCED_COMMON[family]
        if family == "openmpi" and environ.get("OMPI_MCA_coll_tuned_use_dynamic_rules") != "1":
            continue
        for coll, (var, algs) in table.items():
            v = environ.get(var)
            if v is None or v in ("", "0", "auto", "ignore"):
                continue
            names = {_value(family, coll, a): a for a in algs}
            inv = {val: name for name, val in _VALUES.get(family, {}).get(coll, {}).items()}
            name = names.get(v) or inv.get(v) or v
            out[coll] = {"algorithm": name, "variable": var, "value": v,
                         "with": {k: environ[k] for k in common if k in environ}}
    return out


def fmt_bytes(m: int) -> str:
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if m >= size and m % size == 0:
            return f"{m // size} {unit}"
    return f"{m} B"


def parse_benchmarks(text: str) -> tuple:
    names = tuple(x.strip() for x in text.split(",") if x.strip())
    bad = [x for x in names if x not in BENCHMARKS]
    if bad or not names:
        from tlop.runtime.diagnostics import TlopError
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
    if "gamma" in b and channel == "shm":  # a processor's rate: once, in the shared-memory launch
        from tlop.runtime.measure.bench_gamma import OPS

        pts += [_pt("gamma", channel, op=op, m=m) for op in OPS for m in settings.sizes]
    return pts


def plan_collectives(channel: str, settings: Settings, nprocs: int, forced: Optional[dict] = None,
                     only_forced: bool = False) -> list:
    """Collective timings at P = ``nprocs`` for every algorithm of :data:`COLLECTIVES`.
    ``forced`` (collective → algorithm name, e.g. from :func:`forced_in_env`) says which library
    collectives run a forced algorithm in this launch: those points are ``impl = "mpi:<name>"``;
    with ``only_forced`` nothing else is planned (the launches that exist to force them)."""
    if "coll" not in settings.benchmarks or nprocs < 2:
        return []
    forced = forced or {}
    out = []
    for alg, impl in COLLECTIVES:
        if impl == "mpi" and alg in forced:
            impl = f"mpi:{forced[alg]}"
        elif only_forced:
            continue
        out += [_pt("coll", channel, alg=alg, impl=impl, P=nprocs, m=m) for m in settings.coll_sizes]
    return out
