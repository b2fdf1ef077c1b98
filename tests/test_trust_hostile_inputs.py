"""Hostile inputs end in located messages, never tracebacks or terminal control (issue 22 items
13, 14, 15): a lone surrogate in a profile, a deeply nested expression given to the API's
``compile``, a doc comment carrying ESC/OSC sequences or U+202E, and line ends the lexer does not
count (CR alone, U+2028, NEL, VT, FF inside comments)."""

from __future__ import annotations

import json

import pytest

import tlop
from tlop.cli.main import main
from tlop.runtime.diagnostics import TlopError
from tlop.runtime.errors import ProfileError
from tlop.runtime.profile import load_profile, profile_from_dict


def _profile(name="p", machine="m"):
    return {"tlop_profile": 1, "name": name, "metadata": {"machine": machine},
            "channels": {"shm": {"transmission": "shm"}}, "tables": {}}


@pytest.mark.parametrize("where", ["name", "machine"])
def test_a_lone_surrogate_in_a_profile_is_refused(tmp_path, capsys, where):
    data = _profile(**{where: "bad\ud800"})
    with pytest.raises(ProfileError, match="lone surrogate"):
        profile_from_dict(data)
    f = tmp_path / "p.json"
    f.write_text(json.dumps(data), encoding="utf-8")  # json.dumps writes the escape \ud800
    assert main(["profiles", str(f)]) == 1
    assert main(["eval", "taulop/bcast", "binomial_bcast", "P=2", "m=1", "--profile", str(f), "--json"]) == 1
    out, err = capsys.readouterr()
    assert "lone surrogate" in err + out and "Traceback" not in err


def test_api_compile_of_a_deep_chain_is_not_a_recursion_error():
    src = 'import "taulop/platform.tlop"\nalgorithm a(x: real) = (' + "x ^ " * 1400 + "x) * 1s\n"
    h = tlop.loads(src)["a"]
    try:
        ev = h.compile()
    except TlopError:
        return  # refused with a message: fine
    assert ev(x=1.0) == h.evaluate(x=1.0)


def test_show_escapes_a_doc_comments_terminal_sequences(tmp_path, capsys):
    f = tmp_path / "esc.tlop"
    f.write_text('import "taulop/platform.tlop"\n/// evil \x1b]0;pwned\x07 and \u202e rtl \x1b[31mred\n'
                 "algorithm a(x: int) = x * 1s\n", encoding="utf-8")
    assert main(["show", str(f)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out and "\x07" not in out
    assert "\\x1b]0;pwned\\x07" in out and "\\u202e" in out


@pytest.mark.parametrize("sep", ["\u2028", "\x85", "\x0b", "\x0c"])
def test_a_diagnostic_quotes_the_line_the_lexer_counts(tmp_path, capsys, sep):
    f = tmp_path / "ls.tlop"
    f.write_text(f'import "taulop/platform.tlop"\n# comment {sep} more\nalgorithm a(x: int) = x * 1s + y\n',
                 encoding="utf-8")
    assert main(["check", str(f)]) == 1
    err = capsys.readouterr().err
    assert ":3:32: error" in err and "algorithm a(x: int) = x * 1s + y" in err


def test_cr_only_line_ends_quote_the_located_text(tmp_path, capsys):
    f = tmp_path / "cr.tlop"
    f.write_bytes(b'import "taulop/platform.tlop"\r# c\ralgorithm a(x: int) = x * 1s + y\r')
    assert main(["check", str(f)]) == 1
    err = capsys.readouterr().err
    lines = err.splitlines()
    quoted, caret = lines[1], lines[2]
    assert quoted.rstrip().endswith("+ y") and caret.index("^") == len(quoted.rstrip()) - 1


@pytest.mark.parametrize("bad", ["datetime", "timedelta", "masked"])
def test_api_refuses_dates_and_masked_values(bad):
    import numpy as np

    h = tlop.load("taulop/bcast")["binomial_bcast"]
    P = {"datetime": np.datetime64("2020-01-01"), "timedelta": np.timedelta64(3),
         "masked": np.ma.masked_array([2, 4], [False, True])}[bad]
    with pytest.raises(TlopError, match="argument P"):
        h.evaluate(P=P, m=1024)


def test_api_takes_an_unmasked_masked_array_as_its_data():
    import numpy as np

    h = tlop.load("taulop/bcast")["binomial_bcast"]
    got = h.evaluate(P=np.ma.masked_array([2, 4], [False, False]), m=1024)
    assert list(got) == list(h.evaluate(P=np.array([2, 4]), m=1024))
