"""The raw-sample file and profile assembly of tlop measure, on synthetic records (no MPI)."""

import json

import numpy as np
import pytest

from tlop.runtime.diagnostics import TlopError
from tlop.runtime.measure.assemble import assemble, build_and_save
from tlop.runtime.measure.plan import Point, plan_channel, quick_settings
from tlop.runtime.measure.stats import summarize
from tlop.runtime.measure.store import SampleStore, point_record, read_records, samples_path
from tlop.runtime.profile import load_profile, profile_from_dict


def test_samples_path():
    assert samples_path("/a/b/prof.json").name == "prof.samples.jsonl"


def test_append_read_and_torn_last_line(tmp_path):
    p = tmp_path / "x.samples.jsonl"
    with SampleStore(p) as s:
        s.append({"kind": "point", "key": "a"})
    with open(p, "a") as f:
        f.write('{"kind": "point", "key": "tor')           # a crash mid-write
    with SampleStore(p) as s:
        assert s.done_keys() == {"a"}
        s.append({"kind": "point", "key": "b"})
    assert [r["key"] for r in read_records(p)] == ["a", "b"]


def _synthetic_records(settings, channels=("shm", "tcp"), drop=()):
    """Records a 2-rank run would write for a platform with known τ-Lop parameters."""
    o = {"shm": 1e-6, "tcp": 2e-5}
    recs = [{"kind": "run", "channels": [{"channel": "shm", "transmission": "shm"},
                                         {"channel": "tcp", "transmission": "tcp"}],
             "date": "2026-01-02T03:04:05+00:00", "host": "testhost", "np": 2,
             "mpi": {"library": "MPICH", "version": "MPICH Version: 5", "library_version_full": "x"},
             "settings": settings.as_dict(), "launcher": "test", "timer": {"wtick_s": 1e-9}}]
    rng = np.random.default_rng(0)

    def L(ch, m, tau):
        return (1e-10 if ch == "shm" else 8e-10) * m * (1 + 0.5 * (tau - 1)) + 1e-8

    for ch in channels:
        for p in plan_channel(ch, settings, 2, 1):
            if p.key in drop:
                continue
            q = p.p
            m = q.get("m", q.get("s", 0))
            if p.bench == "o_eager":
                t = o[ch]
            elif p.bench == "o_rdv":
                t = 2 * o[ch]
            elif p.bench in ("pingpong", "ring"):
                tau = q.get("tau", 1)
                t = o[ch] + 2 * L("shm", m, tau) + (L(ch, m, tau) if ch == "tcp" else 0)
            elif p.bench == "prtt":
                t = 2 * (o[ch] + 1e-10 * m) * (q["n"])
            else:
                t = 1e-6 + 1e-10 * m
            samples = t * (1 + 0.01 * rng.random(20))
            recs.append(point_record(p, summarize(samples), "converged", samples,
                                     {"delay_s": 1e-5} if p.bench == "prtt" else
                                     {"bytes_per_pair": 1e6} if p.bench == "maxrate" else None))
    return recs


def test_assemble_builds_a_valid_profile_with_derived_tables():
    st = quick_settings()
    d = assemble(_synthetic_records(st), "synthetic",
                 planned={p.key for c in ("shm", "tcp") for p in plan_channel(c, st, 2, 1)})
    prof = profile_from_dict(d)
    assert prof.bindings == {"net": "tcp"}
    assert prof.channels["tcp"].transmission == "tcp"
    Ls = prof.table("L", "shm")
    assert list(Ls.tau) == [1, 2] and list(Ls.m) == list(st.sizes)
    big = st.sizes[-1]
    assert Ls.lookup(big, 1) == pytest.approx(1e-10 * big + 1e-8, rel=0.05)
    Lt = prof.table("L", "tcp")
    assert Lt.lookup(big, 1) == pytest.approx(8e-10 * big + 1e-8, rel=0.05)
    assert prof.has_table("plogp.g") and prof.has_scalar("loggp.G") and prof.has_scalar("plogp.L")
    md = prof.metadata
    assert md["complete"] is True and md["mpi"]["library"] == "MPICH" and md["date"] == "2026-01-02"
    assert "postal" in prof.fits and "shm" in prof.fits["postal"]


def test_partial_run_gives_a_partial_profile(tmp_path):
    st = quick_settings()
    ring = [p.key for p in plan_channel("shm", st, 2, 1) if p.bench == "ring"][:1]
    recs = _synthetic_records(st, channels=("shm",), drop=set(ring))
    samples = tmp_path / "p.samples.jsonl"
    with SampleStore(samples) as s:
        for r in recs:
            s.append(r)
    planned = {p.key for p in plan_channel("shm", st, 2, 1)}
    prof = build_and_save(samples, tmp_path / "p.json", "partial", planned)
    assert prof.metadata["complete"] is False and ring[0] in prof.metadata["missing_points"]
    assert list(prof.table("L", "shm").tau) == [1]          # τ = 2 incomplete: column left out
    assert load_profile(str(tmp_path / "p.json")).name == "partial"
    assert "net" not in prof.bindings


def test_assemble_without_points_is_a_clear_error():
    with pytest.raises(TlopError, match="no measurement"):
        assemble([{"kind": "run"}], "x")
