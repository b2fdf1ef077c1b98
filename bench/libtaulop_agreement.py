"""Agreement of the stdlib schedules with libtaulop's predictions, per class of rows.

    python bench/libtaulop_agreement.py CSV [--predictions OUT.csv] [--compat] [--algorithm NAME]

CSV is any file in the format of ``tests/data/taulop-oracle-lusitania.csv`` (columns
``platform,channels,algorithm,P,Q,mapping,m,root,predicted_seconds,M,note``; see
``/work/shared/reference/libtaulop-semantics.md``).  For every row the stdlib can express the
script evaluates the schedule with the reference interpreter:

* algorithm: the library name maps to a stdlib module and algorithm by convention,
  ``bcast_binomial_openmpi`` -> ``taulop/bcast`` ``binomial_openmpi`` (the collective is the text
  before the first ``_``, the variant the rest); :data:`RENAMED` lists the exceptions
  (``gatherv_binomial`` is one linear stage: ``taulop/gather gatherv``).  A row whose module or
  algorithm does not exist is "not expressible" and skipped;
* profile: the bundled profile named by ``platform``, with the model channel ``net`` bound to the
  profile channel ``ib`` (``SHM+IB``) or ``tcp`` (``SHM+TCP``); ``--compat`` reads it as the library
  does (``Profile.with_libtaulop_compat()``: τ clamp, 4 MiB chunks, float32 numbers);
* mapping: ``Sequential`` -> ``sequential(Q)``, ``RoundRobin`` -> ``round_robin(Q)`` (⌈P/Q⌉ nodes,
  which is the library's M = max(1, ⌈P/Q⌉)); ``root`` when the algorithm has that parameter.

It writes the input columns plus ``tlop_seconds`` to ``--predictions`` and prints, per class, how
many rows agree to :data:`REL` relative.  Class "same mathematics" (:func:`classify`): ``SHM+IB``,
every transfer of a stage on one channel (P ≤ Q, or Q = 1), P a power of two, m ≤ 4 MiB, no
``note``, not one of the library's algorithm-level departures the stdlib does not copy
(:data:`DEPARTURES`, libtaulop-semantics.md §9 item 7); and three conditions found by looking at
the schedule and the tables: no transfer larger than the table's last size (a gather's m·2^s can
be, with m ≤ 4 MiB), no contention above the table's last τ column (where the library clamps τ),
and, for groups on several nodes (Q = 1), no size where the library's inverse table leaves
residues (:func:`library_residue`); and, when the file has the column
``predicted_seconds_tie_patch``, the library without its tie residues predicts the same.  Every other row is in the class of its first failing
condition, and each disagreement is attributed (:func:`attribute`) to the first documented cause
that it demonstrates: re-evaluated with the library's τ clamp, its 4 MiB chunks, both, or its
float32 tables (the one that agrees names the cause); the library re-run without its tie
residues (an optional column ``predicted_seconds_tie_patch``, written by
``bench/libtaulop_oracle/generate.py``); a size guard's empty cost; otherwise "unexplained", with
the suspected cause (the row's note, the library's departure, A3 piece cutting) in parentheses.

The functions (:func:`read_rows`, :func:`stdlib_algorithm`, :func:`evaluate_row`,
:func:`classify`, :func:`attribute`, :func:`agreement`) are importable: the tests and other
scripts use them (``sys.path`` must hold ``bench/``).  What this does not do: reproduce the
library's A3 piece cutting (the stdlib takes the papers' max across groups).
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import warnings
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable, Optional

import tlop
from tlop.runtime.diagnostics import TlopError
from tlop.runtime.errors import OutOfGridWarning
from tlop.runtime.machine import OutOfMachineWarning

COLUMNS = ("platform", "channels", "algorithm", "P", "Q", "mapping", "m", "root",
           "predicted_seconds", "M", "note")
#: two predictions agree when their relative difference is at most this (the library reads its
#: tables as float32: about 6e-8 relative)
REL = 1e-6
#: the largest grid size of the libtaulop tables; larger messages are charged in chunks of it
S_MAX = 4 * 1024 * 1024
CHANNELS = {"SHM+IB": "ib", "SHM+TCP": "tcp"}
#: an optional column: the library re-run without its tie residues
#: (``bench/libtaulop_oracle/generate.py``, ``TIE_PATCH`` there)
TIE_COLUMN = "predicted_seconds_tie_patch"
UNEXPLAINED = "unexplained"

#: library algorithms whose stdlib name does not follow the convention
RENAMED = {"gatherv_binomial": ("taulop/gather", "gatherv")}

SAME = "same mathematics"
#: class names, in the order a row is assigned to the first condition it fails
CLASSES = (SAME, "note", "library departure", "P not a power of two", "stage mixes channels",
           "m > 4 MiB", "tau > tau_max", "library residues", "library tie residues", "SHM+TCP")


def _pow2(n: int) -> bool:
    return n >= 1 and n & (n - 1) == 0


#: The library's algorithm-level departures the stdlib does not copy (libtaulop-semantics.md §7
#: and §9 item 7): library name -> (does the departure change this row's cost?, what it is).
#: Departures that only arise for rows which already carry a note (non-power-of-two partners,
#: self-sends of alltoall linear/pairwise, the size guards of the allreduces) are covered by the note.
DEPARTURES: dict = {
    "scatter_binomial": (lambda r: r["P"] > 2,
                         "scatter_binomial sends its sizes reversed (m·2^s at stage s; §7 item 4); "
                         "the stdlib's scatter sends each subtree's share"),
    "allreduce_rabenseifner": (lambda r: r["P"] > 2,
                               "allreduce_rabenseifner runs all stages of a phase concurrently "
                               "(§7 item 19); the stdlib runs them one after another"),
    "allreduce_ring": (lambda r: r["m"] % r["P"] != 0,
                       "allreduce_ring sends ⌊m/P⌋ bytes per step (§7 item 17)"),
    "allreduce_nonoverlap_openmpi": (lambda r: not _pow2(r["P"]),
                                     "allreduce_nonoverlap_openmpi's broadcast wraps its partners "
                                     "modulo P for P not a power of two (§7 items 3, 15)"),
    "allreduce_ring_segm": (lambda r: r["m"] % r["P"] != 0,
                            "allreduce_ring_segm cuts blocks of ⌊m/P⌋ bytes (§7 item 18)"),
}


def parse_row(raw: dict) -> dict:
    """A CSV row with its numbers converted (P, Q, M, root: int; m, predicted_seconds: float)."""
    r = dict(raw)
    for k in ("P", "Q", "M", "root"):
        r[k] = int(r[k])
    r["m"] = float(r["m"])
    r["predicted_seconds"] = float(r["predicted_seconds"])
    if r.get(TIE_COLUMN) not in (None, ""):
        r[TIE_COLUMN] = float(r[TIE_COLUMN])
    else:
        r.pop(TIE_COLUMN, None)
    r["note"] = (r.get("note") or "").strip()
    return r


def read_rows(path) -> list:
    """Every row of an oracle CSV, parsed (:func:`parse_row`); a missing column is an error."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or ())]
        if missing:
            raise SystemExit(f"{path}: not an oracle file: missing column(s) {', '.join(missing)}")
        return [parse_row(r) for r in reader]


def stdlib_name(algorithm: str) -> tuple:
    """(module, algorithm) of the stdlib for a library algorithm name."""
    if algorithm in RENAMED:
        return RENAMED[algorithm]
    collective, _, variant = algorithm.partition("_")
    return f"taulop/{collective}", variant


@lru_cache(maxsize=None)
def _module(file: str):
    try:
        return tlop.load(file)
    except TlopError:
        return None


def stdlib_algorithm(algorithm: str):
    """The stdlib's :class:`tlop.AlgorithmHandle` for a library algorithm name, or None."""
    file, name = stdlib_name(algorithm)
    mod = _module(file)
    if mod is None:
        return None
    try:
        return mod[name]
    except (KeyError, TlopError):
        return None


#: profile variants, by name: what each adds to the plain bundled profile
VARIANTS = {
    "plain": lambda p: p,
    "tau clamp": lambda p: p.with_interpolation(tau_beyond="clamp"),
    "4 MiB chunks": lambda p: p.with_interpolation(m_beyond="chunks"),
    "tau clamp + 4 MiB chunks": lambda p: p.with_interpolation(m_beyond="chunks", tau_beyond="clamp"),
    "float32 tables": lambda p: p.with_float32(),
    "compat": lambda p: p.with_libtaulop_compat(),
}


@lru_cache(maxsize=None)
def profile_for(platform: str, channels: str, variant: str = "plain"):
    """The bundled profile ``platform`` with ``net`` bound per ``channels``, read as ``variant``
    (a key of :data:`VARIANTS`)."""
    if channels not in CHANNELS:
        raise ValueError(f"unknown channels '{channels}' (expected {', '.join(CHANNELS)})")
    prof = tlop.load_profile(platform).with_bindings({"net": CHANNELS[channels]})
    return VARIANTS[variant](prof)


def mapping_of(row: dict):
    """The row's process mapping: sequential(Q) or round_robin(Q) (⌈P/Q⌉ nodes = the library's M)."""
    kind = row["mapping"]
    if kind == "Sequential":
        return tlop.sequential(row["Q"])
    if kind == "RoundRobin":
        return tlop.round_robin(row["Q"])
    raise ValueError(f"unknown mapping '{kind}'")


def evaluate_row(row: dict, variant: str = "plain") -> Optional[float]:
    """The stdlib schedule's cost for the row (seconds), or None when the stdlib has no such
    algorithm.  ``variant`` names the profile reading (:data:`VARIANTS`)."""
    alg = stdlib_algorithm(row["algorithm"])
    if alg is None:
        return None
    names = {p.name for p in alg.params}
    args = {"P": row["P"], "m": row["m"]}
    if "counts" in names:  # gatherv: the library's rows give every rank the same m (m_r = m)
        args["counts"] = args.pop("m")
    if "root" in names and row["root"] >= 0:
        args["root"] = row["root"]
    prof = profile_for(row["platform"], row["channels"], variant)
    return float(alg.evaluate(prof, mapping=mapping_of(row), **args))


def agrees(got: float, want: float, rel: float = REL) -> bool:
    """|got − want| ≤ rel·|want| (both zero agree)."""
    return abs(got - want) <= rel * abs(want)


def one_channel(row: dict) -> bool:
    """Every transfer of a stage is on one channel: one node (P ≤ Q) or one rank per node (Q = 1)."""
    return row["P"] <= row["Q"] or row["Q"] == 1


def departure(row: dict) -> Optional[str]:
    """The library's algorithm-level departure that changes this row's cost, or None."""
    d = DEPARTURES.get(row["algorithm"])
    return d[1] if d is not None and d[0](row) else None


def exceeds_tau_max(row: dict) -> bool:
    """True when the stdlib's schedule for the row puts more transfers in one contention group
    than the table has τ columns (found by evaluation: clamping τ changes the cost)."""
    prof = profile_for(row["platform"], row["channels"])
    tau_max = min(float(prof.table("L", ch).tau[-1]) for ch in prof.channels)
    if 2 * (row["P"] - 1) <= tau_max:        # weights are at most 2: no group can exceed τ_max
        return False
    plain = evaluate_row(row)
    return plain is not None and plain != evaluate_row(row, "tau clamp")


#: multiples of m sent concurrently into different nodes in one stage, per library algorithm
#: (default: m itself); used by :func:`library_residue`
CONCURRENT_SIZES = {"gather_binomial": lambda P: [2 ** s for s in range(max(1, math.ceil(math.log2(P))))],
                    "allgather_rda": lambda P: [2 ** s for s in range(max(1, math.ceil(math.log2(P))))],
                    "allreduce_ring": lambda P: [1 / P]}
#: the smallest P at which the algorithm sends into several nodes at once with Q = 1 (default 3:
#: at P = 2 a tree sends one transfer per stage); P = 2 is enough where both ranks send at once
SEVERAL_GROUPS_FROM = {"allgather_ring": 2, "allgather_rda": 2, "allreduce_ring": 2,
                       "allreduce_ring_segm": 2, "alltoall_basic": 2, "alltoall_linear": 2,
                       "alltoall_pairwise": 2}


def library_inverse(prof, channel: str, t: float, tau: int = 1) -> float:
    """libtaulop's "bytes moved in time t" B^c(t, τ) on the profile's tables, T_i = o_i + L_i(τ)
    (+ 2·L^shm_i(τ) for TCP, 2·L_i(τ) for shared memory): libtaulop-semantics.md §4.1."""
    o, L = prof.table("o", channel), prof.table("L", channel)
    kind = prof.transmission_kind(channel)
    sizes, j_tau = o.m, int(tau) - 1
    T = o.values + L.values[:, j_tau] * (2 if kind == "shm" else 1)
    if kind == "tcp":
        T = T + 2 * prof.table("L", "shm").values[:, j_tau]
    above = [i for i in range(len(T)) if T[i] > t]
    j = above[0] if above else len(T)
    if j == 0:
        return 0.0 if T[0] > 100 * t else 1.0
    if j == len(T):
        return sizes[-1] if t == T[-1] else sizes[-1] + library_inverse(prof, channel, t - T[-1], tau)
    return max(1.0, sizes[j - 1] + math.ceil((t - T[j - 1]) * (sizes[j] - sizes[j - 1]) / (T[j] - T[j - 1])))


def library_residue(row: dict) -> bool:
    """True when the library leaves residues in a stage with groups on several nodes (Q = 1,
    P ≥ :data:`SEVERAL_GROUPS_FROM`): equal-cost network groups cut each other at the cost Δ = T(x) of one of them, and the
    others advance by B(Δ) < x where its tables are not monotone in m (libtaulop-semantics.md
    §6.3, §9 item 4), so the rest is charged again.  Checked for the sizes x the algorithm sends
    concurrently (:data:`CONCURRENT_SIZES`), with τ = 1 (one transfer into each node)."""
    if not (row["Q"] == 1 and row["P"] >= SEVERAL_GROUPS_FROM.get(row["algorithm"], 3)):
        return False
    prof = profile_for(row["platform"], row["channels"], "float32 tables")
    net = prof.bindings.get("net", "net")
    sizes = CONCURRENT_SIZES.get(row["algorithm"], lambda P: [1])(row["P"])
    for k in sizes:
        x = row["m"] * k
        if x > S_MAX:
            continue
        t = float(prof.table("o", net).lookup(x) + prof.table("L", net).lookup(x, 1)) \
            if prof.transmission_kind(net) == "rdma" else None
        if t is not None and library_inverse(prof, net, t) < x:
            return True
    return False


def beyond_grid(row: dict) -> bool:
    """True when some transfer of the stdlib's schedule for the row is larger than the table's
    last size (found by evaluation: charging 4 MiB chunks changes the cost), e.g. a gather's
    m·2^s with m ≤ 4 MiB."""
    plain = evaluate_row(row)
    return plain is not None and plain != evaluate_row(row, "4 MiB chunks")


def reasons(row: dict) -> list:
    """Every condition of the "same mathematics" class that the row fails, in :data:`CLASSES` order."""
    out = []
    if row["note"]:
        out.append("note")
    if departure(row):
        out.append("library departure")
    if not _pow2(row["P"]):
        out.append("P not a power of two")
    if not one_channel(row):
        out.append("stage mixes channels")
    if row["m"] > S_MAX:
        out.append("m > 4 MiB")
    if not out and row["channels"] == "SHM+IB" and beyond_grid(row):
        out.append("m > 4 MiB")
    if not out and row["channels"] == "SHM+IB" and exceeds_tau_max(row):
        out.append("tau > tau_max")
    if not out and row["channels"] == "SHM+IB" and library_residue(row):
        out.append("library residues")
    if not out and TIE_COLUMN in row and not agrees(row[TIE_COLUMN], row["predicted_seconds"]):
        out.append("library tie residues")
    if row["channels"] != "SHM+IB":
        out.append("SHM+TCP")
    return out


def classify(row: dict) -> str:
    """The row's class: "same mathematics" or the first condition it fails (:func:`reasons`)."""
    r = reasons(row)
    return r[0] if r else SAME


#: library algorithms that cut m into ⌊m/P⌋-byte blocks (libtaulop-semantics.md §7 items 17-18)
BLOCK_FLOOR = ("allreduce_ring", "allreduce_ring_segm")


def attribute(row: dict, got: float, compat: bool = False) -> str:
    """The demonstrated cause of a disagreement between ``got`` (the stdlib, plain or compat
    profile) and the library's prediction, or "unexplained".

    A cause is named only when removing it makes the two agree: the stdlib re-evaluated with the
    library's τ clamp, its 4 MiB chunks, both, or all of its reading rules (float32 included);
    the stdlib's ring allreduce with m = P·⌊m/P⌋ (the library's ⌊m/P⌋-byte blocks); or the library re-run without its tie residues (the row's :data:`TIE_COLUMN`, when the file
    has it: equal concurrent groups, e.g. the receivers' γ(m) in one reduce stage, end together
    instead of leaving a residue of ``m − B(Δ)`` bytes that is charged again); or a library size
    guard that returns an empty cost (prediction 0).  Anything else is "unexplained", followed by
    what is suspected (the row's note, the library's departure for that algorithm, its A3 piece
    cutting) in parentheses, so a suspicion is never counted as a cause."""
    want = row["predicted_seconds"]
    if not compat:
        for variant in ("tau clamp", "4 MiB chunks", "tau clamp + 4 MiB chunks", "compat"):
            if agrees(evaluate_row(row, variant), want):
                return variant if variant != "compat" else "float32 tables + tau clamp + 4 MiB chunks"
    tied = row.get(TIE_COLUMN)
    if row["algorithm"] in BLOCK_FLOOR and departure(row):
        blocks = f"library departure: {row['algorithm']} (⌊m/P⌋-byte blocks; the stdlib with m = P·⌊m/P⌋ agrees"
        fixed = evaluate_row(dict(row, m=row["P"] * math.floor(row["m"] / row["P"])))
        if agrees(fixed, want):
            return blocks + ")"
        if tied is not None and agrees(fixed, tied):
            return blocks + " with the library without its tie residues)"
    if tied is not None and agrees(got, tied):
        return "library tie residues (the library without them agrees)"
    if want == 0.0 and row["note"].startswith("guard"):
        return "library size guard returns 0"
    if row["note"]:
        return f"{UNEXPLAINED} (suspected: library quirk: {row['note'][:60]})"
    if departure(row):
        return f"{UNEXPLAINED} (suspected: library departure: {row['algorithm']})"
    if not one_channel(row):
        return f"{UNEXPLAINED} (suspected: A3 pieces, a stage mixes channels)"
    if row["P"] > row["Q"]:
        return f"{UNEXPLAINED} (suspected: A3 pieces, groups on several nodes)"
    return UNEXPLAINED


@dataclass
class Report:
    """Per class: rows, expressible rows, agreeing rows, and the causes of the disagreements."""
    rows: Counter = field(default_factory=Counter)
    evaluated: Counter = field(default_factory=Counter)
    agree: Counter = field(default_factory=Counter)
    causes: dict = field(default_factory=lambda: defaultdict(Counter))
    #: (algorithm, class) -> [rows evaluated, rows agreeing]
    by_algorithm: dict = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    #: the disagreeing rows of the "same mathematics" class
    same_wrong: list = field(default_factory=list)

    def format(self) -> str:
        lines = [f"{'class':<24} {'rows':>6} {'evaluated':>9} {'agree':>6} {'%':>7}"]
        for c in CLASSES:
            if not self.rows[c]:
                continue
            n, a = self.evaluated[c], self.agree[c]
            pct = f"{100 * a / n:6.2f}" if n else "     -"
            lines.append(f"{c:<24} {self.rows[c]:>6} {n:>9} {a:>6} {pct:>7}")
            for cause, k in self.causes[c].most_common():
                lines.append(f"    {k:>6}  {cause}")
        lines.append("")
        lines.append("same mathematics, per algorithm (agree / evaluated):")
        for (alg, c), (n, a) in sorted(self.by_algorithm.items()):
            if c == SAME:
                lines.append(f"    {alg:<30} {a:>5} / {n:<5}")
        return "\n".join(lines)


def agreement(rows: Iterable[dict], compat: bool = False,
              on_row: Optional[Callable[[dict, Optional[float]], None]] = None) -> Report:
    """Evaluate every expressible row and count agreement per class; ``on_row(row, tlop_seconds)``
    is called for every row (None when not expressible)."""
    rep = Report()
    variant = "compat" if compat else "plain"
    for row in rows:
        c = classify(row)
        rep.rows[c] += 1
        got = evaluate_row(row, variant)
        if on_row is not None:
            on_row(row, got)
        if got is None:
            continue
        rep.evaluated[c] += 1
        ok = agrees(got, row["predicted_seconds"])
        rep.by_algorithm[(row["algorithm"], c)][0] += 1
        if ok:
            rep.agree[c] += 1
            rep.by_algorithm[(row["algorithm"], c)][1] += 1
        else:
            rep.causes[c][attribute(row, got, compat)] += 1
            if c == SAME:
                rep.same_wrong.append((row, got))
    return rep


def _text(v) -> str:
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() and abs(v) < 2 ** 53 else repr(v)
    return str(v)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", help="an oracle file (columns " + ",".join(COLUMNS) + ")")
    ap.add_argument("--predictions", metavar="OUT.csv", help="write the input columns plus tlop_seconds")
    ap.add_argument("--compat", action="store_true",
                    help="evaluate with Profile.with_libtaulop_compat() (τ clamp, 4 MiB chunks, float32)")
    ap.add_argument("--algorithm", action="append", help="only these library algorithms (repeatable)")
    a = ap.parse_args(argv)
    # the library extrapolates too (sizes below 1 B, τ past the last column): compared, not warned
    warnings.simplefilter("ignore", OutOfGridWarning)
    warnings.simplefilter("ignore", OutOfMachineWarning)
    rows = read_rows(a.csv)
    if a.algorithm:
        rows = [r for r in rows if r["algorithm"] in a.algorithm]
    out = open(a.predictions, "w", newline="") if a.predictions else None
    writer = None
    if out is not None:
        writer = csv.writer(out)
        writer.writerow(COLUMNS + ("tlop_seconds",))

    def on_row(row, got):
        if writer is not None and got is not None:
            writer.writerow([_text(row[c]) for c in COLUMNS] + [repr(got)])

    try:
        rep = agreement(rows, compat=a.compat, on_row=on_row)
    finally:
        if out is not None:
            out.close()
    missing = sorted({r["algorithm"] for r in rows if stdlib_algorithm(r["algorithm"]) is None})
    print(f"{a.csv}: {len(rows)} rows, {'compat' if a.compat else 'plain'} profile, "
          f"agreement to {REL:g} relative")
    print(rep.format())
    if missing:
        print("not expressible (no stdlib algorithm): " + ", ".join(missing))
    for row, got in rep.same_wrong[:10]:
        print(f"DISAGREES: {row['algorithm']} P={row['P']} Q={row['Q']} {row['mapping']} m={row['m']:g} "
              f"root={row['root']}: tlop {got!r} library {row['predicted_seconds']!r}")
    return 1 if rep.same_wrong else 0


if __name__ == "__main__":
    sys.exit(main())
