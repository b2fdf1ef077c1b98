"""tlop measure's γ benchmark (``--bench gamma``): the local cost of one reduction operation, the
profile tables ``gamma_<op>`` and ``gamma`` (SUM, libtaulop's default), planned once (on the
shared-memory channel), assembled from the medians."""

import os
import subprocess
import sys

import pytest
from _bounded import PATIENCE

from tlop.runtime.measure.assemble import assemble
from tlop.runtime.measure.bench_gamma import OPS
from tlop.runtime.measure.plan import Point, quick_settings, plan_channel
from tlop.runtime.profile import load_profile


def test_gamma_is_planned_once_on_shared_memory():
    s = quick_settings().with_(benchmarks=("gamma",))
    shm = plan_channel("shm", s, 2)
    assert plan_channel("tcp", s, 2) == []
    assert {p.bench for p in shm} == {"gamma"}
    assert len(shm) == len(OPS) * len(s.sizes) and len({p.key for p in shm}) == len(shm)
    assert Point("gamma", "shm", (("m", 1024), ("op", "sum"))).label == "gamma on shm at m=1 KiB, op=sum"


def test_assemble_makes_one_table_per_operation_and_gamma_is_sum():
    def point(op, m, median):
        key = f"shm/gamma/m={m}/op={op}"
        stats = {"median": median, "min": median, "mean": median, "p95": median, "ci_low": median,
                 "ci_high": median, "ci_rel": 0.0, "n": 20, "outliers": 0}
        return {"kind": "point", "key": key, "bench": "gamma", "channel": "shm", "params": {"m": m, "op": op},
                "stop": "converged", "stats": stats, "samples": [median] * 20}
    records = [{"kind": "run", "role": "shm", "host": "h", "channels": [{"channel": "shm", "transmission": "shm"}]}]
    records += [point(op, m, k * 1e-6 + m * 1e-10) for k, op in enumerate(("sum", "max"), 1) for m in (1024, 4096)]
    prof = assemble(records, "g")
    assert prof["tables"]["gamma"] == prof["tables"]["gamma_sum"]
    assert prof["tables"]["gamma_max"]["*"] == {"m": [1024, 4096], "values": [2e-6 + 1024e-10, 2e-6 + 4096e-10]}
    assert prof["fits"]["gamma"]["ops"] == ["max", "sum"]


@pytest.mark.mpi
def test_measure_gamma_with_mpiexec(tmp_path):
    out = tmp_path / "g.json"
    r = subprocess.run([sys.executable, "-m", "tlop.runtime.measure", "--np", "2", "--quiet", "--quick",
                        "--bench", "gamma", "--channels", "shm", "--sizes", "1KiB,1MiB", "--out", str(out)],
                       capture_output=True, text=True, timeout=PATIENCE, env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    prof = load_profile(str(out))
    assert set(prof.reduce_ops()) == set(OPS)
    for name in ["gamma"] + [f"gamma_{op}" for op in OPS]:
        small, big = (float(prof.table(name).lookup(m)) for m in (1024.0, 1 << 20))
        assert 0 < small < big, name  # 1024 times the data: never cheaper, even on a loaded machine
