"""Agreement with libtaulop's predictions with and without ``--libtaulop-compat``.

* ``tests/data/taulop-oracle-sample.csv`` (metropolis, one node, m <= 4 MiB): the plain
  profile agrees to about 5e-8 relative (libtaulop reads its tables as float32); the compat
  profile (float32 numbers) agrees exactly, up to the order of the sums.
* ``tests/data/taulop-oracle-lusitania.csv``, the rows whose every transfer is one after another on
  one channel (one node, P <= Q, or one rank per node, Q = 1): the linear broadcast (the stdlib's
  ``linear_bcast``) and the linear reduction, Σ_{r≠root} T(m, 1) + (P−1)·γ(m) (libtaulop-semantics
  §7 item 7, γ from the profile's ``gamma``, SUM).  Sizes 6 MiB and 16 MiB are past the 4 MiB grid:
  only the ``"chunks"`` rule reproduces them.
"""

import csv
from pathlib import Path

import pytest

import tlop

DATA = Path(__file__).parent / "data"
SAMPLE = list(csv.DictReader((DATA / "taulop-oracle-sample.csv").open()))
ALGS = {
    "bcast_linear": ("taulop/bcast", "linear_bcast"),
    "bcast_binomial": ("taulop/bcast", "binomial_bcast"),
    "allgather_ring": ("taulop/allgather", "ring_allgather_node"),
}
S_MAX = 4 * 1024 * 1024


def _rel(got, want):
    return abs(got - want) / abs(want)


def _sample_errors(profile):
    out = []
    for r in SAMPLE:
        file, name = ALGS[r["algorithm"]]
        got = tlop.load(file)[name].evaluate(profile, P=float(r["P"]), m=float(r["m"]))
        out.append(_rel(got, float(r["predicted_seconds"])))
    return out


def test_sample_plain_and_compat():
    metropolis = tlop.load_profile("metropolis")
    plain = _sample_errors(metropolis)
    compat = _sample_errors(metropolis.with_libtaulop_compat())
    assert len(plain) == 180
    assert max(plain) < 1e-7 and sum(e > 1e-9 for e in plain) > 100   # float64 vs float32 tables
    assert max(compat) <= 1e-15


def _lusitania_rows():
    rows = []
    for r in csv.DictReader((DATA / "taulop-oracle-lusitania.csv").open()):
        P, Q = int(r["P"]), int(r["Q"])
        if r["note"] or r["algorithm"] not in ("bcast_linear", "reduce_linear_openmpi"):
            continue
        if P <= Q or Q == 1:
            rows.append(r)
    return rows


LUSITANIA = _lusitania_rows()


def _transmission(p, ch, m, tau):
    o, L = p.table("o", ch).lookup(m), p.table("L", ch).lookup(m, tau)
    kind = p.transmission_kind(ch)
    if kind == "shm":
        return float(o + 2 * L)
    if kind == "rdma":
        return float(o + L)
    return float(o + 2 * p.table("L", "shm").lookup(m, tau) + L)


def _predict(profile, r):
    P, Q, m = int(r["P"]), int(r["Q"]), float(r["m"])
    net = "ib" if r["channels"] == "SHM+IB" else "tcp"
    prof = profile.with_bindings({"net": net})
    if r["algorithm"] == "bcast_linear":
        return tlop.load("taulop/bcast")["linear_bcast"].evaluate(prof, P=P, m=m, c="shm" if P <= Q else "net")
    ch = "shm" if P <= Q else net
    return (P - 1) * (_transmission(prof, ch, m, 1) + float(prof.table("gamma").lookup(m)))


def test_lusitania_single_channel_rows():
    lus = tlop.load_profile("lusitania")
    compat = lus.with_libtaulop_compat()
    assert len(LUSITANIA) == 1152
    beyond = [r for r in LUSITANIA if float(r["m"]) > S_MAX]
    assert {float(r["m"]) for r in beyond} == {6 * 2 ** 20, 16 * 2 ** 20}
    for r in LUSITANIA:
        want = float(r["predicted_seconds"])
        assert _rel(_predict(compat, r), want) <= 1e-14, r
        plain = _rel(_predict(lus, r), want)
        if float(r["m"]) <= S_MAX:
            assert plain < 1e-7, r                  # only float32 rounding
        else:
            assert plain > 1e-3, r                  # the linear extension is not libtaulop's chunks
