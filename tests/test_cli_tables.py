"""Size ranges need a step; wide grids fit the terminal (transposed, or one row per point)."""

import sys

import pytest

from tlop.cli import table
from tlop.cli.main import main
from tlop.cli.ranges import MAX_UNSTEPPED_SIZES, parse_range


def test_a_size_range_without_a_step_is_not_silent(capsys):
    assert main(["sweep", "taulop/scatter", "binomial_scatter", "P=8", "m=1MiB", "seg=1..4KiB", "--csv", "-"]) == 0
    cap = capsys.readouterr()
    assert cap.err == ("tlop: warning: seg=1..4KiB: a size range without a step goes up by 1 B, 4,096 points; "
                       "give a step if that is not what you meant, e.g. seg=1..4KiB:x2 (doubling) or "
                       "seg=1..4KiB:+1KiB\n")
    assert cap.out.count("\n") == 4097
    assert main(["sweep", "taulop/scatter", "binomial_scatter", "P=8", "m=1MiB", "seg=1..4KiB:+1", "--csv", "-"]) == 0
    assert capsys.readouterr().err == ""  # an explicit step says it is meant
    assert len(parse_range("S", "1..4KiB:x2", "bytes", None)) == 13
    assert len(parse_range("S", f"1..{MAX_UNSTEPPED_SIZES}", "bytes", None)) == MAX_UNSTEPPED_SIZES
    assert len(parse_range("P", "1..1000", "int", None)) == 1000  # counts step by one as written


class Tty:
    """Standard output as a terminal of a given width."""

    def __init__(self, real):
        self.real = real

    def isatty(self):
        return True

    def __getattr__(self, name):
        return getattr(self.real, name)


@pytest.fixture
def terminal(monkeypatch):
    def set_width(columns):
        monkeypatch.setenv("COLUMNS", str(columns))
        monkeypatch.setenv("LINES", "1000")  # tall: these tables fit without the pager
        monkeypatch.setattr(sys, "stdout", Tty(sys.stdout))
    return set_width


ARGV = ["sweep", "taulop/bcast", "binomial_bcast", "P=2..8:x2", "m=1KiB..4MiB:x4", "--engine", "interp"]


def test_a_matrix_that_fits_is_printed_as_is(terminal, capsys):
    terminal(120)
    assert main(ARGV) == 0
    assert capsys.readouterr().out.splitlines()[1].split()[:3] == ["P", "\\", "m"]


def test_a_matrix_too_wide_is_transposed(terminal, capsys):
    terminal(40)
    assert main(ARGV) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["m", "\\", "P", "2", "4", "8"]
    assert all(len(line) <= 40 for line in lines[1:])


def test_a_matrix_too_wide_either_way_becomes_rows(terminal, capsys):
    terminal(30)
    assert main(ARGV) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["P", "m", "cost"] and len(lines) == 2 + 3 * 7


def test_best_matrix_fits_too(terminal, capsys):
    terminal(60)
    assert main(["best", "taulop/bcast", "P=2..8:x2", "m=1KiB..4MiB:x4", "--engine", "interp"]) == 0
    lines = capsys.readouterr().out.splitlines()[4:]  # the title and the algorithms not compared, then the table
    assert lines[0].split()[:3] == ["m", "\\", "P"] and all(len(line) <= 60 for line in lines)


def test_not_a_terminal_takes_any_width(capsys):
    assert table.terminal_width() is None  # pytest captures standard output
    assert table.matrix_layout("a", "b", {"a": [1], "b": list(range(500))}, lambda k, v: str(v), 8, 500) == "matrix"
    assert table.matrix_layout("a", "b", {"a": [1], "b": list(range(500))}, lambda k, v: str(v), 8, 500,
                               width=80) == "transposed"
    assert table.matrix_layout("a", "b", {"a": list(range(50)), "b": list(range(500))}, lambda k, v: str(v), 8,
                               25_000, width=80) is None


def test_a_long_table_suggests_csv(capsys):
    assert main(["sweep", "taulop/bcast", "binomial_bcast", "P=2..300", "m=1KiB", "--engine", "interp"]) == 0
    assert "299 rows; --csv OUT writes the grid as CSV" in capsys.readouterr().err
