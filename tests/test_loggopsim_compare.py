"""tlop's LogGP dataflow meaning against the LogGP simulator LogGOPSim (issue 22 item 6).

``tests/data/loggopsim/compare.csv`` was made by ``bench/loggopsim_compare.py`` (spcl/LogGOPSim
76451de, ``std::stable_sort`` fix): schedgen's binomialtreebcast, binomialtreereduce,
dissemination, allreduce_recdoub, allreduce_ring, linear_alltoall, gather, scatter and
pipelinedring, P = 2 … 256 (powers of two and not), parameter sets with o > g, with g > L + 2o and
with neither, m = 1 B and 64 B.  The simulator is not built here; the committed numbers are.

Every row is one of (:func:`verdict`):

* **equal** to 1e-9 relative;
* **receiver busy** — LogGOPSim keeps the receiving processor busy o + (m − 1)·G per message
  (``src/LogGOPSim/LogGOPSim.cpp:427``, ``nexto = t + o + max((m−1)O, (m−1)G)``; its own comment:
  "consuming o seems a bit odd in the LogGP model but well in practice"), so consecutive receives
  are max(o, g) + (m − 1)G apart; LogGP (Alexandrov et al., as 002 §2 states it: o is the time "a
  processor is engaged in the transmission or reception of a message", g the interval between
  consecutive messages, G per byte) gives max(o, g + (m − 1)G), tlop's ``send_gap``.  They differ
  only when o > g and m > 1.  Demonstrated, not assumed: tlop with ``recv_overhead = o + (m − 1)·G``
  (LogGOPSim's rule, :func:`variant_module`) equals the simulator on the row;
* **receiver busy, receives first** — schedgen's pipelinedring with o > g, P ≥ 3: LogGOPSim's
  receive rule moves tlop towards the simulator but not all the way (P = 3, m = 64: tlop 124,
  with LogGOPSim's rule 173, LogGOPSim 194); the rest is the order of a forwarding rank's
  operations: LogGOPSim's processor may take the next segment's receive (ready, no dependency)
  before forwarding the previous one, tlop forwards first (the next bullet's rule).  The test
  requires tlop < tlop with LogGOPSim's rule ≤ LogGOPSim;
* **sends before receives** — within one stage tlop runs a rank's sends before its receives
  (docs/semantics.rst, "Schedules in LogGP and pLogP"), each send a gap after the previous one;
  LogGOPSim handles a receive as soon as the processor is free, between two sends, and then keeps
  the processor busy o + (m − 1)G (above).  Only schedgen's linear_alltoall posts a rank's sends
  and receives with no dependency between them; there the two differ both ways, from −11 % (P = 3,
  the receives LogGOPSim puts between the sends delay them) to +96 % (P = 31, g > L + 2o: tlop's
  receives wait for the last send); the test holds tlop within 0.85× … 2× of the simulator;
* **not compared** — schedgen's allreduce_recdoub for P not a power of two leaves the extra
  ranks out and LogGOPSim crashes or spins on it, while tlop's rabenseifner folds them in
  (MPICH): another algorithm, not run; linear_alltoall at P = 255 and 256 did not finish within
  the script's minute of simulation.

The rows are re-evaluated with today's tlop (the CSV's tlop column is only what it gave then):
P ≤ 32 by default, all of them under ``-m slow``.
"""

import csv
import math
import shutil
import sys
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import loggopsim_compare as lc  # noqa: E402

DATA = Path(__file__).parent / "data" / "loggopsim" / "compare.csv"
with open(DATA, newline="") as _f:
    ROWS = list(csv.DictReader(_f))
REL = 1e-9


@lru_cache(maxsize=None)
def variant_module(tmp: str, module: str):
    """The stdlib module with LogGOPSim's receive rule: recv_overhead(m) = o + (m − 1)·G."""
    d = Path(tmp)
    if not (d / "platform.tlop").exists():
        for f in (ROOT / "stdlib" / "loggp").glob("*.tlop"):
            shutil.copy(f, d / f.name)
        plat = (d / "platform.tlop").read_text()
        old = "algorithm recv_overhead(m: bytes) = o"
        assert plat.count(old) == 1
        (d / "platform.tlop").write_text(plat.replace(old, "algorithm recv_overhead(m: bytes) = o + (m - 1B) * G"))
    import tlop
    if module == "extra":
        return tlop.loads(lc.EXTRA.replace('"loggp/platform.tlop"', '"platform.tlop"'), base=d)
    return tlop.load(d / (module.split("/")[1] + ".tlop"))


def _params(r):
    return tuple(int(r[k]) for k in ("L", "o", "g", "G"))


def _key(r):
    return (r["pattern"], int(r["P"]), int(r["m"]), r["params"])


def verdict(r, tmp) -> str:
    """The row's class (see the module docstring); raises AssertionError when it is none."""
    pattern, P, m = r["pattern"], int(r["P"]), int(r["m"])
    params = _params(r)
    ours = lc.tlop_cost(pattern, P, m, params)
    if r["loggopsim"] == "":
        assert (pattern == "allreduce_recdoub" and P & (P - 1) != 0) or \
            (pattern == "linear_alltoall" and P >= 255), r
        return "not compared"
    sim = float(r["loggopsim"])
    if math.isclose(ours, sim, rel_tol=REL):
        return "equal"
    L, o, g, G = params
    if pattern == "linear_alltoall":
        assert 0.85 * sim <= ours <= 2 * sim, (r, ours)
        return "sends before receives"
    module, name = lc.PATTERNS[pattern]
    alg = variant_module(str(tmp), module)[name]
    kw = {"P": P, "m": float(lc.schedgen_size(pattern, P, m))}
    if pattern == "pipelinedring":
        kw["seg"] = float(lc.SEGMENT)
    import tlop
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = float(alg.evaluate(lc.loggp_profile(*params), mapping=tlop.sequential(1), **kw)) * 1e9
    assert o > g, (r, ours)
    if math.isclose(theirs, sim, rel_tol=REL):
        return "receiver busy"
    # the pipeline: the receive rule explains part of the gap, and never more than all of it
    assert pattern == "pipelinedring" and ours < theirs <= sim * (1 + REL), (r, ours, theirs)
    return "receiver busy, receives first"


def _check(rows, tmp):
    seen = {}
    for r in rows:
        v = verdict(r, tmp)
        seen.setdefault(v, []).append(_key(r))
    return seen


def test_the_data_covers_the_patterns_sizes_and_parameter_sets():
    assert {r["pattern"] for r in ROWS} == set(lc.PATTERNS)
    Ps = {int(r["P"]) for r in ROWS}
    assert {2, 3, 5, 7, 17, 100, 255, 256} <= Ps
    for r in ROWS:
        L, o, g, G = _params(r)
        assert {"o>g": o > g, "g>L+2o": g > L + 2 * o, "plain": o <= g <= L + 2 * o}[r["params"]]


def test_small_rows_are_equal_or_a_documented_choice(tmp_path):
    seen = _check([r for r in ROWS if int(r["P"]) <= 32], tmp_path)
    assert len(seen["equal"]) > len(ROWS) // 4
    # both documented differences occur, and only where they apply
    assert seen["receiver busy"] and seen["sends before receives"]
    assert {k[0] for k in seen["sends before receives"]} == {"linear_alltoall"}


@pytest.mark.slow
def test_every_row_is_equal_or_a_documented_choice(tmp_path):
    seen = _check(ROWS, tmp_path)
    assert set(seen) <= {"equal", "receiver busy", "receiver busy, receives first", "sends before receives",
                         "not compared"}


def test_with_g_at_least_o_every_tree_pattern_is_exact(tmp_path):
    """Where the two receive rules coincide (o ≤ g) the broadcast, reduce, gather, scatter,
    dissemination and ring rows are all equal: no tolerance, no class."""
    rows = [r for r in ROWS if r["params"] != "o>g" and int(r["P"]) <= 32
            and r["pattern"] not in ("linear_alltoall", "allreduce_recdoub")]
    assert rows and all(verdict(r, tmp_path) == "equal" for r in rows)
