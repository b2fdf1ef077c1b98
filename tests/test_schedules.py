"""Schedules: the stdlib's ring allgather and binomial broadcast against the closed forms they
replace and against hand computations from the profile's tables; contention declared by the
platform; mappings as evaluation arguments (Python and CLI); enumeration semantics (par, seq,
blocks, where, lock-step phases); integer operators."""

import json
import math
from pathlib import Path

import numpy as np
import pytest

import tlop
from conftest import taulop_profiles
from tlop import ir
from tlop.cli.main import main
from tlop.runtime.diagnostics import TlopError

PROFILES = taulop_profiles()
AG = tlop.load("taulop/allgather")
BC = tlop.load("taulop/bcast")
PLATFORM = (Path(tlop.__file__).parent.parent / "stdlib" / "taulop" / "platform.tlop")


def _close(a, b, rel=1e-12):
    return math.isclose(a, b, rel_tol=rel, abs_tol=0.0)


def T(profile, channel, m, tau=1.0):
    """T^c(m) under concurrency τ, from the profile's tables as 000 eq. 1–3 write it."""
    pch = profile.resolve_channel(channel)
    kind = profile.transmission_kind(pch)
    o = profile.table("o", pch).lookup(m)
    L = profile.table("L", pch).lookup(m, tau)
    if kind == "shm":
        return o + 2 * L
    if kind == "rdma":
        return o + L
    return o + 2 * profile.table("L", profile.resolve_channel("shm")).lookup(m, tau) + L


# ----------------------------------------------------------------------------- ring allgather

@pytest.mark.parametrize("profile", PROFILES)
def test_ring_on_one_node_is_the_single_node_closed_form(profile):
    for P in (2, 3, 4, 5, 8):
        for m in (1.0, 1000.0, 65536.0, 1 << 20):
            got = AG["ring"].evaluate(profile, P=P, m=m, mapping=tlop.sequential(8))
            want = AG["ring_allgather_node"].evaluate(profile, P=P, m=m)
            assert _close(got, want), (profile, P, m, got, want)


@pytest.mark.parametrize("profile", ["metropolis", "lusitania", "ciemat"])
def test_ring_sequential_by_hand(profile):
    """Per stage, every node has Q − 1 shm transfers (τ = Q − 1) and one incoming network
    transfer (τ = 1); the groups run side by side (A3: the larger), P − 1 stages."""
    prof = tlop.load_profile(profile)
    for Q, M in ((2, 2), (4, 4), (8, 2), (3, 5)):
        P = Q * M
        for m in (64.0, 65536.0, 1 << 20):
            stage = max(T(prof, "shm", m, Q - 1), T(prof, "net", m, 1))
            got = AG["ring"].evaluate(prof, P=P, m=m, mapping=tlop.sequential(Q))
            assert _close(got, (P - 1) * stage), (Q, M, m)


@pytest.mark.parametrize("profile", ["metropolis", "lusitania"])
def test_ring_round_robin_by_hand(profile):
    """Round-robin: every send crosses nodes and each node receives Q of them (τ = Q)."""
    prof = tlop.load_profile(profile)
    for Q, M in ((2, 2), (4, 3), (8, 2)):
        P = Q * M
        m = 4096.0
        got = AG["ring"].evaluate(prof, P=P, m=m, mapping=tlop.round_robin(Q))
        assert _close(got, (P - 1) * T(prof, "net", m, Q))


def test_ring_is_fast_at_4096_ranks():
    """P − 1 identical stages are reduced once (the stage does not depend on k)."""
    v = AG["ring"].evaluate("lusitania", P=4096, m=1 << 20, mapping=tlop.sequential(16))
    prof = tlop.load_profile("lusitania")
    assert _close(v, 4095 * max(T(prof, "shm", 1 << 20, 15), T(prof, "net", 1 << 20, 1)))


def test_arrays_are_evaluated_point_by_point():
    P = np.array([4.0, 8.0, 16.0])
    m = np.array([1024.0, 2048.0, 4096.0])
    got = AG["ring"].evaluate("metropolis", P=P, m=m, mapping="sequential(4)")
    for k in range(3):
        assert got[k] == AG["ring"].evaluate("metropolis", P=P[k], m=m[k], mapping="sequential(4)")


# ----------------------------------------------------------------------------- binomial broadcast

@pytest.mark.parametrize("profile", PROFILES)
def test_binomial_on_one_node_is_the_closed_form(profile):
    for P in (1, 2, 4, 8, 16, 32):
        for m in (8.0, 65536.0):
            got = BC["binomial"].evaluate(profile, P=P, m=m, mapping=tlop.sequential(64))
            want = BC["binomial_bcast"].evaluate(profile, P=P, m=m)
            assert _close(got, want), (profile, P, m)


def _receivers(P, root=0):
    """Every (src, dst) of the binomial schedule, by stage, from the algorithm's own enumeration."""
    from tlop.backends.interp import Interpreter
    from tlop.backends.schedule import StageEvaluator

    alg = BC["binomial"].ir
    stages = [n for n in ir.walk(alg.body) if isinstance(n, ir.Stage)]
    assert len(stages) == 1
    interp = Interpreter(BC.program, tlop.load_profile("metropolis"), tlop.sequential(P))
    ev = StageEvaluator(interp)
    S = math.ceil(math.log2(P)) if P > 1 else 0
    out = []
    for s in range(S):
        sends, computes = [], []
        env = {"P": float(P), "m": 1.0, "root": float(root), "S": float(S), "s": float(s), ir.RANKS: float(P)}
        ev._count = 0
        for item in stages[0].items:
            ev._run(item, env, 1, np.zeros(1, dtype=np.int64), 1.0, sends, computes)
        out.append(sorted((int(a), int(b)) for bt in sends for a, b in zip(bt.a, bt.b)))
    return out


@pytest.mark.parametrize("P", [2, 3, 5, 6, 7, 8, 12, 13, 16])
def test_binomial_is_a_tree_for_every_P(P):
    """MPICH's tree: every rank but the root receives exactly once, from a rank that already has
    the data; the first stage covers half the ranks (MPICH order: distances halve)."""
    have = {0}
    got = _receivers(P)
    for stage in got:
        for src, dst in stage:
            assert src in have and dst not in have and src != dst
        have |= {d for _, d in stage}
    assert have == set(range(P))
    if P in (8, 16):
        # the library's pairs for P a power of two: p_t = t·P/2^s -> p_t + P/2^(s+1)
        for s, stage in enumerate(got):
            step = P >> s
            assert stage == [(t * step, t * step + step // 2) for t in range(1 << s)]


def test_binomial_root_rotates_the_tree():
    a = BC["binomial"].evaluate("metropolis", P=12, m=1000.0, mapping=tlop.sequential(4))
    b = BC["binomial"].evaluate("metropolis", P=12, m=1000.0, root=4, mapping=tlop.sequential(4))
    assert a == b  # root 4 heads node 1 as root 0 heads node 0: the same channel groups


def test_binomial_across_nodes_by_hand():
    """P = 16, Q = 4, sequential (the reference's first-round log): stages 0, 1 cross nodes
    (1 and 2 network groups with τ = 1), stages 2, 3 stay inside nodes (τ = 1, then 2)."""
    prof = tlop.load_profile("lusitania")
    m = 65536.0
    want = 2 * T(prof, "net", m) + T(prof, "shm", m, 1) + T(prof, "shm", m, 2)
    assert _close(BC["binomial"].evaluate(prof, P=16, m=m, mapping=tlop.sequential(4)), want)


# ----------------------------------------------------------------------------- contention

def _platform(net_rule: str) -> str:
    text = PLATFORM.read_text()
    assert "contention dst_node" in text
    return text.replace("contention dst_node", f"contention {net_rule}")


ALGS = """
algorithm gather(P: int >= 2, m: bytes) over map: mapping =
    stage { par p in 1 .. P - 1: send p -> 0 : m }
algorithm scatter(P: int >= 2, m: bytes) over map: mapping =
    stage { par p in 1 .. P - 1: send 0 -> p : m }
"""


@pytest.mark.parametrize("rule,gather_tau,scatter_tau", [
    ("dst_node", 6, 2), ("src_node", 2, 6), ("either", 6, 6), ("node", 6, 6)])
def test_contention_rules_give_different_costs(rule, gather_tau, scatter_tau):
    """P = 8 on 4 nodes of 2: the 6 network transfers of a gather all enter node 0 (one group
    per destination node: τ = 6; per source node: 3 groups of τ = 2); a scatter is the mirror."""
    mod = tlop.loads(_platform(rule) + ALGS)
    prof = tlop.load_profile("metropolis")
    m = 4096.0
    for name, tau in (("gather", gather_tau), ("scatter", scatter_tau)):
        got = mod[name].evaluate(prof, P=8, m=m, mapping=tlop.sequential(2))
        assert _close(got, max(T(prof, "net", m, tau), T(prof, "shm", m, 1))), (rule, name)


def test_the_taulop_platform_declares_the_reference_choice():
    info = AG.program.channel_info
    assert info["shm"] == ir.ChannelInfo("within", "node")
    assert info["net"] == ir.ChannelInfo("between", "dst_node")


def test_channel_declaration_errors():
    with pytest.raises(TlopError, match="'contention' takes one of node, dst_node, src_node, either, all, rack"):
        tlop.loads("channel shm within node contention switch")
    with pytest.raises(TlopError, match="expected 'between nodes'"):
        tlop.loads("channel net between racks")
    with pytest.raises(TlopError, match="unexpected 'fast' in a channel declaration"):
        tlop.loads("channel net fast")


def test_a_schedule_needs_both_placements():
    mod = tlop.loads('import "taulop/platform.tlop"\n' + ALGS)
    bare = tlop.loads(PLATFORM.read_text().replace(" within node contention node", "") + ALGS)
    assert mod["gather"].evaluate("metropolis", P=4, m=10.0, mapping="sequential(2)") > 0
    with pytest.raises(TlopError, match="exactly one platform channel declared 'within node'"):
        bare["gather"].evaluate("metropolis", P=4, m=10.0, mapping="sequential(2)")


# ----------------------------------------------------------------------------- enumeration semantics

SEM = """import "taulop/platform.tlop"
algorithm pipeline(P: int >= 2, m: bytes) over map: mapping =
    stage { par p in 0 .. P - 1: seq k in 0 .. P - 2: send p -> (p + 1) % P : m }
algorithm rounds(P: int >= 2, m: bytes) over map: mapping =
    stages k in 0 .. P - 2 { par p in 0 .. P - 1: send p -> (p + 1) % P : m }
algorithm ragged(P: int >= 2, m: bytes) over map: mapping =
    stage { par p in 0 .. P - 1: seq q in 0 .. p: send p -> q : m }
algorithm ragged_by_hand(P: int >= 2, m: bytes) over map: mapping =
    sum k in 0 .. P - 1: (P - k) || T[shm](m)
algorithm evens(P: int >= 2, m: bytes) over map: mapping =
    stage { par p in 0 .. P - 1 where p % 2 == 0: send p -> p + 1 : m }
algorithm block(P: int >= 2, m: bytes) over map: mapping =
    stage { par p in 0 .. P - 1: { send p -> (p + 1) % P : m  send p -> (p + 1) % P : 2 * m } }
algorithm two_stages(P: int >= 2, m: bytes) over map: mapping =
    stage { par p in 0 .. P - 1: send p -> (p + 1) % P : m }
  + stage { par p in 0 .. P - 1: send p -> (p + 1) % P : 2 * m }
algorithm weighted(P: int >= 2, m: bytes) over map: mapping =
    stage { par p in 0 .. P - 1: send p -> (p + 1) % P : m weight 2 }
algorithm reduction(P: int >= 2, m: bytes) over map: mapping =
    stage { par p in 0 .. P - 1: { reduce p : m  compute p : 1us } }
algorithm nodes(P: int >= 2, m: bytes) over map: mapping =
    node(P - 1) * 1s
"""


def test_enumeration_semantics():
    mod = tlop.loads(SEM)
    prof = tlop.load_profile("metropolis")

    def ev(name, P=4, m=1024.0, mapping="sequential(8)"):
        return mod[name].evaluate(prof, P=P, m=m, mapping=mapping)

    # a pipelined set of sequences is the same lock-step phases as separate stages
    assert _close(ev("pipeline"), ev("rounds"))
    # sequences of different lengths: phase k holds the k-th send of every sequence still running
    assert _close(ev("ragged"), ev("ragged_by_hand"))
    # where filters bindings: 2 senders
    assert _close(ev("evens"), T(prof, "shm", 1024.0, 2))
    # a block is one sequence (two phases); two stages add
    assert _close(ev("block"), ev("two_stages"))
    assert _close(ev("weighted"), T(prof, "shm", 1024.0, 8))
    assert _close(ev("nodes", P=8, mapping="sequential(3)"), 2.0)
    assert _close(ev("nodes", P=8, mapping="round_robin(3)"), 1.0)


def test_reduce_reads_the_gamma_table():
    mod = tlop.loads(SEM)
    prof = tlop.load_profile("metropolis")
    if not prof.has_table("gamma", None):
        with pytest.raises(TlopError, match="gamma"):
            mod["reduction"].evaluate(prof, P=4, m=1024.0, mapping="sequential(8)")
        return
    gamma = prof.table("gamma", None).lookup(1024.0)
    assert _close(mod["reduction"].evaluate(prof, P=4, m=1024.0, mapping="sequential(8)"), gamma + 1e-6)


def test_evaluation_errors_name_the_send():
    mod = tlop.loads('import "taulop/platform.tlop"\n'
                     "algorithm bad(P: int >= 2, m: bytes) over map: mapping =\n"
                     "    stage { par p in 0 .. P: send p -> 0 : m }\n"
                     "algorithm weightless(P: int >= 2, m: bytes) over map: mapping =\n"
                     "    stage { par p in 0 .. P - 1: send p -> 0 : m weight 0 }\n")
    with pytest.raises(TlopError, match=r"send 4 -> 0 : 1024 B: the source rank 4 is outside 0 … 3 \(P = 4\)"):
        mod["bad"].evaluate("metropolis", P=4, m=1024.0, mapping="sequential(2)")
    with pytest.raises(TlopError, match="the weight 0 must be a positive number"):
        mod["weightless"].evaluate("metropolis", P=4, m=1024.0, mapping="sequential(2)")
    with pytest.raises(TlopError, match="is declared over a process mapping"):
        mod["weightless"].evaluate("metropolis", P=4, m=1024.0)


def test_layout_mappings():
    layout = tlop.read_layout(Path(__file__).parent / "golden" / "diagnostics" / "layout3.csv")
    with pytest.raises(TlopError, match="places 3 ranks, but the algorithm is evaluated with P=4"):
        AG["ring"].evaluate("metropolis", P=4, m=1.0, mapping=layout)
    # ranks 0, 1 on node a, rank 2 on node b: 0 -> 1 shm; 1 -> 2 and 2 -> 0 cross nodes into
    # different nodes (τ = 1 each)
    prof = tlop.load_profile("metropolis")
    got = AG["ring"].evaluate(prof, P=3, m=1024.0, mapping=layout)
    assert _close(got, 2 * max(T(prof, "shm", 1024.0), T(prof, "net", 1024.0)))


# ----------------------------------------------------------------------------- the JIT, the CLI

def test_the_jit_compiles_taulop_schedules_and_the_cli_chooses(capsys):
    with pytest.raises(TlopError, match="needs one"):  # over a mapping: compiled for one
        AG["ring"].compile("metropolis")
    ev = AG["ring"].compile("metropolis", mapping="sequential(4)")
    assert ev(P=8, m=1024.0) == AG["ring"].evaluate("metropolis", P=8, m=1024.0, mapping="sequential(4)")
    # a LogGP schedule is a dataflow program: compiled too (tests/test_jit_dataflow.py)
    lb = tlop.load("loggp/bcast")["binomial"]
    loggp = tlop.load_profile("localhost-example")
    assert lb.compile(loggp, mapping="sequential(4)")(P=8, m=1024.0) == \
        pytest.approx(lb.evaluate(loggp, P=8, m=1024.0, mapping="sequential(4)"), rel=1e-12)
    assert main(["sweep", "taulop/allgather", "ring", "P=4,8", "m=1KiB", "--mapping", "sequential(4)"]) == 0
    out = capsys.readouterr().out
    assert "(interp)" in out
    assert main(["eval", "taulop/allgather", "ring", "P=8", "m=1KiB", "--mapping", "sequential(4)", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["mapping"] == "sequential(4)" and data["engine"] == "interp"
    want = AG["ring"].evaluate(None, P=8, m=1024.0, mapping=tlop.sequential(4))
    assert data["seconds"] == want
    assert main(["eval", "taulop/allgather", "ring", "P=8", "m=1KiB", "--mapping", "sequential(4)",
                 "--engine", "jit", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["engine"] == "jit" and data["seconds"] == want
    # a LogGP schedule is compiled; on a profile without LogGP's parameters the error is the
    # interpreter's (the evaluator re-runs it on the failing point)
    assert main(["eval", "loggp/bcast", "binomial", "P=8", "m=1KiB", "--mapping", "sequential(4)",
                 "--engine", "jit"]) == 1
    assert "parameter 'o' is missing from profile 'metropolis'" in capsys.readouterr().err
    assert main(["eval", "loggp/bcast", "binomial", "P=8", "m=1KiB", "--mapping", "sequential(4)",
                 "--profile", "localhost-example", "--engine", "jit", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["engine"] == "jit" and data["seconds"] == pytest.approx(
        lb.evaluate(loggp, P=8, m=1024.0, mapping="sequential(4)"), rel=1e-12)


def test_best_compares_schedules_with_closed_forms(capsys):
    assert main(["best", "taulop/bcast", "P=4,16", "m=1KiB", "--mapping", "sequential(4)"]) == 0
    out = capsys.readouterr().out
    assert "binomial" in out
    assert main(["best", "taulop/bcast", "P=4", "m=1KiB"]) == 0
    assert "  not compared: binomial: runs over a process mapping: give --mapping\n" in capsys.readouterr().out


# ----------------------------------------------------------------------------- integer operators

INTS = [0.0, 1.0, 2.0, 3.0, 5.0, 7.0, 8.0, -1.0, -2.0, -7.0, 63.0, 64.0, 2.0 ** 40 + 3, -(2.0 ** 52),
        2.0 ** 53, 2.0 ** 53 + 2, 0.5, -0.5, math.inf, math.nan]


@pytest.mark.parametrize("op", ir.INT_OPS)
def test_integer_operators_jit_interpreter_and_python_agree(op):
    from tlop.ir import ops
    import sys
    sys.path.insert(0, str(Path(__file__).parent))
    from test_ir_ops import _jit, _same, SENTINEL

    a = np.array([x for x in INTS for _ in INTS])
    b = np.array([y for _ in INTS for y in INTS])
    body = ir.Bin(op, ir.Var("x"), ir.Var("y"))
    params = (ir.ParamSig("x", "real"), ir.ParamSig("y", "real"))
    # a non-finite cost is an error in every engine: NaN and ±inf (r − r is 0 only when r is
    # finite) become a sentinel so that the operator itself is compared everywhere
    alg = ir.Algorithm("op", params, ir.Let((("r", body),), ir.Cond(
        ir.Bin("==", ir.Bin("-", ir.Var("r"), ir.Var("r")), ir.Num(0.0)), ir.Var("r"), ir.Num(SENTINEL))))
    from tlop.backends.jit import compile_algorithm
    from _jit_helpers import make_profile
    ev = compile_algorithm(ir.Program((), {}, {}, {}, {"op": alg}), "op", make_profile())
    ok = np.isfinite(a) & np.isfinite(b)
    got = ev.batch(x=a[ok], y=b[ok])
    for g, x, y in zip(got, a[ok], b[ok]):
        with np.errstate(all="ignore"):
            want = ops.binary(op, x, y)
        want = SENTINEL if not math.isfinite(want) else want
        assert _same(g, want), (op, x, y, g, want)
        # the Python meaning, where it is defined
        xi, yi = int(x) if x == int(x) else None, int(y) if y == int(y) else None
        if xi is None or yi is None or abs(x) >= 2 ** 53 or abs(y) >= 2 ** 53:
            assert op == "div" or want == SENTINEL  # outside the domain of the bit operations: NaN
            continue
        if op == "div" and yi != 0 and abs(x) < 2 ** 53:
            assert want == xi // yi
        if op == "xor":
            assert want == xi ^ yi
        if op == "&":
            assert want == xi & yi
        if op in ("<<", ">>") and 0 <= yi <= 63:
            assert want == (xi << yi if op == "<<" else xi >> yi)
        if op in ("<<", ">>") and not 0 <= yi <= 63:
            assert want == SENTINEL


def test_integer_operators_parse_with_their_precedence():
    mod = tlop.loads("algorithm a(p: int, q: int) = (if p + 1 << 2 xor q & 3 == 5 then 1 else 0) * 1s\n"
                     "algorithm b(p: int, q: int) = (p div 2 * 3) * 1s\n")
    # (((p + 1) << 2) xor (q & 3)) == 5
    assert mod["a"].evaluate(None, p=0, q=1) == 1.0  # 4 xor 1 = 5
    assert mod["b"].evaluate(None, p=7, q=0) == 9.0  # (7 div 2) * 3
    with pytest.raises(TlopError, match="'xor' needs integers"):
        tlop.loads("algorithm c(m: bytes) = (m xor 1) * 1s/B")


def test_reserved_words_say_so():
    for word in ("stage", "send", "par", "seq", "reduce", "compute", "div", "xor", "where", "over"):
        with pytest.raises(TlopError, match=f"'{word}' is a reserved word"):
            tlop.loads(f"algorithm a({word}: int) = 1s")
    # soft words stay names
    tlop.loads("algorithm a(node: int, weight: int, mapping: int, within: int) = (node + weight) * 1s")
