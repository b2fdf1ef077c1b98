"""`tlop sweep` and `tlop best` walk the grid in chunks: the output does not depend on the chunk
size, memory does not grow with the grid, and a grid over the limit is refused before any
point is generated (issue 14, item 9)."""

import gc
import tracemalloc

import pytest

import tlop.cli.grid as grid_mod
from tlop.cli.grid import Axis, Grid
from tlop.cli.main import main
from tlop.runtime.diagnostics import TlopError

CASES = {
    "sweep csv, a channel axis": ["sweep", "taulop/bcast", "binomial_bcast", "P=2..12", "m=1KiB..64KiB:x2",
                                  "c=shm,net", "--csv", "-"],
    "sweep table": ["sweep", "taulop/bcast", "binomial_bcast", "P=2..40:+3", "m=1KiB", "c=net"],
    "sweep matrix": ["sweep", "taulop/bcast", "linear_bcast", "P=2..30", "m=1..1MiB:x8", "c=shm"],
    "sweep table, three axes": ["sweep", "taulop/bcast", "linear_bcast", "P=2..9", "m=1,1KiB,1MiB", "c=shm,net"],
    "best csv": ["best", "taulop/bcast", "P=2..20", "m=1..1MiB:x4", "c=shm,net", "--csv", "-"],
    "best table": ["best", "taulop/bcast", "P=2..64:x2", "m=1..1MiB:x4", "c=shm,net"],
    "best matrix": ["best", "plogp/bcast", "P=1..33:+4", "m=1KiB..4MiB:x4", "seg=16KiB", "--profile",
                    "localhost-example"],
}


def output(argv, capsys, monkeypatch, chunk):
    monkeypatch.setattr(grid_mod, "CHUNK_POINTS", chunk)
    assert main(argv) == 0, capsys.readouterr().err
    return capsys.readouterr().out


@pytest.mark.parametrize("case", list(CASES))
def test_output_does_not_depend_on_the_chunk_size(case, capsys, monkeypatch):
    argv = CASES[case]
    whole = output(argv, capsys, monkeypatch, 1 << 20)
    assert len(whole.splitlines()) > 8
    for chunk in (1, 7, 64):
        assert output(argv, capsys, monkeypatch, chunk) == whole, chunk


def test_chunks_follow_itertools_product_order():
    import itertools

    axes = {"a": Axis([1.0, 2.0, 3.0]), "b": Axis(lo=0.0, inc=0.5, n=4), "c": Axis([7.0, 9.0])}
    g = Grid(axes)
    want = list(itertools.product([1.0, 2.0, 3.0], [0.0, 0.5, 1.0, 1.5], [7.0, 9.0]))
    for chunk in (1, 5, 24, 100):
        got = []
        for start, cols in g.chunks(chunk):
            assert start == len(got)
            got += list(zip(cols["a"].tolist(), cols["b"].tolist(), cols["c"].tolist()))
        assert got == want
    assert [start for start, _ in Grid({}).chunks(3)] == [0]   # no parameter: one point


def test_an_arithmetic_range_is_the_same_floats_as_before_and_is_not_stored():
    a = Axis(lo=0.1, inc=0.3, n=10**12)   # a trillion points cost nothing until taken
    assert a[10**11] == 0.1 + 10**11 * 0.3
    assert list(Axis(lo=0.1, inc=0.3, n=50)) == [0.1 + i * 0.3 for i in range(50)]


def test_a_huge_grid_is_refused_before_any_point_is_generated(capsys, monkeypatch):
    def no_points(*a, **k):
        raise AssertionError("a point was generated")
    monkeypatch.setattr(Axis, "take", no_points)
    rc = main(["sweep", "taulop/bcast", "binomial_bcast", "P=1..1e6", "m=1..1e6", "c=shm"])
    assert rc == 1
    err = capsys.readouterr().err
    assert "the grid has 1,000,000,000,000 points; at most 10,000,000 (--max-points N evaluates more" in err


def test_max_points_is_a_limit_both_ways(capsys):
    base = ["sweep", "taulop/bcast", "binomial_bcast", "P=2..16", "m=1KiB,2KiB", "c=shm"]
    assert main(base + ["--max-points", "29"]) == 1
    assert "the grid has 30 points; at most 29" in capsys.readouterr().err
    assert main(["sweep", "taulop/bcast", "binomial_bcast", "P=2..100", "m=1KiB", "c=shm", "--max-points", "30"]) == 1
    assert "P=2..100: 99 points; at most 30" in capsys.readouterr().err   # one range alone
    assert main(base + ["--max-points", "30", "--csv", "-"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 31
    for bad in ("0", "-3", "nan", "many"):
        assert main(base + ["--max-points", bad]) == 2
        assert "expected a positive number of points" in capsys.readouterr().err


def test_the_grid_limit_is_checked_from_the_axes_lengths():
    with pytest.raises(TlopError, match="the grid has 12 points; at most 11"):
        Grid({"a": Axis(lo=0, inc=1, n=3), "b": Axis(lo=0, inc=1, n=4)}, max_points=11)


def _peak(argv, capsys, monkeypatch, tmp_path):
    """The most memory held (Python allocations since the command started) when a point is
    evaluated: the loading of the module and profile, freed by then, is not counted."""
    import tlop.cli.cmd_best as best_cmd
    import tlop.cli.cmd_sweep as sweep_cmd

    monkeypatch.setattr(grid_mod, "CHUNK_POINTS", 1000)
    held = []
    evaluate = sweep_cmd._evaluate_columns

    def measured(*a, **k):
        held.append(tracemalloc.get_traced_memory()[0])
        return evaluate(*a, **k)
    monkeypatch.setattr(sweep_cmd, "_evaluate_columns", measured)
    monkeypatch.setattr(best_cmd, "_evaluate_columns", measured)
    gc.collect()
    tracemalloc.start()
    try:
        assert main(argv + ["--csv", str(tmp_path / "out.csv")]) == 0, capsys.readouterr().err
    finally:
        tracemalloc.stop()
    capsys.readouterr()
    return max(held)


@pytest.mark.parametrize("command", [["sweep", "taulop/bcast", "binomial_bcast", "c=shm"],
                                     ["best", "taulop/bcast", "c=shm"]])
def test_memory_does_not_grow_with_the_grid(command, capsys, monkeypatch, tmp_path):
    """The memory held while evaluating 40,000 points is about that of 4,000 (one chunk of
    1,000 points at a time); the grid of 36,000 more points would take megabytes."""
    _peak(command + ["P=2", "m=1..1000"], capsys, monkeypatch, tmp_path)   # compiles, fills caches
    small = _peak(command + ["P=2..5", "m=1..1000"], capsys, monkeypatch, tmp_path)
    big = _peak(command + ["P=2..41", "m=1..1000"], capsys, monkeypatch, tmp_path)
    assert (tmp_path / "out.csv").read_text().count("\n") == 40_001
    assert big < small + 1e6, (small, big)
