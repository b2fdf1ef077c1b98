"""LogGPH (paper 002): one LogGP parameter set per channel; the ring allgather from its schedule
under both mappings (against an independent simulation of the LogGP dataflow rules with each
send's channel's parameters) and 002's closed forms (against numpy)."""

import numpy as np
import pytest

import tlop
from conftest import synthetic_profile

PAR = {"shm": dict(L=1e-6, o=0.5e-6, g=0.2e-6, G=1e-10), "net": dict(L=5e-6, o=2e-6, g=1e-6, G=1e-9)}
MOD = tlop.load("loggph/allgather")


@pytest.fixture(scope="module")
def prof():
    return synthetic_profile("loggph", channels={"shm": {"transmission": "shm"}, "net": {"transmission": "rdma"}},
                             scalars={f"loggph.{k}": {c: PAR[c][k] for c in PAR} for k in "LogG"})


def p2p(c, m):
    p = PAR[c]
    return p["L"] + 2 * p["o"] + (m - 1) * p["G"]


def simulate_ring(P, m, node_of):
    """The LogGP dataflow rules (docs/semantics.rst), written out for the ring: per stage every
    rank sends to p + 1 (start max(cpu, next_send), busy o, next send after the gap), then
    receives (max of delivery, cpu + o, last receive + gap), parameters of the send's channel."""
    cpu, nxt, last = np.zeros(P), np.zeros(P), np.full(P, -np.inf)
    for _ in range(P - 1):
        start = np.zeros(P)
        for p in range(P):
            t = max(cpu[p], nxt[p])
            c = "shm" if node_of(p) == node_of((p + 1) % P) else "net"
            q = PAR[c]
            start[p] = t
            cpu[p] = t + q["o"]
            nxt[p] = t + max(q["o"], q["g"] + (m - 1) * q["G"])
        for p in range(P):
            src = (p - 1) % P
            c = "shm" if node_of(src) == node_of(p) else "net"
            q = PAR[c]
            end = max(start[src] + 2 * q["o"] + q["L"] + (m - 1) * q["G"], cpu[p] + q["o"],
                      last[p] + max(q["o"], q["g"] + (m - 1) * q["G"]))
            cpu[p] = last[p] = end
    return cpu.max()


@pytest.mark.parametrize("P,Q", [(2, 1), (4, 2), (8, 4), (12, 3), (9, 9)])
@pytest.mark.parametrize("m", [1, 1024, 1 << 20])
def test_ring_schedule_under_both_mappings(prof, P, Q, m):
    M = max(1, P // Q)
    seq = MOD["ring"].evaluate(prof, P=P, m=m, mapping=tlop.sequential(Q))
    assert seq == pytest.approx(simulate_ring(P, m, lambda p: p // Q), rel=1e-13)
    rr = MOD["ring"].evaluate(prof, P=P, m=m, mapping=tlop.round_robin(nodes=M))
    assert rr == pytest.approx(simulate_ring(P, m, lambda p: p % M), rel=1e-13)
    if M >= 2:  # round robin: every send crosses the network; the stages pipeline, one p2p each
        assert rr == pytest.approx((P - 1) * p2p("net", m), rel=1e-13)


@pytest.mark.parametrize("P", [2, 8, 64])
def test_002_closed_forms(prof, P):
    m = np.array([1.0, 1024.0, 1 << 20])
    np.testing.assert_allclose(MOD["ring_sequential"].evaluate(prof, P=P, m=m),
                               (P - 1) * (p2p("shm", m) + p2p("net", m)), rtol=1e-13)
    np.testing.assert_allclose(MOD["ring_round_robin"].evaluate(prof, P=P, m=m),
                               (P - 1) * 2 * p2p("net", m), rtol=1e-13)


def test_the_schedule_is_below_002s_serialised_forms(prof):
    """002 adds a stage's send and receive; the dataflow lets them overlap and the stages
    pipeline, so the schedule's price is lower (docs/papers.rst says by how much)."""
    for P, Q in ((8, 4), (16, 4), (32, 8)):
        m = 65536
        assert MOD["ring"].evaluate(prof, P=P, m=m, mapping=tlop.sequential(Q)) < \
            MOD["ring_sequential"].evaluate(prof, P=P, m=m)
        assert MOD["ring"].evaluate(prof, P=P, m=m, mapping=tlop.round_robin(nodes=P // Q)) < \
            MOD["ring_round_robin"].evaluate(prof, P=P, m=m)


def test_measured_profile_has_one_loggp_set_per_channel():
    p = tlop.load_profile("localhost-example")
    for k in "LogG":
        assert p.scalar(f"loggph.{k}", "shm") == p.fits["loggp"]["shm"][k]
        assert p.scalar(f"loggph.{k}", "tcp") == p.fits["loggp"]["tcp"][k]
    assert MOD["ring"].evaluate(p, P=8, m=1024, mapping=tlop.sequential(4)) > 0


def test_a_platform_mixing_arities_is_refused(tmp_path):
    src = tmp_path / "x.tlop"
    src.write_text("model loggph\nchannel shm within node\nchannel net between nodes\nparam o[c: channel]: time\n"
                   "algorithm send_overhead(m: bytes, c: channel) = o[c]\nalgorithm send_gap(m: bytes) = 1us\n"
                   "algorithm delivery(m: bytes) = 1us\nalgorithm recv_overhead(m: bytes) = 1us\n"
                   "algorithm r(P: int >= 2, m: bytes) over map: mapping = stage { send 0 -> 1 : m }\n")
    prof = synthetic_profile("x", channels={"shm": {"transmission": "shm"}, "net": {"transmission": "rdma"}},
                             scalars={"o": {"*": 1e-6}})
    with pytest.raises(tlop.TlopError) as err:
        tlop.load(str(src))["r"].evaluate(prof, P=2, m=8, mapping=tlop.sequential(1))
    assert "must all take a channel or none do" in str(err.value)
