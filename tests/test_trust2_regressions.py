"""Regressions of issue 22 (trust), items 11, 15, 12 and 7: one test per reproducer.

* 11: ``show --mapping`` of a LogGP-family (dataflow) schedule printed τ-Lop's closed form.
* 15: 1,000 nested parentheses were rejected at 1:1 (the paren is on line 2) while 3,000 nested
  negations were accepted; a too-long import path was E060 without a location; ``tlop check`` of
  a FIFO said "no such file".
* 12: quadratic passes over nested sums, stage sends outside the term budget, a MemoryError
  traceback.
* 7: SUMMA's M1–M16 curve under each contention key (bench/summa_contention.py).
"""

import os

import pytest

import tlop
from tlop.cli.main import main
from tlop.frontend.limits import MAX_NESTING
from tlop.runtime.codes import code_of
from tlop.runtime.diagnostics import TlopError


def test_show_mapping_of_a_dataflow_schedule_has_no_taulop_closed_form(capsys):
    assert main(["show", "loggph/allgather", "ring", "--mapping", "sequential(4)"]) == 0
    out = capsys.readouterr().out
    assert "T^shm" not in out and "T^net" not in out and "closed form of the schedule" not in out
    assert "stage{" in out                                          # the schedule itself
    assert "no closed form for sequential(4): a loggph schedule is a dataflow program" in out
    # the τ-Lop text of the same algorithm still gets its closed form
    assert main(["show", "taulop/allgather", "ring", "--mapping", "sequential(4)"]) == 0
    assert "closed form of the schedule" in capsys.readouterr().out


def _error(text):
    with pytest.raises(TlopError) as e:
        tlop.loads(text)
    return e.value


@pytest.mark.parametrize("opener,closer", [("(", ")"), ("-", ""), ("-(", ")"), ("not ", "")])
def test_one_nesting_limit_reported_where_it_is_crossed(opener, closer):
    n = MAX_NESTING // 2 + 1 if opener == "-(" else MAX_NESTING + 1      # "-(" is two levels
    body = opener * n + ("1us" if "not" not in opener else "true") + closer * n
    err = _error("# a comment on line 1\nalgorithm a() = " + body)
    assert "nested too deeply" in str(err) and f"at most {MAX_NESTING}" in str(err)
    d = err.diagnostics[0]
    assert code_of(d) == "E042" and d.span.line == 2
    assert d.span.col > len("algorithm a() = ")                       # at the level that crosses it


def test_nesting_up_to_the_limit_is_accepted():
    n = MAX_NESTING - 1
    assert tlop.loads("algorithm a() = " + "(" * n + "1us" + ")" * n)["a"].evaluate(None) == 1e-6
    # binary minus is not nesting: a long chain of subtractions is a flat chain
    assert tlop.loads("algorithm a() = 1us" + " - 1ns" * 600)["a"].evaluate(None) == pytest.approx(1e-6 - 600e-9)
    assert tlop.loads("algorithm a() = " + "-" * 400 + "1us")["a"].evaluate(None) == 1e-6


def test_a_too_long_import_path_is_located(tmp_path):
    f = tmp_path / "longimp.tlop"
    f.write_text('# line 1\nimport "' + "a/" * 3000 + 'x.tlop"\nalgorithm a(m: bytes) = 1us\n')
    with pytest.raises(TlopError) as e:
        tlop.load(f)
    d = e.value.diagnostics[0]
    assert d.span is not None and (d.span.line, d.span.col) == (2, 1)
    assert "cannot import 'a/a/" in d.message and "File name too long" in d.message and code_of(d) == "E007"


def test_check_of_a_fifo_says_what_it_is(tmp_path, capsys):
    fifo = tmp_path / "fifo.tlop"
    os.mkfifo(fifo)
    assert main(["check", str(fifo)]) != 0
    err = capsys.readouterr().err
    assert "is a FIFO (named pipe), not a source file" in err and "no such file" not in err


# --- 12: passes linear in the nesting depth ----------------------------------------------------


def test_the_term_budget_asks_each_node_once(monkeypatch):
    """3,000 nested sums: the budget's free-variable and schedule questions visit each node a
    bounded number of times (they visited O(depth²) nodes: > 180 s at this depth)."""
    from tlop import ir
    from tlop.backends import budget
    from tlop.ir import memo

    depth = 3000
    m = tlop.loads("algorithm a(P: int) = " + "".join(f"sum i{k} in 1 .. P: " for k in range(depth)) + "1us")
    body = m["a"].ir.body
    nodes = sum(1 for _ in ir.walk_unique(body))
    calls = {"n": 0}
    real = memo.children

    def counting(e):
        calls["n"] += 1
        return real(e)

    monkeypatch.setattr(memo, "children", counting)
    memo._FREE.clear()
    memo._SCHED.clear()
    budget._CACHE.clear()
    from tlop.frontend.limits import deep

    with deep():                                   # as the engines run it
        count = budget.term_count(body)
    assert count is not None
    # linear: a bounded number of visits per level (the count expression adds ~15 nodes a level);
    # the quadratic walks made about depth²/2 = 4.5 million
    assert calls["n"] <= 60 * depth, (calls["n"], nodes)
    # the count is right: P^depth terms overflow the budget at P = 2, one term per level at P = 1
    assert m["a"].evaluate("metropolis", P=1) == pytest.approx(1e-6)


def test_memoised_facts_agree_with_the_tree_walks():
    from tlop import ir
    from tlop.ir import memo

    mod = tlop.load("taulop/allreduce")
    for name in ("ring", "rabenseifner", "rda"):
        for node in ir.walk_unique(mod[name].ir.body):
            assert memo.free_vars(node) == ir.free_vars(node)
            assert memo.has_schedule(node) == ir.has_schedule(node)


def test_the_term_budget_counts_the_sends_of_stages():
    """pairwise at P = 16,384 in LogGP (≈2.7·10⁸ sends) ran for minutes without an error: the
    budget now counts every stage's sends and par/seq bindings and refuses it before it runs."""
    alg = tlop.load("loggp/alltoall")["pairwise"]
    with pytest.raises(TlopError) as e:
        alg.evaluate("localhost-example", mapping=tlop.sequential(8), P=16384, m=1024.0)
    msg = str(e.value)
    assert "reduction terms and schedule elements in all" in msg and "536,854,527" in msg
    assert code_of(e.value.diagnostics[0]) == "E042"
    # within the budget it still evaluates, and the count does not depend on the engine's path
    assert alg.evaluate("localhost-example", mapping=tlop.sequential(8), P=64, m=1024.0) > 0


def test_memory_error_is_a_diagnostic_not_a_traceback(monkeypatch, capsys):
    """A MemoryError anywhere in a command (a 250,000-term sum under a 4 GB limit ended in one)
    is reported as an error with a code and exit status 1."""
    import tlop.cli.main as cli_main

    def boom(args):
        raise MemoryError

    parser = cli_main.build_parser("check")
    real = parser.parse_args

    def parse(argv):
        ns = real(argv)
        ns.run = boom
        return ns

    monkeypatch.setattr(cli_main, "build_parser", lambda *_a, **_k: type("P", (), {"parse_args": staticmethod(parse),
                                                                                   "print_help": lambda self: None})())
    assert main(["check", "taulop/bcast"]) == 1
    err = capsys.readouterr().err
    assert "out of memory running 'tlop check'" in err and "E042" in err and "Traceback" not in err


# --- 7: the contention key of the kernels ------------------------------------------------------


def _summa_contention():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    import summa_contention as sc
    return sc


def test_summa_curve_per_contention_key(tmp_path):
    """docs/configurations.rst, "Which key": with `all` SUMMA grows 6.5× from M2 to M16 on
    metropolis, with the kernels' per-node keys 2.9× (000 §5: almost constant); the `all` variant
    differs from the stdlib module only in the platform module it imports."""
    sc = _summa_contention()
    rows = {n: c for n, _, c in sc.curve("metropolis", 128, ["M1", "M2", "M16"], tmp_path)}
    grow = {k: rows["M16"][k] / rows["M2"][k] for k in sc.KEYS}
    assert grow["all"] == pytest.approx(6.50, abs=0.01)
    assert grow["node/dst_node"] == pytest.approx(2.88, abs=0.01)
    # one node (M1): no network, one group either way
    assert rows["M1"]["all"] == pytest.approx(rows["M1"]["node/dst_node"], rel=1e-12)
    assert "contention all" in (tmp_path / "all" / "platform.tlop").read_text()
    stdlib = (sc.STDLIB / "kernels" / "platform.tlop").read_text()
    assert "channel shm within node contention node\n" in stdlib
    assert "channel net between nodes contention dst_node\n" in stdlib


def test_the_kernels_summa_curve_is_flat_from_m6_on(tmp_path):
    """The kernels' default keys (node/dst_node) keep SUMMA's cost within 1.4× from M6 (P = 18)
    to M16 (P = 47) on metropolis — 000 §5's "almost constant along the configurations" — where
    `all` doubles over the same layouts (bench/summa_contention.md)."""
    sc = _summa_contention()
    names = [f"M{i}" for i in range(6, 17)]
    costs = [c["node/dst_node"] for _, _, c in sc.curve("metropolis", 128, names, tmp_path, keys=("node/dst_node",))]
    assert max(costs) / min(costs) < 1.4, costs
    ends = sc.curve("metropolis", 128, ["M6", "M16"], tmp_path, keys=("all",))
    assert ends[1][2]["all"] / ends[0][2]["all"] > 1.9


def test_a_parallel_chain_decides_each_distinct_condition_once(monkeypatch):
    """``T‖T‖…‖T`` (n items) asked n² channel and size comparisons, each constant-folded: 800
    items took 8 s.  Equal conditions are now decided once, and asked once per pair of distinct
    expressions (tests/test_parallel_chain.py: 1,500 terms)."""
    from test_parallel_chain import count_decisions

    calls = count_decisions(monkeypatch)
    n = 200
    m = tlop.loads('import "taulop/platform.tlop"\nalgorithm a(m: bytes) = ' + " || ".join(["T[shm](m)"] * n))
    one = tlop.loads('import "taulop/platform.tlop"\nalgorithm a(m: bytes) = 200 || T[shm](m)')
    with pytest.warns(UserWarning):                                      # τ = 200 is past the table
        got = m["a"].evaluate("metropolis", m=1024.0)
    with pytest.warns(UserWarning):
        assert got == pytest.approx(one["a"].evaluate("metropolis", m=1024.0), rel=1e-12)
    assert calls["n"] <= 10, calls
