"""A table taller than the terminal goes through a pager, as git's output does; never a pipe.

The pager here is a real program (a Python one-liner writing what it reads to a file), started
by tlop through the shell as ``$TLOP_PAGER`` would be; the terminal is a stand-in whose
``isatty()`` is true, its size given by ``COLUMNS`` and ``LINES``.
"""

import io
import shlex
import sys

import pytest

from tlop.cli.main import main
from tlop.cli.pager import pager_command

TALL = ["sweep", "taulop/bcast", "binomial_bcast", "P=2..64", "m=1KiB", "--engine", "interp"]  # 63 rows
SHORT = ["sweep", "taulop/bcast", "binomial_bcast", "P=2..8:x2", "m=1KiB", "--engine", "interp"]


class Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture
def term(monkeypatch):
    """A 100 × 30 terminal for :func:`run` to print on."""
    out = Terminal()
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("LINES", "30")
    monkeypatch.delenv("PAGER", raising=False)
    return out


def run(out, argv):
    """``tlop ARGV`` with standard output on ``out`` (set here, not in a fixture: pytest's
    capture replaces sys.stdout when the test starts)."""
    saved, sys.stdout = sys.stdout, out
    try:
        return main(argv)
    finally:
        sys.stdout = saved


def _pager_to(monkeypatch, path, tail=""):
    code = f"import sys; open({str(path)!r}, 'w').write(sys.stdin.read()){tail}"
    monkeypatch.setenv("TLOP_PAGER", f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}")


def test_a_table_taller_than_the_terminal_is_paged(term, monkeypatch, tmp_path, capsys):
    paged = tmp_path / "paged.txt"
    _pager_to(monkeypatch, paged)
    assert run(term, TALL) == 0
    assert term.getvalue() == ""                       # nothing went round the pager
    text = paged.read_text()
    lines = text.splitlines()
    assert lines[0] == "binomial_bcast on metropolis (interp)" and lines[1].split() == ["P", "m", "cost"]
    assert len(lines) == 2 + 63 and lines[-1].split()[:2] == ["64", "1KiB"]


def test_the_paged_table_is_the_unpaged_one(term, monkeypatch, tmp_path, capsys):
    paged = tmp_path / "paged.txt"
    _pager_to(monkeypatch, paged)
    assert run(term, TALL) == 0
    pipe = io.StringIO()                                # a pipe: printed directly
    assert run(pipe, TALL) == 0
    assert pipe.getvalue() == paged.read_text()


def test_a_table_that_fits_is_not_paged(term, monkeypatch, tmp_path):
    paged = tmp_path / "paged.txt"
    _pager_to(monkeypatch, paged)
    assert run(term, SHORT) == 0
    assert not paged.exists() and "binomial_bcast on metropolis" in term.getvalue()


def test_a_pipe_or_a_file_is_never_paged(monkeypatch, tmp_path, capsys):
    paged = tmp_path / "paged.txt"
    _pager_to(monkeypatch, paged)
    monkeypatch.setenv("LINES", "5")
    assert main(TALL) == 0                              # capsys: not a terminal
    assert not paged.exists() and len(capsys.readouterr().out.splitlines()) == 2 + 63


@pytest.mark.parametrize("how", ["--no-pager", "TLOP_PAGER=", "TLOP_PAGER=cat", "PAGER=cat"])
def test_the_pager_can_be_turned_off(term, monkeypatch, tmp_path, how):
    paged = tmp_path / "paged.txt"
    _pager_to(monkeypatch, paged)
    argv = list(TALL)
    if how == "--no-pager":
        argv.append(how)
    else:
        var, value = how.split("=")
        monkeypatch.delenv("TLOP_PAGER")
        monkeypatch.setenv(var, value)
    assert run(term, argv) == 0
    assert not paged.exists() and len(term.getvalue().splitlines()) == 2 + 63


def test_pager_choice(monkeypatch):
    assert pager_command({"TLOP_PAGER": "most", "PAGER": "less"}) == "most"
    assert pager_command({"PAGER": "more"}) == "more"
    assert pager_command({"TLOP_PAGER": "", "PAGER": "more"}) is None
    assert pager_command({"PAGER": " cat "}) is None


def test_notes_wait_for_the_pager_to_end(term, monkeypatch, tmp_path, capsys):
    """The '--csv' note of a long table is printed after the pager, not drawn over it."""
    paged = tmp_path / "paged.txt"
    _pager_to(monkeypatch, paged)
    argv = ["sweep", "taulop/bcast", "binomial_bcast", "P=2..300", "m=1KiB", "--engine", "interp"]
    assert run(term, argv) == 0
    assert "tlop: note: 299 rows" in capsys.readouterr().err
    assert "note" not in paged.read_text()


def test_quitting_the_pager_early_ends_quietly(term, monkeypatch, tmp_path, capsys):
    """A pager quit after the first lines (here one that reads 100 bytes and exits)."""
    code = "import sys; sys.stdin.buffer.read(100)"
    monkeypatch.setenv("TLOP_PAGER", f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}")
    argv = ["sweep", "taulop/bcast", "binomial_bcast", "P=2..20000", "m=1KiB", "--engine", "interp"]
    assert run(term, argv) == 0
    assert "Traceback" not in capsys.readouterr().err


def test_best_is_paged_too(term, monkeypatch, tmp_path):
    paged = tmp_path / "paged.txt"
    _pager_to(monkeypatch, paged)
    argv = ["best", "taulop/bcast", "P=2..64", "m=1KiB", "--engine", "interp"]
    assert run(term, argv) == 0
    text = paged.read_text()
    assert text.startswith("cheapest of ") and term.getvalue() == ""
    assert len([ln for ln in text.splitlines() if ln.split()[:1] == ["64"]]) == 1


def test_a_pager_that_cannot_be_found_is_a_warning(term, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("TLOP_PAGER", str(tmp_path / "no-such-pager") + " -R")
    assert run(term, TALL) == 0
    assert len(term.getvalue().splitlines()) == 2 + 63
    err = capsys.readouterr().err
    assert "tlop: warning: the pager" in err and "no-such-pager -R' was not found" in err
