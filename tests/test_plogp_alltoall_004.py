"""Paper 004 §5: all-to-all bounds of Table 3, the prediction Lower + (Upper − Lower)·γ, the
contention factor l + b·γ/W, and γ fitted to a measured all-to-all."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tlop
from conftest import synthetic_profile
from tlop.runtime.diagnostics import TlopError

M = [1.0, 1024.0, 65536.0, 1048576.0]


def plogp(g, os_, or_, L, fits=None):
    p = synthetic_profile("plogp-a2a", tables={
        "g": {"*": {"m": M, "values": [g(m) for m in M]}},
        "os": {"*": {"m": M, "values": [os_(m) for m in M]}},
        "or_": {"*": {"m": M, "values": [or_(m) for m in M]}}}, scalars={"L": {"*": L}})
    if fits is not None:
        d = p.to_dict()
        d["fits"] = fits
        from tlop.runtime.profile import profile_from_dict
        p = profile_from_dict(d)
    return p


G = (lambda m: 3e-6 + 2e-9 * m)
OS = (lambda m: 1e-6 + 0.5e-9 * m)
OR = (lambda m: 1.5e-6 + 0.7e-9 * m)
LAT = 4e-5
MOD = tlop.load("plogp/alltoall")


def table3(P, m):
    lower = (P - 1) * OS(m) + (P - 1) * OR(m) + LAT
    upper = (P - 1) * G(m) + (P - 1) * OR(m) + LAT
    return lower, upper


@pytest.mark.parametrize("P", [2, 3, 8, 24, 100])
def test_bounds_and_prediction_equal_table_3(P):
    prof = plogp(G, OS, OR, LAT)
    m = np.array(M)  # grid points: the tables are read exactly
    lower, upper = table3(P, m)
    np.testing.assert_allclose(MOD["alltoall_lower"].evaluate(prof, P=P, m=m), lower, rtol=1e-13)
    np.testing.assert_allclose(MOD["alltoall_upper"].evaluate(prof, P=P, m=m), upper, rtol=1e-13)
    for gamma in (0.0, 0.4, 1.0):
        np.testing.assert_allclose(MOD["alltoall"].evaluate(prof, P=P, m=m, gamma=gamma),
                                   lower + (upper - lower) * gamma, rtol=1e-13)
    np.testing.assert_allclose(MOD["alltoall"].evaluate(prof, P=P, m=m), lower + (upper - lower) * 0.4, rtol=1e-13)


def test_gamma_outside_0_1_is_refused():
    prof = plogp(G, OS, OR, LAT)
    with pytest.raises(TlopError) as err:
        MOD["alltoall"].evaluate(prof, P=4, m=1024, gamma=1.5)
    assert "where gamma >= 0 and gamma <= 1" in str(err.value)


def test_contention_factor():
    b = np.array([0.0, 1e3, 1e6])
    got = MOD["contention_factor"].evaluate(None, b=b, gamma=8, l=5e-5, W=1.25e7)
    np.testing.assert_allclose(got, 5e-5 + b * 8 / 1.25e7, rtol=1e-14)


@settings(max_examples=60, deadline=None)
@given(g0=st.floats(1e-7, 1e-4), g1=st.floats(0, 1e-8), s0=st.floats(0, 1), s1=st.floats(0, 1),
       r0=st.floats(0, 1e-4), r1=st.floats(0, 1e-8), L=st.floats(0, 1e-3), P=st.integers(2, 512),
       m=st.floats(0, 2e6), gamma=st.floats(0, 1))
def test_the_bounds_bracket_the_prediction_for_every_gamma(g0, g1, s0, s1, r0, r1, L, P, m, gamma):
    # pLogP: the send overhead is part of the gap, os(m) <= g(m) (s0, s1 are the fractions)
    prof = plogp(lambda x: g0 + g1 * x, lambda x: s0 * g0 + s1 * g1 * x, lambda x: r0 + r1 * x, L)
    lo = MOD["alltoall_lower"].evaluate(prof, P=P, m=m)
    up = MOD["alltoall_upper"].evaluate(prof, P=P, m=m)
    pred = MOD["alltoall"].evaluate(prof, P=P, m=m, gamma=gamma)
    tol = 1e-12 * up
    assert lo <= up + tol and lo - tol <= pred <= up + tol


def measured(gamma, noise=()):
    rows = []
    for i, (P, m) in enumerate([(2, 1024.0), (4, 1024.0), (8, 65536.0), (16, 1048576.0), (24, 65536.0)]):
        lo, up = table3(P, m)
        t = (lo + (up - lo) * gamma) * (1 + (noise[i] if noise else 0.0))
        rows.append({"channel": "net", "algorithm": "alltoall", "impl": "mpi", "P": P, "m": m, "median": t})
    rows.append({"channel": "net", "algorithm": "bcast", "impl": "mpi", "P": 4, "m": 1024, "median": 1.0})
    return {"collectives": rows, "plogp": {"source_channel": "net"}}


def test_gamma_is_recovered_from_an_all_to_all_that_follows_the_model():
    prof = plogp(G, OS, OR, LAT, fits=measured(0.4))
    fit = tlop.estimate_contention_ratio(prof)
    assert fit.gamma == pytest.approx(0.4, rel=1e-12) and fit.rel_rms < 1e-12
    assert all(fit.bracketed) and len(fit.points) == 5 and fit.channel == "net"


def test_gamma_is_the_least_squares_fit_of_noisy_timings():
    noise = (0.05, -0.03, 0.02, 0.1, -0.08)
    prof = plogp(G, OS, OR, LAT, fits=measured(0.3, noise))
    fit = tlop.estimate_contention_ratio(prof)
    pts = [(P, m) for P, m, *_ in fit.points]
    lo = np.array([table3(P, m)[0] for P, m in pts])
    up = np.array([table3(P, m)[1] for P, m in pts])
    t = np.array([p[2] for p in fit.points])
    want, *_ = np.linalg.lstsq((up - lo)[:, None], t - lo, rcond=None)
    assert fit.gamma == pytest.approx(float(want[0]), rel=1e-10)
    np.testing.assert_allclose(fit.ratios, (t - lo) / (up - lo), rtol=1e-10)


def test_no_measured_all_to_all_is_a_clear_error():
    with pytest.raises(TlopError) as err:
        tlop.estimate_contention_ratio(plogp(G, OS, OR, LAT, fits=measured(0.4)), impl="mpi:pairwise")
    assert "no measured all-to-all with impl 'mpi:pairwise' on channel 'net'" in str(err.value)
    assert "it has: mpi on net" in str(err.value)


def test_on_the_measured_localhost_example():
    """The bundled measured profile has all-to-all timings for P = 2 on loopback TCP; the fit
    runs, and reports honestly that its bounds do not bracket them (g < os there)."""
    fit = tlop.estimate_contention_ratio("localhost-example")
    assert fit.channel == "tcp" and len(fit.points) >= 1 and np.isfinite(fit.gamma)
