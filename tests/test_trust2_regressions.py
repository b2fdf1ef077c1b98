"""Regressions of issue 22 (trust), items 11, 15, 8 and 12: one test per reproducer.

* 11: ``show --mapping`` of a LogGP-family (dataflow) schedule printed τ-Lop's closed form.
* 15: 1,000 nested parentheses were rejected at 1:1 (the paren is on line 2) while 3,000 nested
  negations were accepted; a too-long import path was E060 without a location; ``tlop check`` of
  a FIFO said "no such file".
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
