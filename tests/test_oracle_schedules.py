"""Agreement of the schedules with the reference library's predictions on the lusitania tables.

tests/data/taulop-oracle-lusitania.csv holds libtaulop's predictions.  The rows checked here are
those where the library and the papers follow the same mathematics (issue 9): channels SHM+IB,
every transfer of a stage on one channel (P ≤ Q: one node; or Q = 1: one rank per node), P a
power of two, m ≤ 4 MiB (no 4 MiB chunking), no note.  The library reads its tables as 32-bit
floats, so 1e-6 relative is exact agreement.  Every such row of ``allgather_ring`` and
``bcast_binomial`` is checked, under the row's mapping (Sequential: sequential(Q); RoundRobin:
round_robin(Q), ⌈P/Q⌉ nodes as the library's M column).
"""

import csv
from pathlib import Path

import pytest

import tlop

DATA = Path(__file__).parent / "data" / "taulop-oracle-lusitania.csv"
ALGS = {"allgather_ring": ("taulop/allgather", "ring"), "bcast_binomial": ("taulop/bcast", "binomial")}


def _same_mathematics(r) -> bool:
    P, Q, m = int(r["P"]), int(r["Q"]), float(r["m"])
    return (r["channels"] == "SHM+IB" and r["algorithm"] in ALGS and not r["note"]
            and (P <= Q or Q == 1) and P & (P - 1) == 0 and m <= 4 * 2 ** 20)


ROWS = [r for r in csv.DictReader(DATA.open()) if _same_mathematics(r)]


def test_the_class_is_covered():
    algs = {r["algorithm"] for r in ROWS}
    assert algs == set(ALGS)
    assert {r["mapping"] for r in ROWS} == {"Sequential", "RoundRobin"}
    assert any(int(r["Q"]) == 1 and int(r["P"]) > 1 for r in ROWS)  # network-only rows
    assert len(ROWS) >= 400


@pytest.mark.parametrize("algorithm", sorted(ALGS))
def test_rows_agree(algorithm):
    prof = tlop.load_profile("lusitania")
    file, name = ALGS[algorithm]
    alg = tlop.load(file)[name]
    wrong = []
    rows = [r for r in ROWS if r["algorithm"] == algorithm]
    for r in rows:
        P, Q = int(r["P"]), int(r["Q"])
        mapping = tlop.sequential(Q) if r["mapping"] == "Sequential" else tlop.round_robin(Q)
        extra = {"root": float(r["root"])} if "root" in [p.name for p in alg.params] else {}
        got = alg.evaluate(prof, P=P, m=float(r["m"]), mapping=mapping, **extra)
        want = float(r["predicted_seconds"])
        if not got == pytest.approx(want, rel=1e-6):
            wrong.append((P, Q, r["mapping"], r["m"], got, want))
    assert not wrong, f"{len(wrong)} of {len(rows)} rows disagree: {wrong[:5]}"


def test_with_libtaulop_compat_every_one_channel_row_agrees():
    """Read as the library reads its tables (float32, τ clamp, 4 MiB chunks: --libtaulop-compat),
    the schedules also agree above 4 MiB and, for the ring, for P not a power of two: every
    no-note SHM+IB row with all of a stage's transfers on one channel."""
    prof = tlop.load_profile("lusitania").with_libtaulop_compat()
    rows = [r for r in csv.DictReader(DATA.open())
            if r["channels"] == "SHM+IB" and r["algorithm"] in ALGS and not r["note"]
            and (int(r["P"]) <= int(r["Q"]) or int(r["Q"]) == 1)]
    assert any(float(r["m"]) > 4 * 2 ** 20 for r in rows)
    wrong = []
    for r in rows:
        file, name = ALGS[r["algorithm"]]
        Q = int(r["Q"])
        mapping = tlop.sequential(Q) if r["mapping"] == "Sequential" else tlop.round_robin(Q)
        got = tlop.load(file)[name].evaluate(prof, P=int(r["P"]), m=float(r["m"]), mapping=mapping)
        if not got == pytest.approx(float(r["predicted_seconds"]), rel=1e-6):
            wrong.append((r["algorithm"], r["P"], r["Q"], r["m"]))
    assert not wrong, f"{len(wrong)} of {len(rows)} rows disagree: {wrong[:5]}"
