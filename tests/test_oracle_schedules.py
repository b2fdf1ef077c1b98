"""The schedules against the reference library's predictions on the lusitania tables, read as
the library reads them (``--libtaulop-compat``).

tests/data/taulop-oracle-lusitania.csv holds libtaulop's predictions.  The rows of the class
"same mathematics" are defined once (``bench/libtaulop_agreement.py``, ``classify``) and checked,
every expressed algorithm, by the one parametrised test in tests/test_libtaulop_agreement.py.
Here: with the library's table reading (float32, τ clamp, 4 MiB chunks) the ring and the binomial
broadcast also agree above 4 MiB and, for the ring, for P not a power of two.
"""

import csv
from pathlib import Path

import pytest

import tlop

DATA = Path(__file__).parent / "data" / "taulop-oracle-lusitania.csv"
ALGS = {"allgather_ring": ("taulop/allgather", "ring"), "bcast_binomial": ("taulop/bcast", "binomial")}


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
