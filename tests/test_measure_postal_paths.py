"""``tlop measure`` writes postal paths: the fits it computes become path channels and
``postal.*`` scalars, and the stdlib postal models evaluate on the measured profile."""

from pathlib import Path

import numpy as np
import pytest

import tlop
from tlop.runtime.measure.assemble import assemble
from tlop.runtime.measure.postal_paths import protocols_from_fit
from tlop.runtime.measure.store import read_records
from tlop.runtime.profile import load_profile, profile_from_dict


def seg(lo, hi, a, b):
    return {"m_min": lo, "m_max": hi, "alpha": a, "beta": b, "n": 3, "rel_rms": 0.0}


def fit_of(*segments, switch=None):
    return {"segments": list(segments), "breakpoints": [s["m_min"] for s in segments[1:]],
            "protocol_switch": switch, "jumps": []}


def test_protocols_from_one_to_four_segments():
    one = protocols_from_fit(fit_of(seg(1, 1e6, 1e-6, 1e-10)))
    assert one["short"] == one["eager"] == one["rend"] == (1e-6, 1e-10)
    two = protocols_from_fit(fit_of(seg(1, 4096, 1e-6, 2e-10), seg(16384, 4e6, 5e-6, 1e-10), switch=16384))
    assert two["short"] == two["eager"] == (1e-6, 2e-10) and two["rend"] == (5e-6, 1e-10)
    assert (two["short_max"], two["eager_max"]) == (0.0, 4096)
    three = protocols_from_fit(fit_of(seg(1, 256, 1e-7, 3e-10), seg(1024, 8192, 2e-7, 2e-10),
                                      seg(32768, 4e6, 5e-6, 1e-10), switch=32768))
    assert three["short"] == (1e-7, 3e-10) and three["eager"] == (2e-7, 2e-10) and three["rend"] == (5e-6, 1e-10)
    assert (three["short_max"], three["eager_max"]) == (256, 8192)
    # four segments, the largest jump between the 2nd and 3rd: rendezvous is the last segment
    four = protocols_from_fit(fit_of(seg(1, 256, 1e-7, 3e-10), seg(1024, 8192, 2e-7, 2e-10),
                                     seg(32768, 65536, 5e-6, 1.5e-10), seg(262144, 4e6, 6e-6, 1e-10),
                                     switch=32768))
    assert four["rend"] == (6e-6, 1e-10) and four["eager_max"] == 8192 and four["short_max"] == 256


@pytest.fixture(scope="module")
def measured():
    # the raw samples localhost-example was assembled from (test data: wheels ship no samples)
    records = read_records(Path(__file__).parent / "data" / "localhost-example.samples.jsonl")
    cuda = [{"kind": "cuda", "key": f"cuda/{d}/pinned/{m}", "direction": d, "memory": "pinned", "m": m,
             "stats": {"median": a + b * m}}
            for d, a, b in (("HostToDevice", 9e-6, 4e-11), ("DeviceToHost", 8e-6, 5e-11))
            for m in (1, 1024, 65536, 1 << 20, 4 << 20)]
    data = assemble(records + cuda, "measured")
    return data, profile_from_dict(data, "measured.json")


def test_measured_profile_has_postal_paths(measured):
    data, prof = measured
    assert prof.channels["cpu_on_node"].is_path and prof.channels["cpu_off_node"].is_path
    assert data["fits"]["postal_paths"]["cpu_on_node"]["channel"] == "shm"
    assert data["fits"]["postal_paths"]["cpu_off_node"]["channel"] == "tcp"
    assert "No GPU-to-GPU path is measured" in data["metadata"]["notes"]
    for ch, path in (("shm", "cpu_on_node"), ("tcp", "cpu_off_node")):
        proto = protocols_from_fit(data["fits"]["postal"][ch])
        for p in ("short", "eager", "rend"):
            assert prof.scalar(f"postal.alpha_{p}", path) == max(proto[p][0], 0.0)
            assert prof.scalar(f"postal.beta_{p}", path) == max(proto[p][1], 0.0)
    assert prof.scalar("postal.R_N", "cpu_off_node") == data["fits"]["max_rate"]["tcp"]["R_N_Bps"]


def test_stdlib_postal_evaluates_on_the_measured_profile(measured):
    data, prof = measured
    sizes = np.array([1, 100, 4096, 16384, 65536, 1 << 20], dtype=float)
    for ch, path in (("shm", "cpu_on_node"), ("tcp", "cpu_off_node")):
        proto = protocols_from_fit(data["fits"]["postal"][ch])
        which = np.where(sizes <= proto["short_max"], 0, np.where(sizes <= proto["eager_max"], 1, 2))
        a = np.choose(which, [max(proto[p][0], 0) for p in ("short", "eager", "rend")])
        b = np.choose(which, [max(proto[p][1], 0) for p in ("short", "eager", "rend")])
        got = tlop.load("postal/p2p")["postal"].evaluate(prof, s=sizes, c=path)
        np.testing.assert_allclose(got, a + b * sizes, rtol=1e-13)
    # the CUDA fits (synthetic records above: a GPU was 'measured') feed memcpy exactly
    got = tlop.load("postal/p2p")["memcpy"].evaluate(prof, s=sizes, c="d2h_on_socket")
    np.testing.assert_allclose(got, 8e-6 + 5e-11 * sizes, rtol=1e-6)
    assert tlop.load("postal/gpu")["gpudirect"].applies_to(prof) is False  # no GPU-to-GPU path


def test_a_negative_fitted_parameter_is_stored_as_zero_with_a_warning():
    from tlop.runtime.measure.postal_paths import add_postal_paths

    fits = {"postal": {"shm": fit_of(seg(1, 4096, -1e-7, 2e-10))}}
    channels, scalars, notes, warnings = {}, {}, [], []
    add_postal_paths({"shm": "shm"}, fits, channels, scalars, notes, warnings)
    assert scalars["postal.alpha_eager"]["cpu_on_node"] == 0.0
    assert any("negative; stored as 0" in w for w in warnings)


@pytest.mark.mpi
def test_tlop_measure_writes_postal_and_max_rate_and_skips_cuda_cleanly(tmp_path):
    """A real ``tlop measure`` (2 MPICH ranks) of the postal, max-rate and CUDA benchmarks: the
    profile it writes has the postal paths with R_N, on which postal/p2p's max-rate model gives
    003's formula from the stored α, β, R_N; without a GPU the CUDA benchmark is skipped with a
    message naming the reason (stderr and the profile's notes), and no memcpy path is written."""
    import json
    import os
    import subprocess
    import sys

    from _bounded import PATIENCE

    from tlop.runtime.measure.bench_cuda import probe

    out = tmp_path / "p.json"
    r = subprocess.run([sys.executable, "-m", "tlop.runtime.measure", "--np", "2", "--quick", "--sizes",
                        "1,1KiB,16KiB,256KiB", "--bench", "postal,maxrate,cuda", "--out", str(out)],
                       capture_output=True, text=True, timeout=PATIENCE, env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    data = json.loads(out.read_text())
    prof = load_profile(str(out))
    assert {"cpu_on_node", "cpu_off_node"} <= set(prof.channels)
    rate = data["fits"]["max_rate"]["tcp"]["R_N_Bps"]
    assert prof.scalar("postal.R_N", "cpu_off_node") == rate > 0
    s = np.array([1.0, 1024.0, 16384.0, 262144.0, 1 << 22])
    proto = protocols_from_fit(data["fits"]["postal"]["tcp"])
    which = np.where(s <= proto["short_max"], 0, np.where(s <= proto["eager_max"], 1, 2))
    a = np.choose(which, [max(proto[p][0], 0) for p in ("short", "eager", "rend")])
    b = np.choose(which, [max(proto[p][1], 0) for p in ("short", "eager", "rend")])
    for ppn in (1, 4, 64):
        got = tlop.load("postal/p2p")["max_rate"].evaluate(prof, s=s, ppn=ppn, c="cpu_off_node")
        np.testing.assert_allclose(got, a + ppn * s / np.minimum(rate, ppn / b), rtol=1e-13)
    reason = probe()
    if reason is None:   # a GPU: its copies are memcpy paths
        assert {"h2d_on_socket", "d2h_on_socket"} <= set(prof.channels)
        return
    assert f"tlop measure: skipping the cuda benchmark: {reason}" in r.stderr
    assert f"skipped host/cuda: {reason}" in prof.metadata["notes"]
    assert not {"h2d_on_socket", "d2h_on_socket"} & set(prof.channels)
    assert "cuda" not in data["fits"]
    assert tlop.load("postal/p2p")["memcpy"].applies_to(prof) is False
