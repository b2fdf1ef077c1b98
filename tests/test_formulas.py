"""Stdlib formulas against independent numpy computations of the papers' equations.

τ-Lop formulas use the metropolis tables read straight from the raw libtaulop files (at grid
sizes, so no interpolation is involved); pLogP and LogGP formulas use synthetic profiles.
"""

import json
import math
from pathlib import Path

import numpy as np
import pytest

import tlop
from tlop.cli.main import main

from conftest import PLOGP_G0, PLOGP_G1, PLOGP_L, synthetic_profile

RAW = Path(__file__).resolve().parent.parent / "stdlib" / "profiles" / "raw" / "metropolis"


def read_raw(channel):
    """{m: (o, [L(m,1) … L(m,8)])} from a libtaulop parameter file, parsed independently."""
    rows = {}
    for line in (RAW / f"{channel}.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        nums = [float(x) for x in line.split()]
        rows[nums[0]] = (nums[1], nums[2:])
    return rows


SHM, IB, TCP = read_raw("SHM"), read_raw("IB"), read_raw("TCP")
MIB = 1048576.0


def test_cli_binomial_bcast_is_exactly_the_paper_formula(capsys):
    """000 eq. 4 on one node: Σ_{i=0}^{3} [o_shm(m) + 2·L_shm(m, 2^i)] for P = 16, m = 1 MiB."""
    o, L = SHM[MIB]
    expected = 0.0
    for i in range(4):
        expected += o + 2 * L[2 ** i - 1]
    assert main(["eval", "taulop/bcast", "binomial_bcast", "P=16", "m=1MiB", "--profile", "metropolis", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["seconds"] == expected  # full precision in --json
    assert main(["eval", "taulop/bcast", "binomial_bcast", "P=16", "m=1MiB", "--profile", "metropolis"]) == 0
    assert capsys.readouterr().out.endswith(f": {expected * 1e3:.4g} ms\n")  # 4 significant digits in text


def test_cli_eval_json(capsys):
    import json
    assert main(["eval", "taulop/bcast", "binomial_bcast", "P=16", "m=1MiB", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    o, L = SHM[MIB]
    assert data["seconds"] == pytest.approx(sum(o + 2 * L[2 ** i - 1] for i in range(4)), rel=1e-15)
    assert data["arguments"]["c"] == "shm" and data["profile"] == "metropolis"


@pytest.mark.parametrize("P", [2, 3, 5, 8, 13, 64])
@pytest.mark.parametrize("m", [1.0, 4096.0, MIB])
def test_binomial_bcast_any_p(P, m):
    o, L = SHM[m]
    profile = tlop.load_profile("metropolis")
    got = tlop.load("taulop/bcast")["binomial_bcast"].evaluate(profile, P=P, m=m)
    Lmax = L[-1]
    def L_at(tau):  # proportional rule beyond the 8 measured columns
        return L[tau - 1] if tau <= 8 else Lmax * tau / 8
    want = sum(o + 2 * L_at(2 ** i) for i in range(math.ceil(math.log2(P))))
    assert got == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("P,Q", [(16, 8), (32, 8), (8, 4), (4, 2)])
@pytest.mark.parametrize("m", [64.0, 65536.0, MIB])
def test_ring_allgather_mappings(P, Q, m):
    """002 eq. 7 (sequential) and eq. 8 (round robin) with the overheads, network = InfiniBand
    (metropolis bind, RDMA: T^net = o^net + L^net): per stage max{(Q−1)‖T^shm, T^net} and Q‖T^net."""
    mod = tlop.load("taulop/allgather")
    profile = tlop.load_profile("metropolis")
    os_, Ls = SHM[m]
    on, Ln = IB[m]
    seq = (P - 1) * max(os_ + 2 * Ls[Q - 2], on + Ln[0])
    rr = (P - 1) * (on + Ln[Q - 1])
    assert mod["ring_allgather_seq"].evaluate(profile, P=P, m=m, Q=Q) == pytest.approx(seq, rel=1e-12)
    assert mod["ring_allgather_rr"].evaluate(profile, P=P, m=m, Q=Q) == pytest.approx(rr, rel=1e-12)


def test_ring_allgather_tcp_binding():
    mod = tlop.load("taulop/allgather")
    profile = tlop.load_profile("metropolis").with_bindings({"net": "tcp"})
    os_, Ls = SHM[MIB]
    on, Ln = TCP[MIB]
    got = mod["ring_allgather_seq"].evaluate(profile, P=16, m=MIB, Q=8)
    assert got == pytest.approx(15 * max(os_ + 2 * Ls[6], on + 2 * Ls[0] + Ln[0]), rel=1e-12)


def test_transmission_kinds_follow_the_profile():
    """000 eq. 1–3: the net transmission is RDMA on IB, TCP (with two shm copies) on 10 GbE."""
    p2p = tlop.load("taulop/p2p")["p2p"]
    prof = tlop.load_profile("metropolis")
    oi, Li = IB[MIB]
    ot, Lt = TCP[MIB]
    _, Ls = SHM[MIB]
    assert p2p.evaluate(prof, m=MIB, c="net") == pytest.approx(oi + Li[0], rel=1e-14)
    assert p2p.evaluate(prof.with_bindings({"net": "tcp"}), m=MIB, c="net") == \
        pytest.approx(ot + 2 * Ls[0] + Lt[0], rel=1e-14)


def test_segmented_p2p_scatter_and_rda():
    prof = tlop.load_profile("metropolis")
    S = 8192.0
    _, L = SHM[S]
    m = 64 * S
    k = 64
    assert tlop.load("taulop/p2p")["p2p_segmented"].evaluate(prof, m=m, seg=S) == \
        pytest.approx(2 * L[0] + (k - 1) * L[1], rel=1e-13)
    P = 8
    sct = sum(k / 2 ** i * L[2 ** i - 1] for i in range(1, 4))
    assert tlop.load("taulop/scatter")["binomial_scatter"].evaluate(prof, P=P, m=m, seg=S) == \
        pytest.approx(sct, rel=1e-13)
    rda = tlop.load("taulop/allgather")["rd_allgather"].evaluate(prof, P=P, m=m, seg=S)
    assert rda == pytest.approx(2 * k * (P - 1) / P * L[P - 1], rel=1e-13)  # 002's closed form
    bound = tlop.load("taulop/scatter")["binomial_scatter_bound"].evaluate(prof, P=P, m=m, seg=S)
    assert rda == pytest.approx(2 * bound, rel=1e-13)  # Θ_RDA = 2·Θ′_Sct (002)


def g(m):
    return PLOGP_G0 + PLOGP_G1 * np.asarray(m, dtype=float)


P_VALUES = np.array([2, 3, 4, 7, 16, 33, 128], dtype=float)
M_VALUES = np.array([1, 100, 4096, 70000, 1048576, 3000000], dtype=float)


def _grid():
    return np.meshgrid(P_VALUES, M_VALUES, indexing="ij")


PLOGP_BCAST = {
    "flat": lambda P, m, s: (P - 1) * g(m) + PLOGP_L,
    "flat_rendezvous": lambda P, m, s: (P - 1) * g(m) + 2 * g(1) + 3 * PLOGP_L,
    "flat_segmented": lambda P, m, s: (P - 1) * (g(s) * np.ceil(m / s)) + PLOGP_L,
    "chain": lambda P, m, s: (P - 1) * (g(m) + PLOGP_L),
    "chain_rendezvous": lambda P, m, s: (P - 1) * (g(m) + 2 * g(1) + 3 * PLOGP_L),
    "chain_segmented": lambda P, m, s: (P - 1) * (g(s) + PLOGP_L) + g(s) * (np.ceil(m / s) - 1),
    "binary": lambda P, m, s: np.ceil(np.log2(P)) * (2 * g(m) + PLOGP_L),
    "binomial_closed": lambda P, m, s: np.floor(np.log2(P)) * g(m) + np.ceil(np.log2(P)) * PLOGP_L,
    "binomial_rendezvous": lambda P, m, s: np.floor(np.log2(P)) * g(m)
    + np.ceil(np.log2(P)) * (2 * g(1) + 3 * PLOGP_L),
    "binomial_segmented": lambda P, m, s: np.floor(np.log2(P)) * g(s) * np.ceil(m / s)
    + np.ceil(np.log2(P)) * PLOGP_L,
    "scatter_collect": lambda P, m, s: (np.log2(P) + P - 1) * PLOGP_L + 2 * ((P - 1) / P) * g(m),
}


@pytest.mark.parametrize("name", sorted(PLOGP_BCAST))
def test_plogp_broadcast_table1(name, plogp_profile):
    P, m = _grid()
    s = 1024.0
    alg = tlop.load("plogp/bcast")[name]
    args = {"P": P, "m": m}
    if any(p.name == "seg" for p in alg.params):
        args["seg"] = s
    got = alg.evaluate(plogp_profile, **args)
    np.testing.assert_allclose(got, PLOGP_BCAST[name](P, m, s), rtol=1e-12)


def test_plogp_table1_has_eleven_rows():
    """Table 1's eleven rows, and the schedules (tests/test_dataflow.py, test_schedule_closed_forms.py)."""
    mod = tlop.load("plogp/bcast")
    rows = {a for a in mod.own_algorithms if mod[a].ir.over is None}
    assert rows == set(PLOGP_BCAST)
    assert set(mod.own_algorithms) - rows == {"binomial", "linear", "binomial_openmpi", "linear_segm",
                                              "binomial_segm", "pipeline"}


def test_plogp_scatter_table2(plogp_profile):
    mod = tlop.load("plogp/scatter")
    P, m = _grid()
    np.testing.assert_allclose(mod["flat_scatter"].evaluate(plogp_profile, P=P, m=m),
                               (P - 1) * g(m) + PLOGP_L, rtol=1e-12)
    for Pi in P_VALUES:
        chain = sum(g(j * M_VALUES) for j in range(1, int(Pi))) + (Pi - 1) * PLOGP_L
        np.testing.assert_allclose(mod["chain_scatter"].evaluate(plogp_profile, P=Pi, m=M_VALUES), chain,
                                   rtol=1e-12)
        lg = math.ceil(math.log2(Pi))
        binom = sum(g(2 ** j * M_VALUES) for j in range(lg)) + lg * PLOGP_L
        np.testing.assert_allclose(mod["binomial_scatter"].evaluate(plogp_profile, P=Pi, m=M_VALUES), binom,
                                   rtol=1e-12)


def test_loggp():
    L, o, gap, G = 3e-6, 1e-6, 2e-6, 1e-9
    prof = synthetic_profile("loggp-test", scalars={"L": {"*": L}, "o": {"*": o}, "g": {"*": gap},
                                                    "G": {"*": G}})
    mod = tlop.load("loggp/p2p")
    m = M_VALUES
    np.testing.assert_allclose(mod["p2p"].evaluate(prof, m=m), L + 2 * o + (m - 1) * G, rtol=1e-13)
    S = 1024.0
    np.testing.assert_allclose(mod["p2p_segmented"].evaluate(prof, m=m, seg=S),
                               L + 2 * o + (S - 1) * G + (np.ceil(m / S) - 1) * (gap + (S - 1) * G), rtol=1e-13)
    np.testing.assert_allclose(mod["binomial_bcast"].evaluate(prof, P=P_VALUES[:, None], m=m),
                               np.ceil(np.log2(P_VALUES[:, None])) * (L + 2 * o + (m - 1) * G), rtol=1e-13)


def test_model_qualified_names_win():
    """A profile holding loggp.L and plogp.L serves each model its own L."""
    prof = synthetic_profile("both", scalars={"loggp.L": {"*": 1e-6}, "L": {"*": 9.0}, "o": {"*": 0.0},
                                              "g": {"*": 0.0}, "G": {"*": 0.0}},
                             tables={"g": {"*": {"m": [1, 2], "values": [0.0, 0.0]}}})
    assert tlop.load("loggp/p2p")["p2p"].evaluate(prof, m=1) == pytest.approx(1e-6)
    assert tlop.load("plogp/bcast")["flat"].evaluate(prof, P=2, m=1) == pytest.approx(9.0)
