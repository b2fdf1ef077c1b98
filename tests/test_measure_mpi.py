"""tlop measure with real mpiexec ranks (2 of them): derived parameters, agreement with an
independent ping-pong, kill-and-resume, and failing or hanging ranks."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tlop.runtime.measure.launch import find_mpiexec
from tlop.runtime.measure.store import read_records
from tlop.runtime.profile import load_profile

pytestmark = pytest.mark.mpi

SIZES = "1,1KiB,16KiB,256KiB,1MiB"
FIXTURE_SIZES = "1,16,256,4KiB,16KiB,64KiB,256KiB,1MiB"


def _measure(*argv, env=None, timeout=240):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "tlop.runtime.measure", "--np", "2", "--quiet", *argv],
                          capture_output=True, text=True, timeout=timeout, env=e)


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    out = tmp_path_factory.mktemp("measure") / "p.json"
    r = _measure("--quick", "--sizes", FIXTURE_SIZES, "--bench", "taulop,postal", "--out", str(out))
    assert r.returncode == 0, r.stderr
    return out


def test_profile_loads_with_both_channels(measured):
    prof = load_profile(str(measured))
    assert set(prof.channels) == {"shm", "tcp"} and prof.bindings == {"net": "tcp"}
    md = prof.metadata
    assert md["complete"] and "MPICH" in md["mpi"]["version"]
    assert md["timer"]["wtick_s"] > 0 and md["timer"]["resolution_measured_s"] > 0
    assert md["np"] == 2 and md["placement"]["nodes"] == 1
    net_env = [r["env"] for r in md["runs"] if r["role"] == "net-forced"][0]
    assert net_env.get("MPIR_CVAR_NOLOCAL") == "1"
    assert Path(str(measured).replace(".json", ".samples.jsonl")).exists()


def test_derived_parameters_positive_and_monotone_in_m(measured):
    prof = load_profile(str(measured))
    samples = Path(str(measured).replace(".json", ".samples.jsonl"))
    fastest = {r["key"]: r["stats"]["min"] for r in read_records(samples) if r["kind"] == "point"}
    for ch in ("shm", "tcp"):
        o = prof.table("o", ch).values
        assert np.all(o > 0)
        raw = np.array(prof.fits["taulop"][ch]["raw_L"])
        assert raw.shape == (len(prof.table("L", ch).m), prof.table("L", ch).values.shape[1])
        # growth with m is checked on the fastest sample of each point, which load cannot make
        # faster: a 1 MiB transfer's best time is above a 64 KiB one's (medians of two sizes
        # 16× apart were seen inverted on this shared 2-core machine under load)
        for bench in ("pingpong", "ring"):
            keys = [k for k in fastest if k.startswith(f"{ch}/{bench}/")]
            for size in (65536, 1 << 20):
                assert any(f"m={size}" in k for k in keys), (ch, bench, size, keys)
            for k in keys:
                if "m=65536" in k:
                    big = k.replace("m=65536", f"m={1 << 20}")
                    if big in fastest:
                        assert 0 < fastest[k] < fastest[big], (k, fastest[k], fastest[big])
        assert np.all(prof.table("L", ch).values > 0)
        # the model wants L(m, τ) non-decreasing in τ; the measured profile must say where it is not
        L, m = prof.table("L", ch).values, list(prof.table("L", ch).m)
        inverted = [(mm, t) for i, mm in enumerate(m) for t in range(1, L.shape[1]) if L[i, t] < L[i, t - 1]]
        if inverted:
            assert any("decreases with tau" in w for w in prof.metadata["warnings"]), inverted


def test_taulop_stdlib_evaluates_on_the_measured_profile(measured):
    import tlop

    prof = load_profile(str(measured))
    bcast = tlop.load("taulop/bcast.tlop") if hasattr(tlop, "load") else None
    t = bcast["binomial_bcast"].evaluate(prof, P=2, m=1 << 20)
    T = prof.fits["taulop"]["shm"]["T"]
    assert t == pytest.approx(T[-1][0], rel=0.05)     # P = 2: one transmission of 1 MiB



def test_killed_run_resumes_without_remeasuring(tmp_path):
    out = tmp_path / "k.json"
    samples = tmp_path / "k.samples.jsonl"
    cmd = [sys.executable, "-m", "tlop.runtime.measure", "--np", "2", "--quiet", "--quick",
           "--sizes", SIZES, "--bench", "taulop", "--channels", "shm", "--out", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if sum(r["kind"] == "point" for r in read_records(samples)) >= 4:
            break
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)                   # the whole job, without warning
    proc.wait()
    before = [r for r in read_records(samples) if r["kind"] == "point"]
    assert 4 <= len(before) < 2 + 5 + 5                   # stopped midway
    r = _measure("--quick", "--sizes", SIZES, "--bench", "taulop", "--channels", "shm",
                 "--out", str(out), "--resume")
    assert r.returncode == 0, r.stderr
    after = [r for r in read_records(samples) if r["kind"] == "point"]
    keys = [r["key"] for r in after]
    assert len(keys) == len(set(keys)) == 2 + 5 + 5       # o_eager, o_rdv, 5 ping-pongs, 5 rings
    assert after[: len(before)] == before                 # what was kept was not measured again
    assert load_profile(str(out)).metadata["complete"] is True


def test_existing_run_is_not_overwritten_by_accident(measured):
    r = _measure("--quick", "--out", str(measured))
    assert r.returncode == 1 and "--resume" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("fault, expect", [("crash", "exit status 7"), ("hang", "did not finish within 3 s")])
def test_failing_or_hanging_rank_names_the_point(tmp_path, fault, expect):
    t0 = time.monotonic()
    r = _measure("--quick", "--sizes", "1,1KiB", "--bench", "taulop", "--channels", "shm",
                 "--timeout", "3", "--out", str(tmp_path / "f.json"),
                 env={"TLOP_MEASURE_INJECT_FAULT": f"{fault}:ring"}, timeout=90)
    assert r.returncode == 1
    assert "ring on shm at m=1 B, τ=2" in r.stderr and expect in r.stderr
    assert "--resume" in r.stderr and "Traceback" not in r.stderr
    assert time.monotonic() - t0 < 60
    kept = [x for x in read_records(tmp_path / "f.samples.jsonl") if x["kind"] == "point"]
    assert len(kept) == 4                                  # o_eager, o_rdv, two ping-pongs
