"""Reading tables as libtaulop does (libtaulop-semantics.md §1, §2.2, §3): the profile options
behind ``--libtaulop-compat`` (τ clamp, 4 MiB chunks, float32 numbers) and ``--reduce-op``.

The expected numbers are computed by hand from the raw libtaulop files, read independently here
(every number through numpy.float32, as libtaulop's ``stof``)."""

import json
import math

import numpy as np
import pytest

import tlop
from tlop.cli.main import main
from tlop.runtime import bundled
from tlop.runtime.profile import LIBTAULOP_INTERPOLATION, ProfileError, profile_from_dict

MiB = 1024 * 1024
S_MAX = 4 * MiB


def raw_rows(cluster, name, f32=True):
    """size -> row of numbers after the size, from a raw libtaulop file."""
    conv = (lambda x: float(np.float32(x))) if f32 else float
    out = {}
    for line in (bundled.raw_dir(cluster) / name).read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            nums = [conv(x) for x in line.split()]
            out[nums[0]] = nums[1:]
    return out


@pytest.fixture(scope="module")
def metropolis():
    return tlop.load_profile("metropolis")


@pytest.fixture(scope="module")
def compat(metropolis):
    return metropolis.with_libtaulop_compat()


def T_shm(p, m, tau):
    """T^shm(m, τ) = o(m) + 2·L(m, τ), on tables of profile p."""
    return float(p.table("o", "shm").lookup(m) + 2 * p.table("L", "shm").lookup(m, tau))


def test_compat_is_the_three_rules_and_float32(metropolis, compat):
    assert LIBTAULOP_INTERPOLATION == {"m_below": "clamp", "m_beyond": "chunks", "tau_beyond": "clamp"}
    assert compat.interpolation.m_beyond == "chunks" and compat.interpolation.tau_beyond == "clamp"
    assert compat.interpolation.m_below == "clamp"
    assert metropolis.interpolation.m_beyond == "linear"          # the loaded profile is untouched
    shm = raw_rows("metropolis", "SHM.txt")
    assert compat.table("L", "shm").values[5].tolist() == shm[1024][1:]
    assert compat.table("o", "shm").values[5] == shm[1024][0]
    assert compat.table("o", "shm").values[5] != metropolis.table("o", "shm").values[5]
    assert compat.fingerprint() != metropolis.fingerprint()


def test_chunks_at_two_and_a_half_s_max_and_9_mib_by_hand(compat):
    shm = raw_rows("metropolis", "SHM.txt")

    def T(m, tau):  # a grid point, straight from the file
        return shm[m][0] + 2 * shm[m][tau]

    for tau in (1, 3, 8):
        # 2.5·s_max = 2·s_max + 2 MiB; 9 MiB = 2·s_max + 1 MiB (2 MiB and 1 MiB are grid points)
        assert T_shm(compat, 2.5 * S_MAX, tau) == pytest.approx(2 * T(S_MAX, tau) + T(2 * MiB, tau), rel=1e-15)
        assert T_shm(compat, 9 * MiB, tau) == pytest.approx(2 * T(S_MAX, tau) + T(MiB, tau), rel=1e-15)
    # a remainder between grid points interpolates: 9 MiB + 1000 B = 2·s_max + (1 MiB + 1000 B)
    o = shm[MiB][0] + (shm[1572864][0] - shm[MiB][0]) * 1000 / (1572864 - MiB)
    assert compat.table("o", "shm").lookup(9 * MiB + 1000) == pytest.approx(2 * shm[S_MAX][0] + o, rel=1e-15)


def test_chunks_differ_from_the_default_linear_extension(metropolis, compat):
    lin = metropolis.with_float32()
    for m in (S_MAX + 1, 6 * MiB, 9 * MiB, 16 * MiB):
        assert T_shm(compat, m, 1) != pytest.approx(T_shm(lin, m, 1), rel=1e-3)
    for m in (1, 3000, S_MAX):  # inside the grid the rules agree exactly
        assert T_shm(compat, m, 1) == T_shm(lin, m, 1)


def test_tau_clamp_and_proportional_differ_beyond_tau_max(metropolis, compat):
    L = metropolis.table("L", "shm")
    assert L.policy.tau_beyond == "proportional" and L.tau[-1] == 8
    Lc = metropolis.with_interpolation(tau_beyond="clamp").table("L", "shm")
    for m in (1, 1024, 65536):
        assert Lc.lookup(m, 12) == Lc.lookup(m, 8) == L.lookup(m, 8)
        assert L.lookup(m, 12) == pytest.approx(L.lookup(m, 8) * 12 / 8, rel=1e-15)
        assert Lc.lookup(m, 8) == L.lookup(m, 8)        # up to tau_max they agree
    # an algorithm: a ring on one 16-core node has tau = 16 > 8
    ring = tlop.load("taulop/allgather")["ring_allgather_node"]
    prop = ring.evaluate(metropolis, P=16, m=65536)
    clamped = ring.evaluate(compat, P=16, m=65536)
    assert clamped == pytest.approx(15 * T_shm(compat, 65536, 8), rel=1e-15)
    assert prop > 1.5 * clamped


def test_compat_is_the_same_in_the_jit(compat):
    pytest.importorskip("llvmlite")
    for file, name, P in (("taulop/bcast", "linear_bcast", 5), ("taulop/bcast", "binomial_bcast", 8),
                          ("taulop/allgather", "ring_allgather_node", 8)):
        alg = tlop.load(file)[name]
        ev = alg.compile(compat)
        for m in (0, 1, 100, S_MAX, S_MAX + 1, 2.5 * S_MAX, 9 * MiB, 16 * MiB + 3, 1e12):
            assert float(ev(P=P, m=m)) == pytest.approx(alg.evaluate(compat, P=P, m=m), rel=1e-12), (name, m)


# ---------------------------------------------------------------------- float32
def test_with_float32_rounds_every_number(metropolis):
    p32 = metropolis.with_float32()
    for name in p32.table_names():
        for ch in (None, "shm", "tcp", "ib"):
            if p32.has_table(name, ch):
                a, b = metropolis.table(name, ch), p32.table(name, ch)
                assert np.array_equal(b.values, a.values.astype(np.float32).astype(np.float64))
                assert np.array_equal(b.m, a.m)                     # sizes are whole numbers < 2^24
    assert p32.interpolation == metropolis.interpolation
    small = profile_from_dict({"tlop_profile": 1, "name": "s", "scalars": {"L": {"*": 0.1}},
                               "tables": {"g": {"*": {"m": [1, 16777216, 16777217], "values": [1, 2, 3]}}}})
    with pytest.raises(ProfileError, match=r"table g\[\*\]: two m grid points round to the same float32"):
        small.with_float32()
    big = profile_from_dict({"tlop_profile": 1, "name": "b", "scalars": {"L": {"*": 1e300}}})
    with pytest.raises(ProfileError, match=r"parameter L\[\*\] does not fit in a float32"):
        big.with_float32()
    assert profile_from_dict({"tlop_profile": 1, "name": "s", "scalars": {"L": {"*": 0.1}}}
                             ).with_float32().scalar("L") == float(np.float32(0.1))


# ---------------------------------------------------------------------- reduction operations
def test_gamma_defaults_to_sum_and_the_operation_is_selectable(metropolis):
    g = raw_rows("metropolis", "gamma.txt", f32=False)
    rows = [g[s] for s in sorted(g)]
    assert metropolis.reduce_op is None
    assert metropolis.table("gamma").values.tolist() == [r[2] for r in rows]      # SUM_I
    for op, col in (("max_i", 0), ("MAX_R", 12), ("sum_r", 14), ("sum_i", 2)):
        q = metropolis.with_reduce_op(op)
        assert q.reduce_op == op.lower()
        assert q.table("gamma").values.tolist() == [r[col] for r in rows]
        assert q.table("gamma").lookup(3000.0) == q.table(f"gamma_{op.lower()}").lookup(3000.0)
        assert tlop.load_profile("metropolis").table("gamma").values.tolist() == [r[2] for r in rows]
    q = metropolis.with_reduce_op("max_i")
    assert q.fingerprint() != metropolis.fingerprint()
    assert metropolis.with_reduce_op("sum_i").fingerprint() == metropolis.fingerprint()
    # the choice survives the other copies and a save/load round trip (as the gamma values)
    r = q.with_libtaulop_compat().with_bindings({"net": "tcp"})
    assert r.reduce_op == "max_i" and r.table("gamma").values[3] == np.float32(rows[3][0])
    assert profile_from_dict(q.to_dict()).table("gamma").values.tolist() == [r_[0] for r_ in rows]
    lus = tlop.load_profile("lusitania")
    assert lus.reduce_ops()[:3] == ["max", "min", "sum"] and lus.with_reduce_op("max").reduce_op == "max"


def test_reduce_op_errors(metropolis):
    with pytest.raises(ProfileError, match=r"profile 'metropolis' has no reduction operation 'max' "
                                           r"\(a table gamma_max\); it has: max_i, min_i, sum_i"):
        metropolis.with_reduce_op("max")
    bare = profile_from_dict({"tlop_profile": 1, "name": "bare",
                              "tables": {"gamma": {"*": {"m": [1], "values": [1e-9]}}}})
    assert bare.reduce_ops() == []
    with pytest.raises(ProfileError, match="profile 'bare' has no per-operation reduction tables"):
        bare.with_reduce_op("sum")


# ---------------------------------------------------------------------- command line
def _eval_json(capsys, *extra):
    assert main(["eval", "taulop/bcast", "linear_bcast", "P=4", "m=9MiB", "--json", "--engine", "interp",
                 *extra]) == 0
    return json.loads(capsys.readouterr().out)["seconds"]


def test_cli_libtaulop_compat(capsys, compat, metropolis):
    plain = _eval_json(capsys)
    assert plain == pytest.approx(3 * T_shm(metropolis, 9 * MiB, 1), rel=1e-15)
    got = _eval_json(capsys, "--libtaulop-compat")
    assert got == pytest.approx(3 * T_shm(compat, 9 * MiB, 1), rel=1e-15)
    assert got != pytest.approx(plain, rel=1e-3)
    # the flag exists on sweep and best too
    assert main(["sweep", "taulop/bcast", "linear_bcast", "P=4", "m=9MiB", "--libtaulop-compat",
                 "--engine", "interp", "--csv", "-"]) == 0
    assert f"{got!r}"[:10] in capsys.readouterr().out
    assert main(["best", "taulop/bcast", "P=4", "m=9MiB", "--libtaulop-compat", "--engine", "interp"]) == 0
    capsys.readouterr()


def test_cli_reduce_op_errors_are_diagnostics(capsys):
    # the stdlib reads no gamma yet, so a valid operation changes nothing here
    assert _eval_json(capsys, "--reduce-op", "MAX_R") == _eval_json(capsys)
    assert main(["eval", "taulop/bcast", "linear_bcast", "P=4", "m=1KiB", "--reduce-op", "max"]) == 1
    err = capsys.readouterr().err
    assert "no reduction operation 'max'" in err and "max_i" in err and "Traceback" not in err
