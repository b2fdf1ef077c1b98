"""Reductions in LogGP and pLogP on a bundled profile: the measured example has γ (tlop measure
``--bench gamma``), so ``loggp/reduce``, ``loggp/allreduce``, ``plogp/reduce`` and
``plogp/allreduce`` price on it, and equal costs worked out here from the model definitions,
the profile's parameters and its γ table (read with numpy, not through the engine).

LogGP on this profile is gap-free (g ≤ L + 2o), so a tree costs its critical path: a hop
2o + L + (m − 1)G, then γ(m) at the receiver.  pLogP, every rank of a stage starting together:
a message sent at t is received at max(t + g(m) + L, the receiver's processor free + or(m)), a
sender's processor is busy os(m) from the start of its send (in an exchange, before its receive),
and the cost is the time the last processor finishes.
"""

import math

import numpy as np
import pytest

import tlop

PROF = tlop.load_profile("localhost-example")
POW2 = [2, 4, 8, 16, 32]
SIZES = [4.0, 1000.0, 65536.0, 1 << 20]


def _table(name):
    raw = PROF.to_dict()["tables"][name]["*"]
    return lambda m: float(np.interp(m, raw["m"], raw["values"]))


gamma = _table("gamma")
g_p, os_p, or_p = _table("plogp.g"), _table("plogp.os"), _table("plogp.or_")
L_p = PROF.scalar("plogp.L")
L, o, g, G = (PROF.scalar(f"loggp.{k}") for k in ("L", "o", "g", "G"))


def hop(m):
    return 2 * o + L + (m - 1) * G


def _eval(model, coll, name, P, m, **kw):
    h = tlop.load(f"{model}/{coll}")[name]
    return float(h.evaluate(PROF, P=P, m=m, mapping=tlop.sequential(4), **kw))


def test_the_example_prices_reductions_in_every_model():
    assert PROF.has_table("gamma") and g <= L + 2 * o
    for model in ("taulop", "loggp", "plogp"):
        for coll in ("reduce", "allreduce"):
            mod = tlop.load(f"{model}/{coll}")
            assert all(mod[a].applies_to(PROF) for a in mod.own_algorithms if mod[a].ir.over is not None)


@pytest.mark.parametrize("m", SIZES)
def test_loggp_reductions_by_hand(m):
    for P in POW2:
        n = int(math.log2(P))
        close = lambda coll, name, want: _eval("loggp", coll, name, P, m) == pytest.approx(want, rel=1e-12)
        assert close("reduce", "binomial_openmpi", n * (hop(m) + gamma(m)))
        assert close("allreduce", "rda", n * (hop(m) + gamma(m)))
        b = m / P
        assert close("allreduce", "ring", (P - 1) * (hop(b) + gamma(b)) + (P - 1) * hop(b))
        want = sum(hop(m / 2 ** (s + 1)) + gamma(m / 2 ** (s + 1)) for s in range(n))
        want += sum(hop(m / 2 ** (s + 1)) for s in range(n))
        assert close("allreduce", "rabenseifner", want)


@pytest.mark.parametrize("m", SIZES)
def test_plogp_reductions_by_hand(m):
    for P in POW2:
        n = int(math.log2(P))
        close = lambda coll, name, want: _eval("plogp", coll, name, P, m) == pytest.approx(want, rel=1e-12)
        # a tree: the receiver is idle when the message arrives; the cost is the last processor
        # to finish: the root, or the last sender, busy os(m) from the start of its send
        stage = max(g_p(m) + L_p, or_p(m)) + gamma(m)
        assert close("reduce", "binomial_openmpi", max(n * stage, (n - 1) * stage + os_p(m)))
        # an exchange: the receive waits for the message and for the processor's own send
        assert close("allreduce", "rda", n * (max(g_p(m) + L_p, os_p(m) + or_p(m)) + gamma(m)))


def test_reduce_op_selects_the_measured_operation():
    """--reduce-op max reads gamma_max (tlop measure times sum, max, min and prod)."""
    assert set(PROF.reduce_ops()) == {"sum", "max", "min", "prod"}
    mx = PROF.with_reduce_op("max")
    got = float(tlop.load("loggp/reduce")["binomial_openmpi"].evaluate(mx, P=8, m=65536.0, mapping=tlop.sequential(4)))
    assert got == pytest.approx(3 * (hop(65536.0) + _table("gamma_max")(65536.0)), rel=1e-12)
