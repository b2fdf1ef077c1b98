"""Paper 003 in the stdlib: path channels in profiles, the bundled summit and lassen profiles, and
every postal/max-rate algorithm against an independent numpy computation from Tables I–III."""

import json

import numpy as np
import pytest

import tlop
from tlop.runtime import bundled_postal
from tlop.runtime.errors import ProfileError
from tlop.runtime.profile import load_profile, profile_from_dict

from _tables_003 import MACHINES, RN, SIZES, T1, T2, THR, max_rate_n, memcpy, postal  # noqa: F401


@pytest.fixture(scope="module", params=MACHINES)
def machine(request):
    return request.param


def ev(mod, alg, machine, **kw):
    h = tlop.load(mod)[alg]
    return np.asarray(h.evaluate(load_profile(machine), **kw), dtype=float)


# ------------------------------------------------------------------ profiles with path channels

def test_bundled_postal_profiles_are_what_the_tables_build():
    assert bundled_postal.stale() == []


def test_path_channel_round_trips_and_reports_its_kind():
    p = load_profile("summit")
    assert all(c.is_path for c in p.channels.values())
    assert p.transmission_kind("cpu_off_node") == "path"
    again = profile_from_dict(json.loads(p.to_json()))
    assert again.fingerprint() == p.fingerprint()
    assert json.loads(p.to_json())["channels"]["gpu_off_node"] == {
        "path": True, "description": "GPU to GPU on two nodes with GPUDirect (003 Table I, off-node)"}


@pytest.mark.parametrize("channel,message", [
    ({"path": True, "transmission": "shm"}, "either 'transmission'"),
    ({"path": False}, "channels.x.path: expected true, got false"),
    ({"description": "nothing"}, "missing required key 'transmission' (or 'path': true"),
])
def test_bad_path_channels_are_reported_with_their_field(channel, message):
    with pytest.raises(ProfileError) as err:
        profile_from_dict({"tlop_profile": 1, "name": "p", "channels": {"x": channel}}, "p.json")
    assert message in str(err.value) and "p.json: channels.x" in str(err.value)


def test_a_transmission_on_a_path_channel_is_refused_clearly(tmp_path):
    src = tmp_path / "t.tlop"
    src.write_text("model taulop\nchannel cpu_off_node\nparam x[c: channel]: time\n"
                   "transmission T[cpu_off_node](m) via rdma = x[cpu_off_node]\n"
                   "algorithm a(m: bytes) = T[cpu_off_node](m)\n")
    prof = load_profile("summit")
    with pytest.raises(tlop.TlopError) as err:
        tlop.load(str(src))["a"].evaluate(prof, m=8)
    assert ("profile channel 'cpu_off_node' is a 'path' channel but T[cpu_off_node] is only defined via rdma"
            in str(err.value))


def test_provenance_states_the_assumed_thresholds_and_readings():
    for name in MACHINES:
        notes = load_profile(name).metadata["notes"]
        assert "NOT given by 003" in notes and "eager_max = 8192 B" in notes and "1/value" in notes
    assert "2.93e-10" in load_profile("summit").metadata["notes"]
    assert "3.93e-10" in load_profile("summit").metadata["notes"]
    assert "bound, not a measurement" in load_profile("lassen").metadata["notes"]


# ------------------------------------------------------------------ formulas (003 eq. 1–3, Tables I–II)

@pytest.mark.parametrize("path", ["cpu_on_socket", "cpu_on_node", "cpu_off_node", "gpu_on_socket",
                                  "gpu_on_node", "gpu_off_node"])
def test_postal_with_protocol_switching(machine, path):
    got = ev("postal/p2p", "postal", machine, s=SIZES, c=path)
    np.testing.assert_allclose(got, postal(machine, path, SIZES), rtol=1e-13)


@pytest.mark.parametrize("proto", ["short", "eager", "rend"])
def test_postal_with_a_forced_protocol(machine, proto):
    """postal_short, postal_eager and postal_rend: one protocol's Table I α and β at every size."""
    a, b = T1[machine]["cpu"][proto]
    got = ev("postal/p2p", f"postal_{proto}", machine, s=SIZES, c="cpu_on_node")
    np.testing.assert_allclose(got, a[1] + b[1] * SIZES, rtol=1e-13)


@pytest.mark.parametrize("ppn", [1, 2, 6, 40])
def test_max_rate_and_eq3(machine, ppn):
    np.testing.assert_allclose(ev("postal/p2p", "max_rate", machine, s=SIZES, ppn=ppn),
                               max_rate_n(machine, "cpu_off_node", 1, SIZES, ppn), rtol=1e-13)
    for n in (1, 7, 100):
        np.testing.assert_allclose(ev("postal/p2p", "max_rate_n", machine, n=n, s=SIZES, ppn=ppn, c="gpu_off_node"),
                                   max_rate_n(machine, "gpu_off_node", n, SIZES, ppn), rtol=1e-13)


def test_max_rate_reduces_to_postal_below_the_injection_limit(machine):
    # R_b·ppn < R_N: "this model reduces to the postal model" (003 §IV)
    np.testing.assert_allclose(ev("postal/p2p", "max_rate", machine, s=SIZES, ppn=1),
                               postal(machine, "cpu_off_node", SIZES), rtol=1e-13)


@pytest.mark.parametrize("path", ["h2d_on_socket", "h2d_off_socket", "d2h_on_socket", "d2h_off_socket"])
def test_memcpy(machine, path):
    np.testing.assert_allclose(ev("postal/p2p", "memcpy", machine, s=SIZES, c=path),
                               memcpy(machine, path, SIZES), rtol=1e-13)


@pytest.mark.parametrize("n", [1, 10, 100])
def test_gpudirect_and_three_step(machine, n):
    np.testing.assert_allclose(ev("postal/gpu", "gpudirect", machine, n=n, s=SIZES),
                               n * postal(machine, "gpu_off_node", SIZES), rtol=1e-13)
    three = memcpy(machine, "d2h_on_socket", n * SIZES) + n * postal(machine, "cpu_off_node", SIZES) \
        + memcpy(machine, "h2d_on_socket", n * SIZES)
    np.testing.assert_allclose(ev("postal/gpu", "three_step", machine, n=n, s=SIZES), three, rtol=1e-13)
    ppn = 6
    allc = memcpy(machine, "d2h_on_socket", n * SIZES / ppn) + max_rate_n(machine, "cpu_off_node", n, SIZES / ppn, ppn) \
        + memcpy(machine, "h2d_on_socket", n * SIZES / ppn)
    np.testing.assert_allclose(ev("postal/gpu", "three_step_all_cores", machine, n=n, s=SIZES, ppn=ppn), allc,
                               rtol=1e-13)


@pytest.mark.parametrize("N,G,C", [(2, 1, 1), (32, 6, 6), (32, 4, 10), (5, 3, 4)])
def test_alltoall_strategies(machine, N, G, C):
    s = SIZES
    tot = (N * G - 1) * s
    cuda = (G - 1) * postal(machine, "gpu_on_node", s) + max_rate_n(machine, "gpu_off_node", (N - 1) * G, s, G)
    cpu = (G - 1) * postal(machine, "cpu_on_node", s) + max_rate_n(machine, "cpu_off_node", (N - 1) * G, s, G)
    split = (G - 1) * postal(machine, "cpu_on_node", s / C) \
        + max_rate_n(machine, "cpu_off_node", (N - 1) * G, s / C, G * C)
    spread = np.ceil((G - 1) / C) * postal(machine, "cpu_on_node", s) \
        + max_rate_n(machine, "cpu_off_node", np.ceil((N - 1) * G / C), s, G * C)
    d2h, h2d = (lambda x: memcpy(machine, "d2h_on_socket", x)), (lambda x: memcpy(machine, "h2d_on_socket", x))
    redistribute = 2 * (C - 1) * postal(machine, "cpu_on_socket", tot / C)
    want = {
        "cuda_aware_alltoall": cuda,
        "three_step_alltoall": d2h(tot) + cpu + h2d(tot),
        "extra_msg_alltoall": d2h(tot) + redistribute + split + h2d(tot),
        "dup_devptr_alltoall": d2h(tot / C) + split + h2d(tot / C),
        "extra_msg_alltoallv": d2h(tot) + redistribute + spread + h2d(tot),
        "dup_devptr_alltoallv": d2h(tot / C) + spread + h2d(tot / C),
    }
    for alg, w in want.items():
        kw = {"N": N, "G": G, "s": s, **({"C": C} if "cuda" not in alg and "three" not in alg else {})}
        np.testing.assert_allclose(ev("postal/alltoall", alg, machine, **kw), w, rtol=1e-12, err_msg=alg)
