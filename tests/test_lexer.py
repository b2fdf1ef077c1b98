"""The Pygments lexer for .tlop: every keyword of the grammar is highlighted, no error tokens on
the stdlib, and the Sphinx docs render ``code-block:: tlop`` with its token classes."""

import re
from pathlib import Path

import pytest
from pygments import highlight, lex
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.token import Error, Keyword, Name, Number, Operator

from tlop._antlr.TlopLexer import TlopLexer as AntlrLexer
from tlop.cli import lexer as L
from tlop.frontend.loader import STDLIB_DIR

ROOT = Path(__file__).parent.parent


def test_every_word_of_the_grammar_is_highlighted():
    words = {n.strip("'") for n in AntlrLexer.literalNames if re.fullmatch(r"'[a-z_]+'", n or "")}
    known = set(L.DECLARATIONS + L.KEYWORDS + L.SCHEDULE + L.WORD_OPERATORS + L.TYPES + L.BUILTINS)
    assert words and words <= known, words - known
    for w in words - {"max", "min"}:  # builtins are functions only when called
        (tok, text), *_ = [t for t in lex(w, L.TlopLexer()) if t[1].strip()]
        assert tok in Keyword or tok in Operator.Word, (w, tok)


def test_tokens_of_an_algorithm():
    toks = [(t, v) for t, v in lex("algorithm f(P: int >= 1, m: bytes) = max(1us, log2(P) * T[shm](m))",
                                   L.TlopLexer()) if v.strip()]
    assert (Keyword.Declaration, "algorithm") in toks and (Name.Function, "f") in toks
    assert (Keyword.Type, "int") in toks and (Name.Builtin, "log2") in toks and (Name.Builtin, "max") in toks
    assert (Number.Float, "1") in toks and (Keyword.Constant, "us") in toks


@pytest.mark.parametrize("path", sorted(STDLIB_DIR.rglob("*.tlop")), ids=lambda p: p.name)
def test_no_error_tokens_on_the_stdlib(path):
    assert not [v for t, v in lex(path.read_text(), L.TlopLexer()) if t in Error]


def test_registered_as_a_pygments_plugin():
    assert isinstance(get_lexer_by_name("tlop"), L.TlopLexer)


def test_the_docs_render_tlop_examples_highlighted(tmp_path):
    """A one-page Sphinx project with the docs' own setup() renders a tlop block with the
    lexer's token classes; and the language reference uses such blocks."""
    from sphinx.application import Sphinx

    (tmp_path / "conf.py").write_text(
        "import runpy\n"
        f"setup = runpy.run_path({str(ROOT / 'docs' / 'conf.py')!r})['setup']\n")
    (tmp_path / "index.rst").write_text("Example\n=======\n\n.. code-block:: tlop\n\n"
                                        "    algorithm ring(P: int >= 2, m: bytes) over map: mapping =\n"
                                        "        stages k in 0 .. P - 2 { send 0 -> 1 : 1KiB }\n")
    app = Sphinx(str(tmp_path), str(tmp_path), str(tmp_path / "_build"), str(tmp_path / "_doctrees"), "html",
                 status=None, warningiserror=True)
    app.build()
    html = (tmp_path / "_build" / "index.html").read_text()
    for cls, text in (("kd", "algorithm"), ("nf", "ring"), ("kt", "int"), ("kr", "stages"), ("kr", "send"),
                      ("kc", "KiB")):
        assert f'<span class="{cls}">{text}</span>' in html, (cls, text)
    assert (ROOT / "docs" / "language.rst").read_text().count(".. code-block:: tlop") >= 3


def test_html_of_a_stdlib_module():
    html = highlight((STDLIB_DIR / "taulop" / "bcast.tlop").read_text(), L.TlopLexer(), HtmlFormatter())
    assert '<span class="sd">///' in html and '<span class="kd">algorithm</span>' in html
