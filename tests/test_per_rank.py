"""Per-rank parameters (``counts: bytes[P]``, read as ``counts[r]``) and the stdlib's gatherv.

* gatherv with a counts vector equals an independent numpy computation: in τ-Lop, one stage whose
  transfers form a shared-memory group (the root's node-mates) and a network group (every other
  rank, all entering the root's node), each reduced by A2 over its sorted sizes, the stage the
  maximum of the two (A3), the transmissions read from the profile's tables; in LogGP and pLogP,
  every rank sending at 0 and the root receiving in order of arrival, a gap apart.
* the forms of the argument (CLI list, ``@file.json``, one value for all; Python list, tuple,
  1-D array, ``tlop.per_rank``) all mean the same; the JIT refuses per-rank arguments cleanly.
Diagnostics: tests/golden/diagnostics/per_rank_*.tlop.
"""

import json
import math

import numpy as np
import pytest

import tlop
from tlop.backends.interp import Interpreter
from tlop.backends.binding import bind_mapping
from tlop.runtime.per_rank import PerRankValues
from conftest import synthetic_profile

GATHERV = {m: tlop.load(f"{m}/gather")["gatherv"] for m in ("taulop", "loggp", "plogp")}


# ----------------------------------------------------------------------------- τ-Lop by hand

def _T(prof, channel: str, x: float, tau: float) -> float:
    """T^c(x) at concurrency τ from the profile's tables (000 eq. 1 and 3: lusitania's net is
    InfiniBand, RDMA): shm o + 2·L(x, τ), net o + L(x, τ)."""
    pch = prof.resolve_channel(channel)
    o = float(prof.table("o", pch).lookup(x))
    L = float(prof.table("L", pch).lookup(x, tau))
    return o + (2 * L if channel == "shm" else L)


def _a2(prof, channel, sizes) -> float:
    """A2 on one contention group: sorted sizes m1 ≤ … ≤ mn, the j-th increment mj − m(j−1) sent
    by the n − j + 1 members still sending (increments of 0 dropped)."""
    total, prev, n = 0.0, 0.0, len(sizes)
    for j, x in enumerate(sorted(sizes)):
        if x > prev:
            total += _T(prof, channel, x - prev, n - j)
        prev = x
    return total


def _gatherv_taulop(prof, counts, root, node_of) -> float:
    shm = [counts[r] for r in range(len(counts)) if r != root and node_of(r) == node_of(root)]
    net = [counts[r] for r in range(len(counts)) if node_of(r) != node_of(root)]
    return max(_a2(prof, "shm", shm) if shm else 0.0, _a2(prof, "net", net) if net else 0.0)


@pytest.mark.parametrize("P,Q,kind,root", [(5, 2, "sequential", 0), (8, 4, "sequential", 5),
                                           (12, 4, "round_robin", 3), (7, 8, "sequential", 6),
                                           (9, 1, "sequential", 2)])
def test_taulop_gatherv_equals_a2_and_a3_by_hand(P, Q, kind, root):
    prof = tlop.load_profile("lusitania")
    rng = np.random.default_rng(P * 100 + Q)
    counts = rng.choice([0.0, 1.0, 100.0, 1024.0, 3000.0, 65536.0, 200000.0, 1 << 20], size=P)
    mapping = tlop.sequential(Q) if kind == "sequential" else tlop.round_robin(Q)
    node_of = (lambda r: r // Q) if kind == "sequential" else (lambda r: r % math.ceil(P / Q))
    assert mapping.node_of(np.arange(P), P).tolist() == [node_of(r) for r in range(P)]
    want = _gatherv_taulop(prof, counts.tolist(), root, node_of)
    got = GATHERV["taulop"].evaluate(prof, P=P, counts=counts, root=root, mapping=mapping)
    assert got == pytest.approx(want, rel=1e-12)
    # the oracle's sort agrees with the counting reduction the API uses
    h = GATHERV["taulop"]
    env = bind_mapping(h.ir, h.bind({"P": P, "counts": counts, "root": root}), mapping)
    assert Interpreter(h.module.program, prof, mapping, "sort").eval(h.ir.body, env) == pytest.approx(got, rel=1e-12)


def test_equal_counts_are_the_linear_gather():
    prof = tlop.load_profile("lusitania")
    linear = tlop.load("taulop/gather")["linear"]
    for P, m in ((4, 1024.0), (16, 65536.0)):
        mapping = tlop.sequential(4)
        want = linear.evaluate(prof, P=P, m=m, mapping=mapping)
        assert GATHERV["taulop"].evaluate(prof, P=P, counts=m, mapping=mapping) == want
        assert GATHERV["taulop"].evaluate(prof, P=P, counts=[m] * P, mapping=mapping) == want


# ----------------------------------------------------------------------------- LogGP / pLogP by hand

L_, O_, G_, GG_ = 5e-6, 1e-6, 2e-6, 1e-9
LOGGP = synthetic_profile("loggp-gatherv", scalars={"L": {"*": L_}, "o": {"*": O_}, "g": {"*": G_}, "G": {"*": GG_}})
_GRID = [0.0, 1e9]
PLOGP = synthetic_profile("plogp-gatherv", tables={
    "g": {"*": {"m": _GRID, "values": [3e-6, 3e-6 + 1e9 * 1e-9]}},
    "os": {"*": {"m": _GRID, "values": [1e-6, 1e-6 + 1e9 * 2e-10]}},
    "or_": {"*": {"m": _GRID, "values": [4e-6, 4e-6 + 1e9 * 3e-9]}}}, scalars={"L": {"*": 4e-6}})

# (send overhead, gap, delivery, receive overhead) of each model, from its definition
FUNCTIONS = {
    "loggp": (lambda m: O_, lambda m: max(O_, G_ + (m - 1) * GG_), lambda m: O_ + L_ + (m - 1) * GG_ + O_,
              lambda m: O_),
    "plogp": (lambda m: 1e-6 + 2e-10 * m, lambda m: 3e-6 + 1e-9 * m, lambda m: 3e-6 + 1e-9 * m + 4e-6,
              lambda m: 4e-6 + 3e-9 * m),
}


def _gatherv_dataflow(model, counts, root) -> float:
    """Every rank other than the root sends at 0; the root receives in order of arrival, each
    receive at max(arrival, previous receive + its receive overhead, previous receive + gap)."""
    os_, gap, delivery, or_ = FUNCTIONS[model]
    msgs = sorted((delivery(c), c) for r, c in enumerate(counts) if r != root)
    t, cpu = -math.inf, 0.0
    for k, (arrive, c) in enumerate(msgs):
        t = max(arrive, cpu + or_(c), t + gap(c)) if k else max(arrive, cpu + or_(c))
        cpu = t
    senders = [os_(c) for r, c in enumerate(counts) if r != root]
    return max([cpu] + senders)


@pytest.mark.parametrize("model", ["loggp", "plogp"])
@pytest.mark.parametrize("P,root", [(2, 0), (5, 1), (9, 8), (16, 3)])
def test_dataflow_gatherv_equals_the_receive_order_by_hand(model, P, root):
    prof = LOGGP if model == "loggp" else PLOGP
    rng = np.random.default_rng(P + (model == "plogp"))
    counts = rng.integers(0, 300_000, size=P).astype(float)
    want = _gatherv_dataflow(model, counts.tolist(), root)
    got = GATHERV[model].evaluate(prof, P=P, counts=counts, root=root, mapping=tlop.sequential(4))
    assert got == pytest.approx(want, rel=1e-12)


# ----------------------------------------------------------------------------- forms of the argument

def test_python_forms_mean_the_same():
    prof, mapping = tlop.load_profile("lusitania"), tlop.sequential(2)
    counts = [1024.0, 2048.0, 3072.0, 4096.0]
    g = GATHERV["taulop"]
    want = g.evaluate(prof, P=4, counts=counts, mapping=mapping)
    for form in (tuple(counts), np.array(counts), np.array(counts, dtype=np.int64), tlop.per_rank(counts),
                 [1024, 2048, 3072, 4096]):
        assert g.evaluate(prof, P=4, counts=form, mapping=mapping) == want
    # sizes matter: a different vector costs differently
    assert g.evaluate(prof, P=4, counts=[1024.0, 2048.0, 3072.0, 65536.0], mapping=mapping) > want


def test_cli_forms_mean_the_same(tmp_path, capsys):
    from tlop.cli.main import main

    def seconds(*argv):
        assert main(["eval", "taulop/gather", "gatherv", *argv, "--mapping", "sequential(2)", "--json",
                     "--profile", "lusitania"]) == 0
        return json.loads(capsys.readouterr().out)

    listed = seconds("P=4", "counts=1KiB,2KiB,3KiB,4KiB")
    assert listed["arguments"]["counts"] == [1024, 2048, 3072, 4096]
    f = tmp_path / "sizes.json"
    f.write_text('[1024, "2KiB", 3072, "4 KiB"]')
    assert seconds("P=4", f"counts=@{f}")["seconds"] == listed["seconds"]
    f.write_text('{"counts": [1024, 2048, 3072, 4096]}')
    assert seconds("P=4", f"counts=@{f}")["seconds"] == listed["seconds"]
    assert listed["seconds"] == pytest.approx(GATHERV["taulop"].evaluate(
        "lusitania", P=4, counts=[1024, 2048, 3072, 4096], mapping=tlop.sequential(2)), rel=1e-12)
    one = seconds("P=4", "counts=2KiB")
    assert one["arguments"]["counts"] == 2048
    assert one["seconds"] == pytest.approx(GATHERV["taulop"].evaluate(
        "lusitania", P=4, counts=[2048] * 4, mapping=tlop.sequential(2)), rel=1e-12)


def test_eval_prints_the_vector(capsys):
    from tlop.cli.main import main

    assert main(["eval", "taulop/gather", "gatherv", "P=4", "counts=1KiB,2KiB,3KiB,4KiB",
                 "--mapping", "sequential(2)", "--profile", "lusitania"]) == 0
    assert "counts=[1KiB, 2KiB, 3KiB, 4KiB]" in capsys.readouterr().out


@pytest.mark.parametrize("counts,P,message", [
    ([1.0, 2.0], 3, "argument counts: 2 per-rank values, but P = 3"),
    ([1.0, -2.0, 3.0], 3, "argument counts[1] = -2 violates the constraint counts >= 0"),
    ([1.0, math.nan], 2, "argument counts[1] is NaN"),
    ([[1.0, 2.0]], 2, "per-rank values are a list or a 1-D array (axis 0 is the rank), not an array of shape (1, 2)"),
    ([1.0, 2.0], [2, 3], "argument counts: 2 per-rank values, but P takes several values (2, 3)"),
    ([1.0, 2.0], [3, 3], "argument counts: 2 per-rank values, but P = 3"),
    ("1KiB,2KiB", 2, "argument counts: expected numbers"),
])
def test_python_diagnostics(counts, P, message):
    with pytest.raises(tlop.TlopError) as err:
        GATHERV["taulop"].evaluate("lusitania", P=P, counts=counts, mapping=tlop.sequential(2))
    assert message in str(err.value)


def test_codes_of_the_diagnostics():
    from tlop.runtime.codes import code_of
    from tlop.runtime.diagnostics import Diagnostic

    for text, code in (("argument counts: 2 per-rank values, but P = 3; give one for each rank 0 … P − 1", "E024"),
                       ("argument counts[1] = -2 violates the constraint counts >= 0", "E010"),
                       ("counts[4]: the rank is outside 0 … 3 (P = 4)", "E041"),
                       ("counts=1KiB,x: rank 1: not a number (examples: 16, 1MiB)", "E030")):
        assert code_of(Diagnostic(text)) == code, text


def test_a_grid_over_P_takes_one_value_for_every_rank():
    P = np.array([2.0, 4.0, 8.0])
    got = GATHERV["taulop"].evaluate("lusitania", P=P, counts=4096.0, mapping=tlop.sequential(2))
    linear = tlop.load("taulop/gather")["linear"]
    assert np.array_equal(got, linear.evaluate("lusitania", P=P, m=4096.0, mapping=tlop.sequential(2)))


def test_per_rank_values_are_independent_of_the_call():
    """The binder copies what it is given: the caller's PerRankValues keeps no binder state."""
    given = tlop.per_rank([1.0, 2.0])
    GATHERV["taulop"].evaluate("lusitania", P=2, counts=given, mapping=tlop.sequential(2))
    assert given.ranks is None and isinstance(given, PerRankValues)


# ----------------------------------------------------------------------------- engines

def test_the_jit_refuses_per_rank_arguments_and_the_interpreter_answers():
    pytest.importorskip("llvmlite")
    from tlop.backends.jit import NotCompilable

    with pytest.raises(NotCompilable) as err:
        GATHERV["taulop"].compile("lusitania", mapping=tlop.sequential(2))
    assert "per-rank argument (counts: bytes[P])" in str(err.value)
    # the API's native tier gives up on it and keeps answering with the interpreter
    want = GATHERV["taulop"].evaluate("lusitania", P=8, counts=1024.0, mapping="sequential(2)")
    for _ in range(20):
        assert GATHERV["taulop"].evaluate("lusitania", P=8, counts=1024.0, mapping="sequential(2)") == want


def test_a_per_rank_parameter_in_a_cost_expression(tmp_path):
    """Outside a schedule too: Σ_r counts[r] / B needs no process mapping."""
    src = tmp_path / "sum.tlop"
    src.write_text("/// Time to stream every rank's block at 1 GB/s.\n"
                   "algorithm stream(P: int >= 1, counts: bytes[P]) = sum r in 0 .. P - 1: counts[r] / 1GB * 1s\n")
    alg = tlop.load(str(src))["stream"]
    assert alg.evaluate(None, P=3, counts=[1e9, 2e9, 3e9]) == pytest.approx(6.0)
    assert np.allclose(alg.evaluate(None, P=np.array([1.0, 2.0]), counts=1e9), [1.0, 2.0])


def test_a_grid_keeps_a_per_rank_vector_whole():
    """``handle.grid``: a list for a per-rank parameter is one vector for every point, not an axis."""
    g = GATHERV["taulop"]
    counts = [1024.0, 65536.0, 1.0, 1.0]
    grid = g.grid("lusitania", P=[4], counts=counts, root=[0, 1], mapping="sequential(2)")
    assert list(grid.axes) == ["root"]
    for root, got in zip((0, 1), np.ravel(grid.values)):
        assert got == g.evaluate("lusitania", P=4, counts=counts, root=root, mapping="sequential(2)")
    assert "counts=[1KiB, 64KiB, 1B, 1B]" in grid._repr_html_()


def test_sweep_keeps_a_per_rank_vector_whole(capsys):
    """``tlop sweep``: counts=1KiB,2KiB,… is one vector for every point; one value every rank's."""
    from tlop.cli.main import main

    assert main(["sweep", "taulop/gather", "gatherv", "P=4", "counts=1KiB,2KiB,3KiB,4KiB", "root=0..3",
                 "--mapping", "sequential(2)", "--profile", "lusitania", "--json"]) == 0
    points = json.loads(capsys.readouterr().out)["points"]
    g = GATHERV["taulop"]
    for pt in points:
        want = g.evaluate("lusitania", P=4, counts=[1024, 2048, 3072, 4096], root=pt["root"], mapping="sequential(2)")
        assert pt["seconds"] == pytest.approx(want, rel=1e-12)
    assert main(["sweep", "taulop/gather", "gatherv", "P=4,8", "counts=1KiB", "--mapping", "sequential(4)",
                 "--profile", "lusitania", "--json"]) == 0
    points = json.loads(capsys.readouterr().out)["points"]
    linear = tlop.load("taulop/gather")["linear"]
    assert [p["seconds"] for p in points] == pytest.approx(
        [linear.evaluate("lusitania", P=P, m=1024.0, mapping="sequential(4)") for P in (4, 8)], rel=1e-12)


def test_explain_shows_each_ranks_size(capsys):
    from tlop.cli.main import main

    assert main(["explain", "taulop/gather", "gatherv", "P=4", "counts=1KiB,2KiB,3KiB,4KiB",
                 "--mapping", "sequential(2)", "--profile", "lusitania"]) == 0
    out = capsys.readouterr().out
    assert "counts=[1KiB, 2KiB, 3KiB, 4KiB]" in out
    assert "shm node 0: 1 transfer of 2KiB [1→0]" in out
    assert "1 transfer of 3KiB, 1 transfer of 4KiB [2→0, 3→0]" in out


def test_best_gives_the_vector_to_the_algorithms_that_take_it(capsys):
    from tlop.cli.main import main

    counts = [1024, 2048, 1024, 1024, 1024, 1024, 1024, 65536]
    assert main(["best", "taulop/gather", "P=8", "m=1KiB", "counts=" + ",".join(map(str, counts)),
                 "--mapping", "sequential(4)", "--profile", "lusitania", "--json"]) == 0
    (point,) = json.loads(capsys.readouterr().out)["points"]
    want = GATHERV["taulop"].evaluate("lusitania", P=8, counts=counts, mapping="sequential(4)")
    assert point["costs"]["gatherv"] == pytest.approx(want, rel=1e-12)
    linear = tlop.load("taulop/gather")["linear"].evaluate("lusitania", P=8, m=1024.0, mapping="sequential(4)")
    assert point["costs"]["linear"] == pytest.approx(linear, rel=1e-12)


def test_invalid_nan_keeps_the_vector_whole():
    g = GATHERV["taulop"]
    counts = [1024.0, 2048.0, 3072.0, 4096.0]
    want = g.evaluate("lusitania", P=4, counts=counts, mapping="sequential(2)")
    assert g.evaluate("lusitania", P=4, counts=counts, mapping="sequential(2)", invalid="nan") == want
    got = g.evaluate("lusitania", P=np.array([4.0, 0.0, 4.0]), counts=counts, mapping="sequential(2)", invalid="nan")
    assert got[0] == got[2] == want and math.isnan(got[1])


def test_non_finite_and_oversized_values_are_errors_not_tracebacks(tmp_path, capsys):
    """An infinite rank value (``1e400`` on the command line, a 400-digit integer in a file, ``inf``
    from Python) and a file with a 5,000-digit integer are the project's errors, never a
    traceback (reviewer's reproducers)."""
    from tlop.cli.main import main

    def run(*argv):
        rc = main(["eval", "taulop/gather", "gatherv", "P=4", *argv, "--mapping", "sequential(2)",
                   "--profile", "lusitania"])
        return rc, capsys.readouterr().err

    rc, err = run("counts=1,1e400,2,3")
    assert rc == 1 and "the value of rank 1 is not finite" in err and "Traceback" not in err
    big = tmp_path / "big.json"
    big.write_text("[1, " + "9" * 400 + ", 2, 3]")
    rc, err = run(f"counts=@{big}")
    assert rc == 1 and "the value of rank 1 is not finite" in err
    huge = tmp_path / "huge.json"
    huge.write_text("[1, " + "9" * 5000 + ", 2, 3]")
    rc, err = run(f"counts=@{huge}")
    assert rc == 1 and "is not JSON" in err and "error[E030]" in err
    with pytest.raises(tlop.TlopError) as e:
        GATHERV["taulop"].evaluate("lusitania", P=4, counts=[1024.0, math.inf, 4096.0, 8192.0],
                                   mapping=tlop.sequential(2))
    assert "counts" in str(e.value)
