"""Hostile profiles and names (issue 14): numbers no double can hold, nesting deep enough to
exhaust a stack, an empty --profile, control characters in names and paths — each a clean error
naming the file and the field (or line:col), from the Python API and from ``tlop eval``."""

import json
import os
import sys

import pytest

import tlop
from tlop.cli.main import main
from tlop.runtime import profile as profile_mod
from tlop.runtime.diagnostics import Diagnostic, Source, Span, TlopError
from tlop.runtime.profile import as_profile, bundled_profiles, load_profile, profile_from_dict
from tlop.runtime.profile_schema import MAX_DEPTH
from tlop.runtime.text import has_control, printable


@pytest.fixture(scope="module")
def metropolis_text():
    return bundled_profiles()["metropolis"].read_text(encoding="utf-8")


def _write(tmp_path, text, name="p.json"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def _eval(capsys, profile_arg):
    rc = main(["eval", "taulop/bcast.tlop", "binomial_bcast", "P=2", "m=1", "--profile", str(profile_arg)])
    out = capsys.readouterr()
    return rc, out.out, out.err


def _both(capsys, path, expect):
    """The same clean error from tlop.load_profile and from tlop eval --profile."""
    with pytest.raises(TlopError) as err:
        tlop.load_profile(str(path))
    assert expect in str(err.value), str(err.value)[:500]
    rc, out, errtext = _eval(capsys, path)
    assert rc == 1 and expect in errtext and "Traceback" not in errtext, errtext[:500]
    return str(err.value)


@pytest.mark.parametrize("digits", [310, 400, 5000, 20000])
def test_huge_integer_in_a_table(tmp_path, capsys, metropolis_text, digits):
    data = json.loads(metropolis_text)
    data["tables"]["o"]["shm"]["values"][3] = "@@"
    text = json.dumps(data).replace('"@@"', "9" * digits)
    _both(capsys, _write(tmp_path, text),
          f"p.json: tables.o.shm.values[3]: expected a finite number, got an integer of {digits} digits")


@pytest.mark.parametrize("where", ["metadata", "fits", "scalar"])
def test_huge_integer_anywhere(tmp_path, capsys, metropolis_text, where):
    data = json.loads(metropolis_text)
    huge = "1" + "0" * 5000
    if where == "scalar":
        data["scalars"] = {"x": {"*": "@@"}}
    else:
        data[where] = {"deep": {"list": [1, 2, "@@"]}}
    text = json.dumps(data).replace('"@@"', huge)
    field = {"metadata": "metadata.deep.list[2]", "fits": "fits.deep.list[2]", "scalar": "scalars.x.*"}[where]
    _both(capsys, _write(tmp_path, text), f"p.json: {field}: ")


def test_huge_integers_from_python(metropolis_text):
    for bad in (10**309, -(10**400), 10**5000):
        data = json.loads(metropolis_text)
        data["scalars"] = {"x": {"*": bad}}
        with pytest.raises(TlopError, match=r"<api>: scalars\.x\.\*: expected a finite number, got an integer of"):
            profile_from_dict(data, "<api>")
        data = json.loads(metropolis_text)
        data["metadata"]["x"] = [bad]
        with pytest.raises(TlopError, match=r"metadata\.x\[0\]: an integer of \d+ digits is too large"):
            profile_from_dict(data, "<api>")
    data = json.loads(metropolis_text)
    data["scalars"] = {"x": {"*": 10**308}}                 # large, but a double
    assert profile_from_dict(data, "<api>").scalar("x") == 1e308


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 5000, 100000])
def test_deep_nesting_in_the_file(tmp_path, capsys, depth):
    text = '{"tlop_profile": 1, "name": "x",\n "metadata": {"a": ' + "[" * depth + "]" * depth + "}}"
    msg = _both(capsys, _write(tmp_path, text), f"JSON nested more than {MAX_DEPTH} levels deep")
    assert "p.json:2:" in msg                               # line:col of the first bracket too deep
    assert len(msg) < 1000                                  # the quoted line is cut to a window


def test_deep_nesting_inside_strings_is_not_nesting(tmp_path, metropolis_text):
    data = json.loads(metropolis_text)
    data["metadata"]["notes"] = "[" * 10000 + "{" * 10000
    prof = load_profile(_write(tmp_path, json.dumps(data)))
    assert prof.metadata["notes"].startswith("[[[")


def test_deep_nesting_from_python():
    v = []
    for _ in range(100000):
        v = [v]
    with pytest.raises(TlopError, match=f"nested more than {MAX_DEPTH} levels deep"):
        profile_from_dict({"tlop_profile": 1, "name": "x", "fits": {"a": v}}, "<api>")


def test_non_finite_and_non_json_values_from_python():
    with pytest.raises(TlopError, match=r"metadata\.x: NaN is not a JSON number"):
        profile_from_dict({"tlop_profile": 1, "name": "x", "metadata": {"x": float("nan")}}, "<api>")
    with pytest.raises(TlopError, match=r"metadata\.x: not a JSON value: set"):
        profile_from_dict({"tlop_profile": 1, "name": "x", "metadata": {"x": {1, 2}}}, "<api>")
    with pytest.raises(TlopError, match="a table or parameter name must be an identifier"):
        profile_from_dict({"tlop_profile": 1, "name": "x", "tables": {3: {}}}, "<api>")


# ----------------------------------------------------------------------------- names and paths

def test_empty_profile_is_an_error_not_the_default(capsys):
    for spec in ("", "  "):
        with pytest.raises(TlopError, match="an empty profile name"):
            load_profile(spec)
        with pytest.raises(TlopError, match="an empty profile name"):
            as_profile(spec)
        with pytest.raises(TlopError, match="an empty profile name"):
            tlop.load_profile(spec)
    rc, out, err = _eval(capsys, "")
    assert rc == 1 and out == "" and "an empty profile name" in err
    assert as_profile(None).name == "metropolis"           # no --profile at all: the default


def test_control_characters_in_a_profile_name_are_refused(tmp_path, capsys, metropolis_text):
    data = json.loads(metropolis_text)
    data["name"] = "evil\x1b]0;pwned\x07\nerror: forged"
    msg = _both(capsys, _write(tmp_path, json.dumps(data)), "name: must not contain control characters")
    assert "\x1b" not in msg and "\x07" not in msg
    assert "evil\\x1b]0;pwned\\x07\\nerror: forged" in msg


def test_unknown_names_and_paths_are_shown_escaped(tmp_path, capsys):
    rc, out, err = _eval(capsys, "bad\x1b[2Jname\nerror: forged")
    assert rc == 1 and "\x1b" not in err and "bad\\x1b[2Jname\\nerror: forged" in err
    assert err.count("\n") == 1                             # no forged second line
    d = tmp_path / "dir\x1bx"
    d.mkdir()
    p = _write(d, '{"tlop_profile": 1, "name": "x", "tables": 7}')
    with pytest.raises(TlopError) as e:
        load_profile(p)
    assert "dir\\x1bx" in str(e.value) and "\x1b" not in str(e.value)
    p = _write(d, '{"tlop_profile": 1, "name": }')          # a JSON error: file:line:col
    with pytest.raises(TlopError) as e:
        load_profile(p)
    assert "dir\\x1bx/p.json:1:" in str(e.value) and "\x1b" not in str(e.value)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_not_read(tmp_path):
    fifo = tmp_path / "p.json"
    os.mkfifo(fifo)
    with pytest.raises(TlopError, match="not a regular file"):
        load_profile(fifo)                                  # would block forever if opened


def test_oversized_file_is_refused_unread(tmp_path, monkeypatch, metropolis_text):
    monkeypatch.setattr(profile_mod, "MAX_PROFILE_BYTES", 1000)
    with pytest.raises(TlopError, match="more than the 0 MiB a profile may have"):
        load_profile(_write(tmp_path, metropolis_text))


# ----------------------------------------------------------------------------- the helper

def test_printable():
    assert printable("plain ascii, é, 日本") == "plain ascii, é, 日本"
    assert printable("a\x1b[31mb\r\n\t\x00\x7f\x9b") == "a\\x1b[31mb\\r\\n\\t\\x00\\x7f\\x9b"
    assert printable("x\u202ey\u2028") == "x\\u202ey\\u2028"
    assert printable("line\nnext\tcol\x1b", keep="\n\t") == "line\nnext\tcol\\x1b"
    assert printable(42) == "42"
    assert has_control("a\nb") and has_control("\u2066") and not has_control("naïve")


def test_diagnostics_escape_what_they_quote():
    src = Source("we\x1bird.tlop", "let x = \x1b[1m y\n")
    text = Diagnostic("unknown name '\x1b[1m'\nsecond line", Span(src, 1, 9, 1, 12)).render()
    assert "\x1b" not in text
    lines = text.splitlines()
    assert lines[0] == "we\\x1bird.tlop:1:9: error[E003]: unknown name '\\x1b[1m'" and lines[1] == "second line"
    assert lines[2] == "    let x = \\x1b[1m y"
    assert lines[3] == "            ^^^^^^^"                # under the escaped characters


def test_long_source_lines_are_quoted_around_the_span():
    src = Source("min.json", "x" * 5000 + "BAD" + "y" * 5000)
    lines = Diagnostic("here", Span(src, 1, 5001, 1, 5003)).render().splitlines()
    assert len(lines[1]) < 200 and lines[1].strip().startswith("…") and lines[1].endswith("…")
    assert lines[1][lines[2].index("^"):][:3] == "BAD" and lines[2].count("^") == 3
