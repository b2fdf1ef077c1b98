"""The grammar as its own unit: the committed parser is fresh, valid snippets parse to the
expected trees, invalid ones fail with a located error, and nothing is printed by ANTLR."""

import hashlib
from pathlib import Path

import pytest

from tlop.frontend import ast as A
from tlop.runtime.diagnostics import TlopError
from tlop.frontend.parse import parse_text

ROOT = Path(__file__).resolve().parent.parent


def test_generated_parser_matches_grammar():
    """Regenerate with grammar/generate.sh when this fails (needs Java and Maven)."""
    recorded = (ROOT / "grammar" / "_antlr" / "GRAMMAR_SHA256").read_text().strip()
    actual = hashlib.sha256((ROOT / "grammar" / "Tlop.g4").read_bytes()).hexdigest()
    assert recorded == actual, "grammar/_antlr is stale: run grammar/generate.sh"


def test_one_parser_no_native_sources():
    """One front end: the ANTLR grammar and its Python target, no second parser in another language."""
    assert not (ROOT / "grammar" / "native").exists()
    assert not (ROOT / "grammar" / "_antlr_go").exists()
    assert not list((ROOT / "grammar").rglob("*.go")) and not list((ROOT / "grammar").rglob("*.c"))


def test_generated_files_are_marked():
    generated = list((ROOT / "grammar" / "_antlr").glob("Tlop*.py"))
    assert len(generated) == 3
    for f in generated:
        assert "generated, do not edit" in f.read_text().splitlines()[0]


def expr_of(src):
    m = parse_text(f"algorithm a() = {src}")
    return m.decls[0].body


@pytest.mark.parametrize("src, expected", [
    ("1 + 2 * 3", A.Binary("+", A.Number(1), A.Binary("*", A.Number(2), A.Number(3)))),
    ("2 ^ 3 ^ 2", A.Binary("^", A.Number(2), A.Binary("^", A.Number(3), A.Number(2)))),
    ("-2 ^ 2", A.Unary("-", A.Binary("^", A.Number(2), A.Number(2)))),
    ("a - b - c", A.Binary("-", A.Binary("-", A.Name("a"), A.Name("b")), A.Name("c"))),
    ("2 || T[c](m) + x", A.Binary("+", A.Binary("||", A.Number(2),
                                                 A.Call("T", A.Name("c"), (A.Arg(None, A.Name("m")),))),
                                  A.Name("x"))),
    ("2 * a || b", A.Binary("||", A.Binary("*", A.Number(2), A.Name("a")), A.Name("b"))),
    ("64KiB", A.Number(64, "KiB")),
    ("1e6B", A.Number(1e6, "B")),
    ("1.5ms", A.Number(1.5, "ms")),
    ("max(a, b)", A.Call("max", None, (A.Arg(None, A.Name("a")), A.Arg(None, A.Name("b"))))),
    ("max i in 0 .. 3: i", A.Reduction("max", "i", A.Number(0), A.Number(3), A.Name("i"))),
    ("not a < b and c", A.Binary("and", A.Unary("not", A.Binary("<", A.Name("a"), A.Name("b"))), A.Name("c"))),
    ("f(x, y = 2)", A.Call("f", None, (A.Arg(None, A.Name("x")), A.Arg("y", A.Number(2))))),
    ("alpha[net]", A.Indexed("alpha", A.Name("net"))),
    ("if a then b else c + d", A.IfThen(A.Name("a"), A.Name("b"), A.Binary("+", A.Name("c"), A.Name("d")))),
])
def test_expression_trees(src, expected):
    assert expr_of(src) == expected


@pytest.mark.parametrize("bad", [
    "algorithm a() = 1 +",
    "algorithm a( = 1",
    "algorithm a() = (1",
    "algorithm a() = 1 < 2 < 3",
    "table t(m: bytes)",
    "algorithm stages() = 1",      # reserved word of the schedule layer
    "algorithm a() = sum i 0 .. 1: i",
    "import platform",
    "algorithm a() = 0 .. 1",
    "channel",
])
def test_invalid_programs_fail_with_location(bad, capsys):
    with pytest.raises(TlopError) as e:
        parse_text(bad, "bad.tlop")
    assert e.value.span is not None and e.value.span.line >= 1
    assert capsys.readouterr().err == ""  # ANTLR prints nothing


def test_doc_comments_are_kept():
    m = parse_text("/// first line\n/// second\nalgorithm a() = 1us\n")
    assert m.decls[0].docs == ("first line", "second")


def test_version_names_the_one_parser(capsys):
    from tlop.cli.main import main

    assert main(["--version"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1] == "parser: ANTLR 4.13.2 (Python runtime), generated from grammar/Tlop.g4"
    assert "native" not in "\n".join(out).lower() and "go" not in out[1].lower().split()
