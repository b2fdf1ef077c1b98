"""Fits and derivations of tlop measure on synthetic data (no MPI, no GPU)."""

import numpy as np
import pytest

from tlop.runtime.measure import fit
from tlop.runtime.measure.bench_cuda import fit_copies, probe


def test_linear_fit_exact_and_nonnegative_slope():
    m = np.array([1, 10, 100, 1000.0])
    a, b, rss = fit.linear_fit(m, 2e-6 + 3e-9 * m)
    assert a == pytest.approx(2e-6) and b == pytest.approx(3e-9) and rss < 1e-20
    a, b, _ = fit.linear_fit(m, [5e-6, 4e-6, 4e-6, 3e-6])
    assert b == 0.0 and 3e-6 < a < 5e-6
    a, b, _ = fit.linear_fit([1e4, 1e5, 1e6], [0.5e-6, 9e-6, 1e-4])
    assert a == 0.0 and b > 0


def test_postal_fit_finds_the_protocol_switch():
    m = np.array([2.0 ** k for k in range(0, 23)])
    eager = 1e-6 + 1e-10 * m
    rdv = 5e-6 + 0.8e-10 * m
    t = np.where(m < 65536, eager, rdv)
    t = t * (1 + 0.01 * np.random.default_rng(3).standard_normal(len(m)))
    f = fit.postal_fit(m, t)
    assert f["protocol_switch"] == 65536
    assert 65536 in f["breakpoints"]
    first, last = f["segments"][0], f["segments"][-1]
    assert first["alpha"] == pytest.approx(1e-6, rel=0.1)
    assert last["beta"] == pytest.approx(0.8e-10, rel=0.1)


def test_postal_fit_one_segment_for_clean_line():
    m = np.array([4.0 ** k for k in range(11)])
    f = fit.postal_fit(m, 3e-6 + 2e-10 * m)
    assert len(f["segments"]) == 1 and f["protocol_switch"] is None
    assert f["segments"][0]["alpha"] == pytest.approx(3e-6, rel=1e-6)


def test_taulop_shm_tcp_rdma_decompositions():
    sizes = [1, 1024, 1 << 20]
    taus = [1, 2]
    o = 1e-6
    L = np.array([[1e-8, 2e-8], [1e-7, 2e-7], [1e-4, 1.8e-4]])
    T_shm = o + 2 * L
    r = fit.taulop_channel("shm", sizes, taus, T_shm, o, 3e-6, None)
    assert np.allclose(r["L"], L) and r["o"] == [o] * 3 and not r["clamped"]
    L_net = 3 * L
    o_vec = np.array([[o], [3e-6], [3e-6]])      # eager below the 1 KiB switch, rendezvous from it
    T_tcp = o_vec + 2 * L + L_net
    shm = lambda m, tau: float(L[sizes.index(m), taus.index(tau)])
    r = fit.taulop_channel("tcp", sizes, taus, T_tcp, o, 3e-6, 1024, shm)
    assert np.allclose(r["L"], L_net)
    assert r["o"] == [o, 3e-6, 3e-6]            # rendezvous overhead from the switch on
    r = fit.taulop_channel("rdma", sizes, taus, o + L_net, o, None, None)
    assert np.allclose(r["L"], L_net)


def test_taulop_clamps_nonpositive_values_with_a_note():
    r = fit.taulop_channel("shm", [1, 2], [1], np.array([[0.9e-6], [1.2e-6]]), 1e-6, None, None)
    assert r["L"][0][0] == fit.L_FLOOR and r["raw_L"][0][0] < 0
    assert r["clamped"] and any("clamped" in n for n in r["notes"])


def test_loggp_recovers_synthetic_parameters():
    L, o, g, G, n = 5e-6, 1e-6, 2e-6, 1e-9, 8
    prtt = {}
    for s in (1, 1024, 65536):
        p1 = 2 * (L + 2 * o + (s - 1) * G)
        gap = g + (s - 1) * G
        d = p1
        prtt[s] = {"p1": p1, "pn": p1 + (n - 1) * gap, "pd": p1 + (n - 1) * (o + d), "d": d}
    r = fit.loggp_params(prtt, n)
    assert r["L"] == pytest.approx(L) and r["o"] == pytest.approx(o)
    assert r["g"] == pytest.approx(g) and r["G"] == pytest.approx(G)


def test_plogp_latency_and_clamp():
    assert fit.plogp_params(10e-6, 2e-6)["L"] == pytest.approx(3e-6)
    r = fit.plogp_params(2e-6, 5e-6)
    assert r["L"] == fit.L_FLOOR and r["notes"]


def test_max_rate_and_monotone_check():
    r = fit.max_rate([1, 2], [1e-3, 1.5e-3], 1e6)
    assert r["R_N_Bps"] == pytest.approx(2e6 / 1.5e-3)
    assert fit.monotone_violations([1, 2, 3, 4], [1, 2, 1.5, 3]) == [3.0]


def test_cuda_fit_on_synthetic_copies_and_clean_skip():
    recs = []
    for d, a, b in (("HostToDevice", 8e-6, 1 / 12e9), ("DeviceToHost", 9e-6, 1 / 13e9)):
        for m in (1, 1024, 1 << 16, 1 << 20, 1 << 24):
            recs.append({"direction": d, "memory": "pinned", "m": m, "stats": {"median": a + b * m}})
    f = fit_copies(recs)
    assert f["HostToDevice/pinned"]["segments"][0]["alpha"] == pytest.approx(8e-6, rel=1e-6)
    assert f["DeviceToHost/pinned"]["segments"][0]["beta"] == pytest.approx(1 / 13e9, rel=1e-6)
    reason = probe()
    assert reason is None or reason.startswith("no GPU")
