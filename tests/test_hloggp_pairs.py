"""HLogGP with parameters per pair of node types (tlop.runtime.hloggp, kernels/hloggp): the
profile section and its validation, the keying for a layout, and the kernels against an
independent numpy computation of the same messages on random small configurations."""

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tlop
from tlop.cli.main import main
from tlop.runtime.configs import _Doc, _layout, load_config
from tlop.runtime.errors import ProfileError
from tlop.runtime.hloggp import for_mapping
from tlop.runtime.partition import column_partition
from tlop.runtime.profile import load_profile, profile_from_dict
from conftest import replace_any_value

KERNELS = tlop.load("kernels/hloggp")


def _profile(pairs, name="random"):
    return profile_from_dict({"tlop_profile": 1, "name": name, "hloggp": {"pairs": pairs}})


@st.composite
def configurations(draw):
    """A random layout (1-3 node types, 1-4 nodes, 2-7 ranks), a column partition of random
    speeds, and HLogGP parameters for every pair of its node types."""
    K = draw(st.integers(1, 3))
    M = draw(st.integers(1, 4))
    P = draw(st.integers(2, 7))
    node_types = [draw(st.integers(0, K - 1)) for _ in range(M)]
    ranks = [draw(st.integers(0, M - 1)) for _ in range(P)]
    data = {"tlop_layout": 1, "node_types": {f"t{k}": {"cores": 0} for k in range(K)},
            "nodes": {f"n{n}": {"type": f"t{node_types[n]}"} for n in range(M)},
            "ranks": [{"node": f"n{r}"} for r in ranks]}
    cfg = _layout(_Doc(json.dumps(data), "<random>"), data, "<random>")
    N = draw(st.integers(P, 14))
    speeds = draw(st.lists(st.floats(0.5, 8.0), min_size=P, max_size=P))
    cfg = cfg.with_partition(column_partition(speeds, N))
    pairs = []
    for a in range(K):
        for b in range(K):
            for c in (("shm", "net") if a == b else ("net",)):
                pairs.append({"from": f"t{a}", "to": f"t{b}", "channel": c,
                              "L": draw(st.floats(1e-7, 1e-5)), "o_s": draw(st.floats(1e-8, 1e-5)),
                              "o_r": draw(st.floats(1e-8, 1e-5)), "G": draw(st.floats(0.0, 1e-9))})
    return cfg, pairs


def _message(cfg, params, p, q, m):
    """o_s + L + (m − 1)·G + o_r of the pair (type of p, type of q) and link, from the JSON."""
    tp, tq = (cfg.type_names[cfg.node_type[r]] for r in (p, q))
    link = "shm" if cfg.node[p] == cfg.node[q] else "net"
    v = next(x for x in params if (x["from"], x["to"], x["channel"]) == (tp, tq, link))
    return v["o_s"] + v["L"] + max(m - 1.0, 0.0) * v["G"] + v["o_r"]


def _overlap(a0, a1, b0, b1):
    return max(0, min(a1, b1) - max(a0, b0))


def numpy_summa(cfg, params, b):
    """Σ_k (max over owners of pivot column k of the sum of its row messages) + (max over owners
    of pivot row k of the sum of its column messages): 000 §4.1 end, iteration by iteration."""
    part = cfg.partition
    x, y, w, h = (np.asarray(v) for v in (part.x, part.y, part.w, part.h))
    total = 0.0
    for k in range(part.N):
        pbc = [sum(_message(cfg, params, p, q, _overlap(y[p], y[p] + h[p], y[q], y[q] + h[q]) * b)
                   for q in range(cfg.P) if q != p and _overlap(y[p], y[p] + h[p], y[q], y[q] + h[q]) > 0)
               for p in range(cfg.P) if x[p] <= k < x[p] + w[p]]
        pbr = [sum(_message(cfg, params, p, q, _overlap(x[p], x[p] + w[p], x[q], x[q] + w[q]) * b)
                   for q in range(cfg.P) if q != p and _overlap(x[p], x[p] + w[p], x[q], x[q] + w[q]) > 0)
               for p in range(cfg.P) if y[p] <= k < y[p] + h[p]]
        total += max(pbc, default=0.0) + max(pbr, default=0.0)
    return total


def numpy_wave(cfg, params, T, e):
    """T × max over processes of the sum of their messages to their neighbours (000 §4.2 end);
    neighbours from a grid of block owners, not from the rectangles' arithmetic."""
    part = cfg.partition
    owner = np.full((part.N, part.N), -1)
    for p in range(cfg.P):
        owner[part.y[p]:part.y[p] + part.h[p], part.x[p]:part.x[p] + part.w[p]] = p
    border = np.zeros((cfg.P, cfg.P), dtype=int)
    for a, b in ((owner[:, :-1], owner[:, 1:]), (owner[:-1, :], owner[1:, :])):  # adjacent blocks
        for p, q in zip(a.ravel(), b.ravel()):
            if p != q:
                border[p, q] += 1
                border[q, p] += 1
    per = [sum(_message(cfg, params, p, q, border[p, q] * e) for q in range(cfg.P) if q != p and border[p, q])
           for p in range(cfg.P)]
    return T * max(per)


@settings(max_examples=40, deadline=None)
@given(configurations(), st.sampled_from([1.0, 8.0, 8192.0]), st.integers(0, 3))
def test_kernels_agree_with_numpy(case, b, T):
    cfg, pairs = case
    prof = _profile(pairs)
    got = KERNELS["summa_hloggp_pairs"].evaluate(prof, P=cfg.P, b=b, mapping=cfg)
    assert got == pytest.approx(numpy_summa(cfg, pairs, b), rel=1e-12)
    got = KERNELS["wave2d_hloggp_pairs"].evaluate(prof, P=cfg.P, T=T, e=b, mapping=cfg)
    assert got == pytest.approx(numpy_wave(cfg, pairs, T, b), rel=1e-12, abs=1e-300)


def test_example_profile_on_the_table1_configurations(capsys):
    prof = load_profile("examples/fermi-hloggp")
    assert "assumed" in prof.hloggp.provenance.lower() and "metropolis" in prof.metadata["source"]
    params = json.loads(prof.to_json())["hloggp"]["pairs"]
    cfg = load_config("M3").select_partition("summa", 128)
    want = numpy_summa(cfg, params, 8192.0)
    assert KERNELS["summa_hloggp_pairs"].evaluate(prof, P=cfg.P, b=8192.0, mapping=cfg) == pytest.approx(want, rel=1e-12)
    assert main(["sweep", "kernels/hloggp", "summa_hloggp_pairs", "N=128", "b=8KiB", "--config", "M3",
                 "--profile", "examples/fermi-hloggp", "--csv", "-"]) == 0
    assert float(capsys.readouterr().out.splitlines()[1].split(",")[-1]) == pytest.approx(want, rel=1e-12)
    # the node types of fermi8 and fermi12 price differently
    fast = {k: v for k, v in params[0].items()}
    assert any(p["o_s"] != fast["o_s"] for p in params if p["channel"] == "shm")


def test_missing_pair_names_the_types():
    cfg = load_config("M3").select_partition("summa", 128)  # fermi12 and fermi8 nodes
    pairs = [{"from": "fermi12", "to": "fermi12", "channel": c, "L": 1e-6, "o_s": 1e-7, "o_r": 1e-7, "G": 1e-10}
             for c in ("shm", "net")]
    with pytest.raises(ProfileError, match="no HLogGP parameters for messages from a node of type 'fermi12' to a "
                                           "node of type 'fermi8' \\(net\\)"):
        for_mapping(_profile(pairs), cfg)
    # a profile without the section: the kernels' tables are missing, said at the table
    with pytest.raises(tlop.TlopError, match="hloggp_.* is missing from profile 'metropolis'"):
        KERNELS["summa_hloggp_pairs"].evaluate("metropolis", P=cfg.P, b=8.0, mapping=cfg)


GOOD = {"from": "a", "to": "b", "channel": "net", "L": 1e-6, "o_s": 1e-7, "o_r": 1e-7, "G": 1e-10}


@pytest.mark.parametrize("change, message", [
    (lambda p: p.update(G=-1), "hloggp.pairs[1].G: expected a number >= 0 (seconds per byte), got -1"),
    (lambda p: p.update(L="1us"), "hloggp.pairs[1].L: expected a finite number, got '1us'"),
    (lambda p: p.update(channel="ib"), "hloggp.pairs[1].channel: expected \"shm\" (a message within a node) or "
                                       "\"net\""),
    (lambda p: p.update(channel="shm"), "hloggp.pairs[1].to: a shared-memory message stays on one node"),
    (lambda p: p.pop("o_r"), "hloggp.pairs[1]: missing required key 'o_r'"),
    (lambda p: p.update(g=1), "hloggp.pairs[1].g: unknown key"),
    (lambda p: p.update(to="a", **{"from": "b"}), "hloggp.pairs[1]: the pair b -> a on net is given twice "
                                                  "(also hloggp.pairs[0])"),
])
def test_section_errors_name_the_field(change, message):
    first = dict(GOOD, **{"from": "b", "to": "a"})
    bad = dict(GOOD)
    change(bad)
    with pytest.raises(ProfileError) as err:
        _profile([first, bad], name="x")
    assert message in str(err.value), str(err.value)


def test_section_round_trips_and_changes_the_fingerprint():
    prof = _profile([GOOD])
    again = profile_from_dict(json.loads(prof.to_json()))
    assert again.hloggp == prof.hloggp
    other = _profile([dict(GOOD, L=2e-6)])
    assert prof.fingerprint() != other.fingerprint()
    with pytest.raises(ProfileError, match="hloggp.pairs: expected a non-empty list"):
        profile_from_dict({"tlop_profile": 1, "name": "x", "hloggp": {"pairs": []}})


def test_models_without_the_tables_are_not_keyed():
    """A profile with an hloggp section prices other models as before, on any layout: only a
    program declaring the HLogGP tables has them keyed (and can miss a pair)."""
    prof = _profile([GOOD])  # types a, b: not fig8's (which has none) nor M3's
    cfg = load_config("M3").select_partition("summa", 128)
    summa = tlop.load("kernels/summa")
    assert for_mapping(prof, cfg, summa.program) is prof
    with pytest.raises(ProfileError, match="no HLogGP parameters"):
        for_mapping(prof, cfg, KERNELS.program)
    assert for_mapping(prof, tlop.sequential(4), KERNELS.program) is prof


def test_profiles_command_shows_the_pairs(capsys):
    assert main(["profiles", "examples/fermi-hloggp"]) == 0
    out = capsys.readouterr().out
    assert "hloggp:    6 pairs of node types (fermi12, fermi8)" in out
    assert "fermi8 -> fermi12 (net): L 1.710 µs, o_s 944.0 ns, o_r 847.0 ns, G 3.16e-10 s/B" in out
    assert main(["profiles", "examples/fermi-hloggp", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["hloggp"]["pairs"]) == 6


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 30), st.recursive(st.none() | st.booleans() | st.integers(-5, 10 ** 400)
                                        | st.floats(allow_nan=True) | st.text(max_size=5),
                                        lambda kids: st.lists(kids, max_size=3)
                                        | st.dictionaries(st.text(max_size=5), kids, max_size=3), max_leaves=8))
def test_any_mangled_section_is_a_profile_error(which, value):
    """Replacing any value of a valid section by any JSON value gives a profile or a
    ProfileError, never another exception."""
    data = {"pairs": [dict(GOOD), dict(GOOD, to="a", **{"from": "b"})], "description": "d"}
    replace_any_value(data, which, value)
    try:
        profile_from_dict({"tlop_profile": 1, "name": "x", "hloggp": data})
    except ProfileError as err:
        assert err.diagnostics[0].message.startswith("x") or "hloggp" in str(err)
