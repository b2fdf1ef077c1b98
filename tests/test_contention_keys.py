"""The schedule semantics is written once (tlop.ir.taulop): a contention key added to the one table
(tlop.ir.taulop.contention.KEYS) is priced identically by every engine — the interpreter's sort
(the oracle), its counting reduction, the JIT (enumerating, and with closed forms where they
exist), the closed forms themselves and ``tlop explain`` — and no engine keeps its own copy of
the key table, its defaults or the channel choice of a send."""

import dataclasses
import math
import pathlib
import re

import pytest

import tlop
from tlop import ir
from tlop.analysis.closedform import derive
from tlop.analysis.stages import explain_stages, explanation_lines
from tlop.backends.binding import bind_mapping
from tlop.backends.interp import Interpreter
from tlop.backends.jit import compile_algorithm
from tlop.ir.taulop import contention
from tlop.runtime.profile import load_profile

ROOT = pathlib.Path(__file__).resolve().parents[1]

SOURCE = """model taulop
channel shm within node contention node
channel net between nodes contention dst_node
table o[c: channel](m: bytes) -> time
table L[c: channel](m: bytes, tau: int) -> time
transmission T[shm](m) = o[shm](m) + 2 * L[shm](m, 1)
transmission T[net](m) = o[net](m) + L[net](m, 1)
algorithm ring(P: int >= 2, m: bytes) over map: mapping =
    stages k in 0 .. P - 2 { par p in 0 .. P - 1: send p -> (p + 1) % P : m }
algorithm doubling(P: int >= 2, m: bytes) over map: mapping =
    stages s in 0 .. ceil(log2(P)) - 1 { par p in 0 .. P - 1: send p -> p xor (1 << s) : m }
algorithm gather(P: int >= 2, m: bytes) over map: mapping =
    stage { par p in 1 .. P - 1: send p -> (p * 3) % P : m * p }
"""

MODULE = tlop.loads(SOURCE, "keys.tlop")
PROFILE = load_profile("metropolis")

#: toy keys, each one entry of the table: ``sender`` (per node, so closed forms count it) and
#: ``pair`` (racks of two nodes: a transfer counts in the rack it leaves and the rack it enters)
TOY = {
    "sender": contention.ContentionKey(
        "sender", lambda s, d, within, ops: (s,), lambda ch, within, k: f"{ch} sent by node {k}",
        "toy: the transfers leaving one node"),
    "pair": contention.ContentionKey(
        "pair", lambda s, d, within, ops: ((ops.floordiv(s, 2),) if within else (ops.floordiv(s, 2), ops.floordiv(d, 2))),
        lambda ch, within, k: f"{ch} rack {k}", "toy: racks of two nodes"),
    # the mapping's racks (KeyOps.rack): a transfer counts in the rack it leaves and the rack it enters
    "rack_pair": contention.ContentionKey(
        "rack_pair", lambda s, d, within, ops: ((ops.rack(s),) if within else (ops.rack(s), ops.rack(d))),
        lambda ch, within, k: f"{ch} rack {k} ↔", "toy: the mapping's racks, both ends"),
}


def _program(key: str) -> ir.Program:
    info = dict(MODULE.program.channel_info)
    info["net"] = ir.ChannelInfo("between", key)
    if key == "pair":
        info["shm"] = ir.ChannelInfo("within", key)
    return dataclasses.replace(MODULE.program, channel_info=info)


def _mapping(kind, Q):
    return tlop.sequential(Q) if kind == "sequential" else tlop.round_robin(Q)


def _close(a, b):
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-300)


@pytest.fixture
def toy_keys(monkeypatch, tmp_path):
    monkeypatch.setenv("TLOP_CACHE_DIR", str(tmp_path))
    for name, key in TOY.items():
        monkeypatch.setitem(contention.KEYS, name, key)


@pytest.mark.parametrize("key,alg,kind", [("sender", "ring", "sequential"), ("sender", "doubling", "round_robin"),
                                          ("pair", "ring", "sequential"), ("pair", "gather", "round_robin")])
def test_a_key_added_to_the_table_is_priced_identically_by_every_engine(toy_keys, key, alg, kind):
    program = _program(key)
    a = program.algorithms[alg]
    jit = compile_algorithm(program, alg, PROFILE, mapping=_mapping(kind, 2), closed_forms=False)
    jit_closed = compile_algorithm(program, alg, PROFILE, mapping=_mapping(kind, 2))
    d = derive(program, a, kind)
    if key == "pair":  # racks are not groups per node: no closed form, and it says why
        assert not d.ok and "contention 'pair'" in d.reason
    else:
        assert d.ok, d.reason
    seen_other = False
    for P, Q in ((8, 2), (16, 2), (16, 4)):
        mp = _mapping(kind, Q)
        env = bind_mapping(a, {"P": float(P), "m": 4096.0}, mp)
        oracle = float(Interpreter(program, PROFILE, mp, "sort").eval(a.body, env))
        counted = float(Interpreter(program, PROFILE, mp, "count").eval(a.body, env))
        assert _close(counted, oracle), (P, Q, counted, oracle)
        if Q == 2:
            assert _close(float(jit(P=P, m=4096.0)), oracle)
            assert _close(float(jit_closed(P=P, m=4096.0)), oracle)
        if d.ok:
            closed = float(Interpreter(program, PROFILE).eval(d.expr, {"P": float(P), "m": 4096.0, "Q": float(Q)}))
            assert _close(closed, oracle), (P, Q, closed, oracle)
        ex = explain_stages(program, a, PROFILE, mp, env, {"P": P, "m": "4 KiB"}, {"P": P, "m": 4096.0})
        assert _close(ex.total, oracle)
        labels = {g.label for st in ex.stages for ph in st.phases for g in ph.groups}
        assert any(("rack" if key == "pair" else "sent by node") in lab for lab in labels), labels  # its own label
        assert explanation_lines(ex)
        # the key changes the price: compare with the declared dst_node
        plain = float(Interpreter(MODULE.program, PROFILE, mp, "sort").eval(a.body, env))
        seen_other |= not _close(plain, oracle)
    if key == "pair" or alg == "gather":
        assert seen_other  # racks hold more transfers than nodes: the new key is really used


def test_the_parser_accepts_exactly_the_tables_keys():
    from tlop.frontend import reference_parser

    assert tuple(reference_parser.CONTENTION_KEYS) == contention.CONTENTION_KEYS == tuple(contention.KEYS)


#: what an engine must not spell out itself: key names compared, placements compared, defaults
_COPIES = re.compile(r"""==\s*["'](dst_node|src_node|either)["']|contention\s+or\s+["']|"""
                     r"""placement\s*==\s*["'](within|between)["']""")


def test_no_engine_keeps_its_own_copy_of_the_key_table_or_the_channel_choice():
    offenders = []
    for folder in ("compiler/backends", "compiler/analysis", "compiler/lower", "compiler/apps", "compiler/ir"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.parts[-3:-1] == ("ir", "taulop"):
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if _COPIES.search(line):
                    offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


def _keyed(net: str, shm: str = "node") -> ir.Program:
    info = dict(MODULE.program.channel_info)
    info["net"], info["shm"] = ir.ChannelInfo("between", net), ir.ChannelInfo("within", shm)
    return dataclasses.replace(MODULE.program, channel_info=info)


def _priced_alike(program, alg, mp, P, label):
    """The price of ``alg`` at P over ``mp`` by the oracle, checked equal in the counting
    reduction, the JIT (compiled for ``mp``: the rack size is one of its run-time mapping words)
    and ``tlop explain`` (whose group labels must contain ``label``)."""
    a = program.algorithms[alg]
    env = bind_mapping(a, {"P": float(P), "m": 4096.0}, mp)
    oracle = float(Interpreter(program, PROFILE, mp, "sort").eval(a.body, env))
    counted = float(Interpreter(program, PROFILE, mp, "count").eval(a.body, env))
    assert _close(counted, oracle), (P, mp, counted, oracle)
    for closed in (False, True):
        jit = compile_algorithm(program, alg, PROFILE, mapping=mp, closed_forms=closed)
        assert _close(float(jit(P=P, m=4096.0)), oracle), (P, mp, closed, float(jit(P=P, m=4096.0)), oracle)
    ex = explain_stages(program, a, PROFILE, mp, env, {"P": P, "m": "4 KiB"}, {"P": P, "m": 4096.0})
    assert _close(ex.total, oracle)
    labels = {g.label for st in ex.stages for ph in st.phases for g in ph.groups}
    assert label is None or any(label in lab for lab in labels), labels
    return oracle


RACKED = [(alg, kind, Q, R) for alg, kind in (("ring", "sequential"), ("gather", "round_robin"), ("doubling", "sequential"))
          for Q, R in ((2, 1), (2, 2), (1, 3))]


_SIZES = {"ring": (8, 12, 16), "gather": (8, 12, 16), "doubling": (8, 16, 32)}


def _racked(kind, Q, R):
    return tlop.sequential(Q, rack=R) if kind == "sequential" else tlop.round_robin(Q, rack=R)


@pytest.mark.parametrize("alg,kind,Q,R", RACKED)
def test_a_key_over_the_mappings_racks_is_priced_identically_by_every_engine(toy_keys, alg, kind, Q, R):
    program = _keyed("rack_pair", "rack_pair")
    d = derive(program, program.algorithms[alg], kind)
    assert not d.ok and "contention 'rack_pair'" in d.reason  # racks are not per node: no closed form
    for P in _SIZES[alg]:
        mp = _racked(kind, Q, R)
        price = _priced_alike(program, alg, mp, P, "rack")
        if R == 1:  # a rack per node: the node key within nodes, either between them
            assert _close(price, _priced_alike(_keyed("either"), alg, mp, P, None))


#: the τ-Lop platform with the network contending per destination rack (``contention rack``)
RACK_PROGRAM = tlop.loads(SOURCE.replace("contention dst_node", "contention rack"), "rack.tlop").program


@pytest.mark.parametrize("alg,kind,Q,R", RACKED + [("gather", "sequential", 1, 4), ("ring", "round_robin", 4, 2)])
def test_the_rack_key_is_priced_identically_by_every_engine(tmp_path, monkeypatch, alg, kind, Q, R):
    monkeypatch.setenv("TLOP_CACHE_DIR", str(tmp_path))
    assert RACK_PROGRAM.channel_info["net"].contention == "rack"  # the platform language accepts it
    d = derive(RACK_PROGRAM, RACK_PROGRAM.algorithms[alg], kind)
    assert not d.ok and "contention 'rack'" in d.reason  # racks are not per node: no closed form
    for P in _SIZES[alg]:
        mp = _racked(kind, Q, R)
        price = _priced_alike(RACK_PROGRAM, alg, mp, P, "→ rack")
        # within a node the key is `node`: the same price with it declared on shm too
        assert _close(price, _priced_alike(_keyed("rack", "rack"), alg, mp, P, "→ rack"))
        if R == 1:  # a rack per node: the groups of dst_node
            assert _close(price, _priced_alike(MODULE.program, alg, mp, P, None))


@pytest.mark.parametrize("alg,kind,Q", [("ring", "sequential", 2), ("gather", "round_robin", 2),
                                         ("doubling", "sequential", 1), ("gather", "sequential", 1)])
def test_one_rack_holding_every_node_is_the_all_key_and_smaller_racks_are_neither(tmp_path, monkeypatch, alg, kind, Q):
    """rack(x) = ⌊x / R⌋ is 0 for every node when R >= the node count (and without racks): every
    transfer between nodes then enters rack 0, one group per phase — the ``all`` key's groups."""
    monkeypatch.setenv("TLOP_CACHE_DIR", str(tmp_path))
    other = set()
    for P in _SIZES[alg]:
        nodes = _racked(kind, Q, 1).nodes(P)
        every = _priced_alike(_keyed("all"), alg, _racked(kind, Q, 1), P, None)
        for R in (nodes, nodes + 5, None):
            assert _close(_priced_alike(RACK_PROGRAM, alg, _racked(kind, Q, R), P, "→ rack 0"), every), (P, R)
        middle = _priced_alike(RACK_PROGRAM, alg, _racked(kind, Q, 2), P, "→ rack 1")
        per_node = _priced_alike(MODULE.program, alg, _racked(kind, Q, 2), P, None)
        other.add((_close(middle, every), _close(middle, per_node)))
    assert (False, False) in other  # racks of two nodes differ from both ends: the key is really used
